"""The evaluation harness end to end on three questions, the RealTime QA loader and scorer, the
shipped files fitting writes, and the progress every command shows."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest
from conftest import shipped_into

from eval.__main__ import main
from eval.paths import RESULTS, MissingData
from eval.realtimeqa import ask as rtqa
from eval.realtimeqa import data
from eval.realtimeqa import summary as rtqa_summary
from eval.realtimeqa.cache import CachingEmbedder
from qa import QA, Answer, Passage, Trace

try:
    HAVE_RTQA = (data.rtqa_dir() / "questions.jsonl.gz").exists()
except MissingData:
    HAVE_RTQA = False

KEYS = ["article_hit@1", "article_hit@3", "article_hit@5", "article_mrr@10", "article_ndcg@10",
        "evidence_hit@1", "evidence_hit@5", "evidence_mrr@10", "evidence_ndcg@10", "contains", "f1",
        "citation_precision", "citation_recall", "refusal_precision", "refusal_recall", "false_refusal_rate"]


# Three questions the articles answer in one sentence each, and four they do not cover.
SMOKE = ["q001", "q002", "q003", "q061", "q062", "q063", "q064"]


@pytest.mark.slow
def test_harness_smoke(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture,
                       model_cache: Path) -> None:
    from eval.quality import calibrate, harness

    rows = {q["id"]: q for q in harness.load_questions()}
    monkeypatch.setattr(harness, "load_questions", lambda path=None, limit=None: [rows[i] for i in SMOKE])
    monkeypatch.setenv("QA_EVAL_OUT", str(tmp_path))
    (tmp_path / "realtimeqa.json").write_text((RESULTS / "realtimeqa.json").read_text())
    published = {p: p.stat().st_mtime_ns for p in RESULTS.glob("*.json")}
    assert main(["quality", "--modes", "hybrid,bm25", "--calibrate"]) == 0
    assert {p: p.stat().st_mtime_ns for p in RESULTS.glob("*.json")} == published  # not --publish
    result = json.loads((tmp_path / "results.json").read_text())
    hybrid, bm25 = result["summary"]["hybrid"], result["summary"]["bm25"]
    # The known outcome: each answerable question is answered from its gold sentence, found in the
    # top five passages, and each question the articles do not cover is refused.
    assert hybrid["questions"] == 7
    for key in ("article_hit@5", "evidence_hit@5", "contains", "citation_precision", "citation_recall",
                "refusal_precision", "refusal_recall"):
        assert hybrid[key] == 1.0, key
    assert hybrid["false_refusal_rate"] == 0.0
    assert bm25["article_hit@5"] == 1.0 and bm25["refusal_recall"] == 1.0
    # The summary is the mean of the answerable questions' records, mode by mode.
    for mode, summary in result["summary"].items():
        answerable = [r for r in result["records"][mode] if r["answerable"]]
        assert len(answerable) == 3 and [r["id"] for r in result["records"][mode]] == SMOKE
        for key in KEYS[:13]:
            assert summary[key] == pytest.approx(sum(r[key] for r in answerable) / 3), (mode, key)
        assert summary["latency_p95_ms"] >= summary["latency_p50_ms"] > 0
    # --calibrate prints the thresholds fitted on these records; they refuse exactly the four.
    best = result["calibration"]["best"]
    assert best == calibrate.best(result["records"]["hybrid"])
    assert best["refusal_recall"] == 1.0 and best["false_refusal_rate"] == 0.0
    assert (f"min_evidence = **{best['min_evidence']}**, hinge_evidence = **{best['hinge_evidence']}**"
            in capsys.readouterr().out)
    report = (tmp_path / "report.md").read_text()
    assert report.startswith("# Evaluation report")
    assert "## RealTime QA 2022" in report  # the report keeps every section whose results exist
    assert (tmp_path / "hit_at_k.png").stat().st_size > 0

    # The loss table of the same questions, with the same run's answer figures beside it.
    assert main(["loss", "--set", "handwritten"]) == 0
    loss = json.loads((tmp_path / "loss_handwritten.json").read_text())
    assert sorted(loss["questions"]) == SMOKE[:3] and loss["summary"]["questions"] == 3
    assert sum(loss["summary"]["buckets"].values()) == pytest.approx(1.0, abs=0.01)
    # Each answer sits in its gold sentence, retrieved in the top five: none is lost before retrieval.
    assert not {"not in the articles", "not retrieved"} & set(loss["questions"].values())
    assert loss["metrics"]["contains"] == 1.0 and 0 <= loss["metrics"]["em"] <= 1
    assert loss["metrics"]["refusal_recall"] == 1.0 and loss["metrics"]["latency_p50_ms"] > 0


def test_calibration_picks_the_loosest_thresholds_that_refuse_what_it_should() -> None:
    from eval.quality import calibrate

    def record(evidence: float, answerable: bool, missing: bool = False, lacks: bool = False) -> dict:
        return {"evidence_score": evidence, "answerable": answerable, "missing": missing, "lacks_kind": lacks}

    records = [record(e, True) for e in (0.50, 0.60, 0.70, 0.80)]
    records += [record(0.20, False), record(0.30, False),  # weak evidence: min_evidence refuses them
                record(0.55, False, missing=True),  # names something absent: hinge_evidence refuses it
                record(0.45, False, lacks=True)]  # asks for a count none holds: refused at any threshold
    # Between 0.30 and 0.50 the grid's loosest cut is 0.375; above 0.55 (and below 0.60) 0.575.
    assert calibrate.best(records) == {"min_evidence": 0.375, "hinge_evidence": 0.575, "refusal_recall": 1.0,
                                       "false_refusal_rate": 0.0, "balanced_accuracy": 1.0}
    # At most 5% false refusals: an answerable question below every refusal keeps the threshold under it.
    records.append(record(0.10, True))
    fitted = calibrate.best(records)
    assert fitted["false_refusal_rate"] == 0.0 and fitted["min_evidence"] < 0.10
    assert fitted["refusal_recall"] == 0.5  # the two weak-evidence refusals are given up, not the answer
    folds = calibrate.cross_validate(records)
    assert folds["folds"] == calibrate.FOLDS and 0.0 <= folds["refusal_recall"] <= 1.0


def test_report_publish_rewrites_the_figures_the_docs_quote(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                           capsys: pytest.CaptureFixture) -> None:
    from eval import paths
    from eval.report import figures

    results = tmp_path / "results"
    shutil.copytree(RESULTS, results, ignore=shutil.ignore_patterns("cache"))
    data = json.loads((results / "results.json").read_text())
    data["summary"]["hybrid"]["contains"] = 0.1234  # a new measurement of answer containment
    (results / "results.json").write_text(json.dumps(data))
    (tmp_path / "docs").mkdir()
    copies = {doc: tmp_path / "docs" / doc.name for doc in figures.DOCS}
    for doc, copy in copies.items():
        shutil.copy(doc, copy)
    before = {doc: doc.read_text() for doc in figures.DOCS}
    monkeypatch.setattr(paths, "RESULTS", results)
    monkeypatch.setattr(figures, "DOCS", list(copies.values()))
    assert main(["report", "--publish"]) == 0
    changed = [copy for doc, copy in copies.items() if copy.read_text() != before[doc]]
    assert changed and all("answer containment | 0.123 |" in copy.read_text() for copy in changed)
    err = capsys.readouterr().err
    assert all(f"updated the figures in {copy}" in err for copy in changed)
    assert (results / "report.md").read_text().startswith("# Evaluation report")
    assert {doc: doc.read_text() for doc in copies} == before  # the real docs are untouched


@pytest.mark.slow
@pytest.mark.skipif(not HAVE_RTQA, reason="no RealTime QA data")
def test_rtqa_two_questions(tmp_path: Path, real_qa, model_cache: Path) -> None:
    questions = data.load(limit=2)
    assert len(questions) == 2 and all(q["gold"] in q["choices"] for q in questions)
    # Two short articles each keep the test fast; the full articles are for `python -m eval`.
    questions = [{**q, "articles": [a[:2000] for a in q["articles"][:2]],
                  "docs": [{**d, "text": d["text"][:2000]} for d in q["docs"][:2]]} for q in questions]
    # Known from the text: Squid Game is in no kept article (only in a later quiz); the common
    # charger is in the first, as "European regulators".
    assert not any("Squid Game" in a for a in questions[0]["articles"])
    assert "European regulators say that Apple" in questions[1]["articles"][0]
    embedder = CachingEmbedder(real_qa.embedder, tmp_path / "cache.sqlite")
    indexes = tmp_path / "indexes"  # each question's own index, kept between runs (in the cache)
    records = [rtqa.ask(q, embedder, min_evidence=0.42, root=indexes) for q in questions]
    squid, charger = records
    assert not squid["answered"] and "Squid" not in squid["first_cited"]
    assert charger["answered"] and "single common charging standard" in charger["first_cited"]
    assert charger["mc"] == charger["mc_right"] == 0  # Europe, weighed by the language model
    assert len(charger["mc_p"]) == len(questions[1]["choices"])
    assert sum(charger["mc_p"]) == pytest.approx(1, abs=1e-3)
    # What the model read and wrote, from the answer's trace: its tokens and calibration features;
    # its sentences say "European", never the gold token "Europe".
    assert charger["lm"]["prompt_tokens"] > 0 and "logprob" in charger["lm"] and not charger["gold_given"]
    # The model read, so the span reader did not: no span of its own is recorded.
    assert charger["reader"] == "lm" and charger["span_short"] is None and "mc_spans" not in charger
    result = rtqa_summary.summarize(records)
    assert result["scored"] == 2 and result["answered_at_threshold"] == 0.5
    assert result["answer_bearing"] == 0.0  # "European" is not the gold token "Europe"
    assert result["mc_accuracy"] == (1 + (squid["mc"] == squid["mc_right"])) / 2
    assert set(result["policies"]) == set(rtqa_summary.predictions(charger, 0.0))
    # A second pass embeds nothing: every vector comes from the cache.
    before = embedder.misses
    rtqa.ask(questions[0], embedder, min_evidence=0.42, root=indexes)
    assert embedder.misses == before
    # A question with no articles: not answered, its options weighed with nothing to read.
    blind = rtqa.ask({**questions[1], "articles": [], "docs": []}, embedder, min_evidence=0.42, root=indexes)
    assert not blind["answered"] and blind["short"] is None and blind["lm"] == {}
    assert len(blind["mc_p"]) == len(questions[1]["choices"]) and blind["mc"] == int(np.argmax(blind["mc_p"]))


def test_a_record_is_read_off_the_answer_and_its_trace() -> None:
    """What a RealTime QA record and the harness keep of an answer comes from QA.answer's Answer."""
    from eval.quality.harness import score_reading

    lead = Passage("a.txt", "A", "European regulators want one charger for every phone.", 0, 55)
    given = (lead, Passage("a.txt", "A", "The rules cover Europe from 2024.", 56, 89))
    trace = Trace(given=given, phrase="European regulators", confidence=0.62, no_answer=0.1,
                  stats={"prompt_tokens": 210.0, "read_ms": 900.0, "logprob": -1.5},
                  span_phrases=("the EU", "Europe", "Apple"), span_confidence=0.4, missing=("Brussels",))
    answer = Answer("Who wants one charger?", "European regulators want one charger [1]", True,
                    citations=(lead,), evidence=0.55, trace=trace)
    record = rtqa.read_record(answer, "Europe", min_evidence=0.42)
    assert record["answered"] and record["short"] == "European regulators" and record["confidence"] == 0.62
    assert record["span_short"] == "the EU" and record["in_candidates"]  # "Europe" is the second span
    assert record["gold_given"]  # the second sentence the model read holds "Europe"
    assert record["first_cited"] == lead.text
    assert record["lm"] == {"wrote_declined": False, "unverified": None, "no_answer": 0.1, **trace.stats}
    assert score_reading(answer, ["Europe"]) == {"best_span_em": 0.0, "candidate_recall": 1.0}
    assert score_reading(answer, ["the EU"]) == {"best_span_em": 1.0, "candidate_recall": 1.0}
    # Not read by the model (refused before reading, or it was unavailable): no LM figures.
    unread = rtqa.read_record(Answer("q", "", False, evidence=0.1), "Europe", min_evidence=0.42)
    assert not unread["answered"] and unread["lm"] == {} and unread["short"] is None


