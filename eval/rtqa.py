"""RealTime QA (2022, 2025): answer each question over only its own search-result articles, and score it."""

from __future__ import annotations

import gzip
import json
import logging
import os
import tempfile
import time
from functools import lru_cache
from pathlib import Path

import numpy as np
from tqdm import tqdm

from eval import choices
from eval import metrics as m
from eval.paths import benchmark_dir
from qa import QA, Config, Embedder
from qa.reading.candidates import normalise
from qa.reading.lm_reader import LMReader
from qa.reading.reader import Reading
from qa.text.nlp import Tagger

log = logging.getLogger(__name__)
ROOT = Path(__file__).parent.parent
BASELINES = {"2022": {"RAG + search results": {"mc_accuracy": 0.543, "em": 0.248, "f1": 0.320},
                      "GPT-3 + search results": {"mc_accuracy": 0.723, "em": 0.335, "f1": 0.462}},
             # Published for 2026 weeks with the same kind of search results (the 2025 README).
             "2025": {"frontier models, 2026 weeks (low)": {"mc_accuracy": 0.65, "em": 0.28, "f1": 0.39,
                                                             "nota_mc_accuracy": 0.59},
                      "frontier models, 2026 weeks (high)": {"mc_accuracy": 0.75, "em": 0.36, "f1": 0.48,
                                                              "nota_mc_accuracy": 0.67}}}
ANSWER_BEARING_CEILING = {"2022": 0.613, "2025": 0.476}
YEARS = tuple(BASELINES)


def rtqa_dir(year: str = "2022") -> Path:
    """The benchmark folder: $QA_RTQA_DIR (2022), else ../shared/benchmarks/realtimeqa-YEAR."""
    return benchmark_dir(f"realtimeqa-{year}")