def test_loss_puts_each_realtimeqa_record_where_its_answer_was_lost(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture) -> None:
    """`eval loss --set 2022 --records LOG`: the first stage that lost each answer, and recall at
    the reading budget against its ceiling."""
    from eval.report.loss import BUCKETS

    def record(qid: str, **flags: object) -> dict:
        return {"id": qid, "scored": True, "gold": "Europe", "gold_in_articles": True, "gold_in_pool": True,
                "gold_given": True, "short": "Europe", "shown": "Europe", **flags}

    records = [record("absent", gold_in_articles=False, gold_in_pool=False, gold_given=False, short=None,
                      shown=None),
               record("unretrieved", gold_in_pool=False, gold_given=False, short="Asia", shown=None),
               record("unread", gold_given=False, short=None, shown=None),
               record("misread", short="Asia", shown="Asia"),
               record("hidden", shown=None),
               record("right"), record("right too")]
    log = tmp_path / "records.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in records))
    monkeypatch.setenv("QA_EVAL_OUT", str(tmp_path / "runs"))
    assert main(["loss", "--set", "2022", "--records", str(log)]) == 0
    result = json.loads((tmp_path / "runs" / "loss_2022.json").read_text())
    assert result["questions"] == {"absent": BUCKETS[0], "unretrieved": BUCKETS[1], "unread": BUCKETS[2],
                                   "misread": BUCKETS[3], "hidden": BUCKETS[4], "right": BUCKETS[5],
                                   "right too": BUCKETS[5]}
    summary = result["summary"]
    assert summary["ceiling"] == round(6 / 7, 3) and summary["recall_at_budget"] == round(4 / 7, 3)
    assert summary["buckets"]["shown right"] == round(2 / 7, 3)
    out = capsys.readouterr().out
    assert "hidden\tread right, not shown" in out and "| shown right | 0.286 |" in out