def _read(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load(folder: Path | None = None, limit: int | None = None) -> list[dict]:
    """Questions joined with their search-result articles (read in place, never copied), and the
    "none of the above" variant's choices where the folder has a nota/ of it."""
    folder = folder or rtqa_dir()
    results = {r["question_id"]: r["search_result"] for r in _read(folder / "search_results.jsonl.gz")}
    nota = ({q["question_id"].removesuffix("_nota"): q for q in _read(folder / "nota" / "questions.jsonl.gz")}
            if (folder / "nota" / "questions.jsonl.gz").is_file() else {})
    rows = []
    for q in _read(folder / "questions.jsonl.gz")[:limit]:
        gold = q["choices"][int(q["answer"][0])]
        articles = [a["text"] for a in results.get(q["question_id"], []) if (a.get("text") or "").strip()]
        variant = nota.get(q["question_id"])
        rows.append({**q, "gold": gold, "articles": articles,
                     "nota": ({"choices": variant["choices"], "right": int(variant["answer"][0])}
                              if variant else None),
                     "scored": not q["question_sentence"].strip().rstrip(":?.").lower().endswith("except")})
    return rows


def choose(engine: QA, question: str, options: list[str], passages: list[str],
           scored: list[tuple[int, float]] | None = None, reading: Reading | None = None) -> int:
    """The choice the span reader's evidence supports best, by the scorer fitted on back numbers."""
    answerer = engine.answerer
    scored = answerer.scored(question) if scored is None else scored
    reading = answerer.read(question, scored=scored) if reading is None else reading
    return _chooser().choose(choices.features(engine, question, options, reading, scored, passages))


@lru_cache(maxsize=1)
def _chooser() -> choices.Chooser:
    return choices.Chooser.load()


def _empty(record: dict) -> dict:
    return {**record, "answered": False, "evidence": 0.0, "short": None, "span_short": None,
            "first_cited": "", "confidence": 0.0, "in_candidates": False, "lm": {}}


def ask(q: dict, embedder: Embedder, min_evidence: float, tagger: Tagger | None = None,
        **config: object) -> dict:
    """Index this question's articles in a temp dir, read it with both readers, and record what each predicts.

    The language model reads exactly what it reads in the product (the question, the best sentences);
    its multiple choice is by the letter it gives each option ("mc"), the span reader's by the
    scorer fitted on back numbers ("mc_spans").
    """
    record = {"id": q["question_id"], "scored": q["scored"], "gold": q["gold"],
              "articles": len(q["articles"]), "mc_right": int(q["answer"][0]),
              "nota_right": q["nota"]["right"] if q.get("nota") else None}
    if not q["articles"]:
        # No articles to read: the model is asked with none ("None of the above" is then right).
        lm = LMReader(None, _runtime())  # type: ignore[arg-type]
        nota = lm.choose(q["question_sentence"], [], q["nota"]["choices"]) if q.get("nota") else None
        return {**_empty(record), "mc": int(np.argmax(lm.choose(q["question_sentence"], [], q["choices"]))),
                "mc_spans": -1, "nota_mc": int(np.argmax(nota)) if nota is not None else None}
    with tempfile.TemporaryDirectory(prefix="qa-rtqa-") as tmp:
        seeds = Path(tmp) / "seeds"
        seeds.mkdir()
        for i, text in enumerate(q["articles"]):
            (seeds / f"{i:02d}.txt").write_text(text, encoding="utf-8")
        # Never refuse and always give the reader's best span here: the product's thresholds are
        # applied afterwards, from Answer.evidence and the readers' confidences.
        cfg = Config.from_env(seeds_dir=seeds, index_dir=Path(tmp) / "index", **config).replace(
            min_evidence=-1e9, hinge_evidence=-1e9, min_short=0.0, reader="spans")
        engine = QA(cfg, embedder=embedder, tagger=tagger)
        question = q["question_sentence"]
        try:
            engine.build()
            answer = engine.answer(question)
            scored = engine.answerer.scored(question)
            reading = engine.answerer.read(question, scored=scored)
            gold = normalise(q["gold"])
            in_candidates = any(s.candidate.key == gold for s in reading.spans)
            mc_spans = choose(engine, question, q["choices"], [p.text for p in answer.passages], scored,
                              reading)
            lm = LMReader(engine.index, _runtime())
            read = lm.read(question, scored)
            mc = lm.choose(question, scored, q["choices"])
            nota = lm.choose(question, scored, q["nota"]["choices"]) if q.get("nota") else None
            given = [engine.index.sentence_text(s) for s in lm.passages(scored).sentences]
        except Exception as exc:  # noqa: BLE001 - one article the pipeline cannot take must not end the run
            log.warning("%s: %s: %s", q["question_id"], type(exc).__name__, exc)
            # Multiple choice can still be read off the raw articles: the most-mentioned choice.
            counts = [sum(m.contains_answer(a, [c]) for a in q["articles"]) for c in q["choices"]]
            return {**_empty(record), "mc": int(np.argmax(counts)), "mc_spans": int(np.argmax(counts)),
                    "nota_mc": -1, "error": f"{type(exc).__name__}: {exc}"}
    first = answer.citations[0].text if answer.citations else ""
    best = read.best
    return {**record, "answered": answer.evidence >= min_evidence, "evidence": answer.evidence,
            "short": best.candidate.text if best else None, "confidence": best.confidence if best else 0.0,
            "span_short": answer.short, "span_confidence": answer.confidence,
            "in_candidates": in_candidates, "first_cited": " ".join(first.split()),
            "mc": int(np.argmax(mc)), "mc_p": [round(float(p), 4) for p in mc],
            "mc_spans": mc_spans, "nota_mc": int(np.argmax(nota)) if nota is not None else None,
            "nota_p": [round(float(p), 4) for p in nota] if nota is not None else None,
            # What the model read and said: the gold in its sentences tells what it could have answered.
            "gold_given": any(m.contains_answer(t, [q["gold"]]) for t in given),
            "reader": read.reader, "model": read.model,
            # "declined" in the stats is the feature (the probability of declining); what the
            # model wrote is "wrote_declined".
            "lm": {"wrote_declined": read.declined, "unverified": read.unverified,
                   "no_answer": read.no_answer, **read.stats}}


@lru_cache(maxsize=1)
def _runtime():  # noqa: ANN202 - one model for the whole run
    from qa.llm.runtime import configured_runtime

    return configured_runtime(Config.from_env())


def confidence(r: dict) -> float:
    """The phrase's confidence under the calibration shipped now (qa/reading/lm_calibration.json),
    from the token features the run recorded: a refit needs no new run."""
    from qa.reading.lm_calibration import FEATURES, default_calibration

    lm = r.get("lm") or {}
    if r.get("short") is None or not all(f in lm for f in FEATURES):
        return r.get("confidence", 0.0)
    return default_calibration().confidence([lm[f] for f in FEATURES])


def predictions(r: dict, min_short: float) -> dict[str, str]:
    """The candidate predictions of one record, by policy."""
    fallback = r["short"] if r["short"] is not None else r["first_cited"]
    shown = r["short"] if confidence(r) >= min_short else None
    return {"short_or_sentence": fallback, "short_only": r["short"] or "",
            "short_if_confident": shown or "", "span_reader": r.get("span_short") or ""}


def summarize(records: list[dict]) -> dict:
    """EM/F1 per prediction policy over scored questions, answer-bearing rate, MC accuracy."""
    scored = [r for r in records if r["scored"]]
    min_short = Config.from_env().min_short
    out: dict = {"questions": len(records), "scored": len(scored), "policies": {}}
    for policy in predictions(records[0], min_short):
        preds = [(predictions(r, min_short)[policy], [r["gold"]]) for r in scored]
        out["policies"][policy] = {"em": sum(m.exact_match(p, g) for p, g in preds) / len(preds),
                                   "f1": sum(m.token_f1(p, g) for p, g in preds) / len(preds)}
    bearing = sum(m.contains_answer(r["first_cited"], [r["gold"]]) for r in records)
    out["answer_bearing"] = bearing / len(records)
    out["gold_given"] = sum(bool(r.get("gold_given")) for r in records) / len(records)
    out["candidate_recall"] = sum(bool(r.get("in_candidates")) for r in records) / len(records)
    shown = [r for r in scored if r["short"] and confidence(r) >= min_short]
    out["short_shown"] = len(shown) / len(scored)
    out["short_shown_precision"] = (sum(m.exact_match(r["short"], [r["gold"]]) for r in shown)
                                    / len(shown)) if shown else 0.0
    out["mc_accuracy"] = sum(r["mc"] == r["mc_right"] for r in records) / len(records)
    out["mc_spans_accuracy"] = sum(r.get("mc_spans") == r["mc_right"] for r in records) / len(records)
    nota = [r for r in records if r.get("nota_right") is not None]
    if nota:
        out["nota_mc_accuracy"] = sum(r.get("nota_mc") == r["nota_right"] for r in nota) / len(nota)
    lm = [r for r in records if r.get("lm")]
    read = [r["lm"] for r in lm]
    # The model wrote "not in the articles": no phrase, shown or unverified (older logs lack the flag).
    out["lm_declined"] = sum(r["lm"].get("wrote_declined", r["short"] is None
                                         and r["lm"].get("unverified") is None) for r in lm) / max(1, len(lm))
    out["lm_unverified"] = sum(x.get("unverified") is not None for x in read) / max(1, len(read))
    out["lm_read_ms_p50"] = float(np.median([x["read_ms"] for x in read])) if read else 0.0
    out["answered_at_threshold"] = sum(r["answered"] for r in records) / len(records)
    return out


def run(embedder: Embedder, limit: int | None = None, out: Path | None = None,
        tagger: Tagger | None = None, year: str = "2022") -> dict:
    """Answer and score the first `limit` questions of a year (all when None), timing the run."""
    began = time.perf_counter()
    questions = load(rtqa_dir(year), limit=limit)
    min_evidence = Config.from_env().min_evidence
    # Questions an interrupted run already logged (the log is appended to) are not asked again.
    done = ({r["id"]: r for line in out.read_text("utf-8").splitlines() if line.strip()
             for r in [json.loads(line)]} if out and out.is_file() else {})
    records = []
    with open(out, "a", encoding="utf-8") if out else open(os.devnull, "w") as sink:
        for q in tqdm(questions, desc=f"RealTime QA {year}", unit="q", mininterval=5):
            if q["question_id"] in done:
                records.append(done[q["question_id"]])
                continue
            records.append(ask(q, embedder, min_evidence, tagger))
            sink.write(json.dumps(records[-1]) + "\n")
            sink.flush()
    summary = summarize(records)
    summary["errors"] = sum("error" in r for r in records)
    summary.update(year=year, seconds=round(time.perf_counter() - began, 1), min_evidence=min_evidence,
                   baselines=BASELINES[year], answer_bearing_ceiling=ANSWER_BEARING_CEILING[year])
    return {"summary": summary, "records": records}