def test_missing_benchmark_is_one_line(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("QA_RTQA_DIR", str(tmp_path / "nowhere"))
    monkeypatch.setenv("QA_EVAL_OUT", str(tmp_path / "runs"))
    assert main(["realtimeqa"]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("error: benchmark folder") and "QA_RTQA_DIR" in err and "\n" not in err


def test_eval_articles_are_checked(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from eval import paths

    copy = tmp_path / "articles"
    shutil.copytree(paths.ARTICLES, copy)
    monkeypatch.setattr(paths, "ARTICLES", copy)
    assert paths.eval_articles() == copy
    first = sorted(copy.glob("*.txt"))[0]
    first.write_text(first.read_text() + " An extra sentence.")
    with pytest.raises(MissingData, match="missing or changed"):
        paths.eval_articles()


def test_docs_quote_the_published_results() -> None:
    """Every figures block in the README and docs/ is what eval/report/figures.py writes from
    eval/results/."""
    from eval.report import figures

    blocks = 0
    for doc in figures.DOCS:
        text = doc.read_text("utf-8")
        blocks += text.count("<!-- figures:")
        assert figures.render(text) == text, f"{doc.name}: run `python -m eval report --publish`"
    assert blocks >= 4


@pytest.mark.slow
@pytest.mark.parametrize(("question", "options", "right"), [
    ("Which agency reported Shaheen's phone remarks?", ["AFP", "BBC", "Reuters", "Al Jazeera"], 2),
    ("How many Taliban prisoners will be released each day?", ["500", "100", "1,500", "5,000"], 1),
])
def test_multiple_choice_over_the_seeds(real_qa, question: str, options: list[str], right: int) -> None:
    """The benchmarks' multiple choice is the product's: the language model's, through QA.choose."""
    # As the benchmarks ask: waiting as long as the model takes on a busy machine.
    engine = QA(real_qa.config.replace(read_timeout=600.0), runtime=real_qa.runtime)
    assert engine.choose(question, options).best == right


def test_fitting_writes_a_shipped_file_whole_and_clears_its_cache(tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    from eval.fit import shipped
    from qa.readers.spans.ranker import RANKER_FILE, default_ranker
    from qa.readers.spans.types import type_table

    assert shipped.SHIPPED["ranker"].path == RANKER_FILE  # the file the span reader reads
    shipped_into(tmp_path, monkeypatch)
    default_ranker()
    type_table()
    assert default_ranker.cache_info().currsize == type_table.cache_info().currsize == 1
    fitted = {"weights": [1.0], "bias": 0.5}
    path = shipped.write_shipped("ranker", fitted)
    assert path == tmp_path / "ranker.json" and json.loads(path.read_text()) == fitted
    assert default_ranker.cache_info().currsize == 0  # the next reader reads the new file
    assert type_table.cache_info().currsize == 1  # the others are left alone
    text = shipped.write_shipped("types", {"kinds": {}, "keys": {}}).read_text()
    assert text.index('"keys"') < text.index('"kinds"')  # the type table's keys sorted, as before

    def full_disk(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device")

    # A write that fails leaves the old file as it was, and nothing beside it.
    monkeypatch.setattr(shipped.os, "replace", full_disk)
    with pytest.raises(OSError, match="No space"):
        shipped.write_shipped("ranker", {"weights": [2.0], "bias": 0.0})
    assert json.loads(path.read_text()) == fitted
    assert sorted(p.name for p in tmp_path.iterdir()) == ["ranker.json", "types.json"]


def test_fit_lm_calibrates_on_a_runs_records(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                            capsys: pytest.CaptureFixture) -> None:
    """fit-lm on records shaped as a realtimeqa run logs them: confident phrases are right, a
    likely decline means the sentences lacked the answer; --write goes through shipped.py."""
    from eval.fit import lm, shipped
    from qa.readers.lm.calibration import load_calibration

    rng = np.random.default_rng(0)
    records = []
    for i in range(90):
        right, given = i % 3 == 0, i % 3 != 2
        lp = (-0.3 if right else -2.5) - rng.random()
        declined = (0.1 if given else 0.8) + 0.1 * rng.random()
        records.append({"scored": True, "gold": "Europe", "short": "Europe" if right else "Asia",
                        "gold_given": given, "lm": {"logprob": lp, "first": lp, "weakest": lp,
                                                    "declined": declined, "unverified": None},
                        "answered": i >= 9})  # the first three right phrases were refused
    for _ in range(10):  # the model declined: no phrase, so nothing for the confidence to fit
        records.append({"scored": True, "gold": "Europe", "short": None, "gold_given": False,
                        "answered": False, "lm": {"logprob": -0.1, "first": -0.1, "weakest": -0.1,
                                                  "declined": 0.95, "unverified": None}})
    log = tmp_path / "records.jsonl"
    log.write_text("\n".join(json.dumps(r) for r in records))
    written = tmp_path / "calibration.json"
    monkeypatch.setitem(shipped.SHIPPED, "lm_calibration",
                        shipped.Shipped(written, shipped.SHIPPED["lm_calibration"].cache))
    assert lm.main(["--records", str(log), "--out", str(tmp_path / "fit.json"), "--write"]) == 0
    report = json.loads((tmp_path / "fit.json").read_text())
    assert report["questions"] == 100 and report["phrases"] == 90
    assert report["phrase_right"] == pytest.approx(0.3)
    # A refused question shows no phrase, however sure: even at the lowest threshold, 27 of the 30
    # right phrases are shown right, not 30.
    assert report["trade_off_oof"][0]["em_as_shown"] == pytest.approx(0.27)
    # The threshold shipped: the highest whose EM as shown is within 0.01 of the best one's.
    curve = report["trade_off_oof"]
    best = max(row["em_as_shown"] for row in curve)
    assert report["min_short"] == max(row["threshold"] for row in curve if row["em_as_shown"] >= best - 0.01)
    calibration = load_calibration(written)
    sure, unsure = ({"logprob": lp, "first": lp, "weakest": lp, "declined": 0.1} for lp in (-0.5, -3.0))
    assert calibration.confidence(sure) > 0.8 > 0.2 > calibration.confidence(unsure)
    assert calibration.no_answer(0.9, False) > 0.8 > 0.2 > calibration.no_answer(0.1, False)
    assert "[fit-lm 4/4]" in capsys.readouterr().err  # each step said on stderr
    # Too few records to fit out of fold: one line saying so, and nothing written.
    log.write_text("\n".join(json.dumps(r) for r in records[:6]))
    written.unlink()
    assert lm.main(["--records", str(log), "--out", str(tmp_path / "fit.json"), "--write"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err[-1].startswith("error: ") and "fewer than 10" in err[-1] and not written.exists()


def test_steps_say_how_far_and_how_long_is_left(monkeypatch: pytest.MonkeyPatch,
                                                capsys: pytest.CaptureFixture) -> None:
    from eval import progress

    now = [100.0]
    monkeypatch.setattr(progress.time, "monotonic", lambda: now[0])
    steps = progress.Steps("bench", {"load": 10, "read": 30})
    steps.step("load")
    now[0] += 20  # the first step took twice its plan: the rest is expected to as well
    steps.step("read", "115 questions")
    now[0] += 65
    steps.finish()
    lines = capsys.readouterr().err.splitlines()
    assert lines == ["[bench 1/2] load: 0s so far, about 40s left (planned)",
                     "[bench 2/2] read (115 questions): 20s so far, about 1m00s left (at this pace)",
                     "[bench] done in 1m25s"]


def test_a_failing_bench_step_shows_its_cause_and_leaves_no_scratch_folder(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    import sys
    import tempfile

    from eval.perf import bench, timing

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    broken = [sys.executable, "-c", "import sys; print('half a traceback', file=sys.stderr); "
              "sys.exit(\"ModuleNotFoundError: No module named 'eval'\")"]

    def run(work: Path) -> None:
        (work / "seeds").mkdir()
        timing.checked(broken, {})

    monkeypatch.setattr(bench, "run", run)
    monkeypatch.setattr("sys.argv", ["python -m eval bench"])
    with pytest.raises(SystemExit) as stopped:
        bench.main()
    assert stopped.value.code == 2
    err = capsys.readouterr().err
    assert "half a traceback" in err  # what the step printed is shown
    assert err.strip().splitlines()[-1].startswith("error: `python -c import sys;")
    assert err.strip().endswith("exited with 1: ModuleNotFoundError: No module named 'eval'")
    assert list(tmp_path.glob("qa-bench-*")) == []


@pytest.mark.slow
def test_the_warm_answer_step_runs_as_bench_runs_it(real_copy: dict[str, str]) -> None:
    """The subprocess `make bench` starts for warm answers, from the repository as the bench runs it."""
    import sys

    from eval.perf import timing

    out = timing.checked([sys.executable, "-m", "eval.perf.bench", "--warm-only", real_copy["QA_SEEDS_DIR"],
                          real_copy["QA_INDEX_DIR"]], real_copy)
    timed = json.loads(out.splitlines()[-1])
    assert len(timed["seconds"]) == len(timing.question_texts()) and timed["torch"] is False


@pytest.mark.slow
def test_bench_reads_another_model_file_side_by_side(model_cache: Path) -> None:
    """`eval bench --model`: a variant reads with the GGUF file it names, beside the configured one."""
    from eval.perf import bench, timing
    from qa import Config
    from qa.errors import ModelProblem
    from qa.llm.model_file import model_path

    shipped = model_path(model_cache, Config.from_env().reading.reader_model)
    prompt = [{"role": "user", "content": "[1] The ministry said 1,500 prisoners will be freed.\n\n"
               "Question: How many prisoners will be freed?"}]
    out = timing.reader_settings([prompt], {"model": [{}, {"model": str(shipped)}]})["model"]
    assert [bench._variant(v) for v in out] == ["default", shipped.stem]
    assert all(v["readings"] == 1 and v["prompt_tokens_per_s"] > 0 for v in out)
    assert out[1]["same_answers_as_default"] == 1  # the same file: the same answer
    with pytest.raises(ModelProblem, match="could not load the reader's model .*missing.gguf"):
        timing.reader_settings([prompt], {"model": [{}, {"model": str(model_cache / "missing.gguf")}]})


@pytest.mark.parametrize(("argv", "message"), [
    (["cluster", "--nodes", "0"], "--nodes: '0' is not a list of node counts of at least 1, e.g. 1,2"),
    (["concurrency", "--slots", "4,x"], "--slots: '4,x' is not a list of slot counts"),
    (["scale", "--only", "vector"], "--only 'vector': the sections are bench,build,vectors,peer"),
    (["scale", "--only", "vectors"], "--only vectors sizes the index that build makes: add build"),
])
def test_a_mistaken_eval_argument_is_one_line(argv: list[str], message: str, tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch, capsys) -> None:
    monkeypatch.setenv("QA_EVAL_OUT", str(tmp_path))
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    err = capsys.readouterr().err.strip().splitlines()
    assert exit_.value.code == 2 and message in err[-1], err
    assert not list(tmp_path.iterdir())  # nothing written
