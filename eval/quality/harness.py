"""Run the hand-written question set through the real pipeline and score every mode."""

from __future__ import annotations

import json
import re
import shutil
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tqdm import tqdm

from eval.paths import QUESTIONS, eval_articles
from eval.progress import Steps, bar
from eval.quality import metrics as m
from eval.report import loss
from qa import QA, Answer, Config, Embedder, Passage

MARKER = re.compile(r"\s*\[\d+\]")
KS = (1, 3, 5)


def load_questions(path: Path = QUESTIONS, limit: int | None = None) -> list[dict]:
    """The question set in file order, cut to the first `limit` rows."""
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return rows[:limit] if limit else rows


@contextmanager
def temp_engine(seeds: Path, embedder: Embedder | None = None, **config: object) -> Iterator[QA]:
    """A QA engine over a private copy of seeds with its own index in a temp dir (never index/)."""
    with tempfile.TemporaryDirectory(prefix="qa-eval-") as tmp:
        shutil.copytree(seeds, Path(tmp) / "seeds", ignore=shutil.ignore_patterns("SHA256SUMS"))
        cfg = Config.from_env(seeds_dir=Path(tmp) / "seeds", index_dir=Path(tmp) / "index", **config)
        engine = QA(cfg, embedder=embedder)
        engine.build()
        yield engine


def find_span(text: str, sentence: str) -> tuple[int, int] | None:
    """Offsets of sentence in text, tolerating differences in white space."""
    at = text.find(sentence)
    if at >= 0:
        return at, at + len(sentence)
    words = sentence.split()
    found = re.search(r"\s+".join(map(re.escape, words)), text) if words else None
    return (found.start(), found.end()) if found else None


def evidence_spans(engine: QA, q: dict) -> list[tuple[str, int, int]]:
    """(source, start, end) of each gold evidence sentence, looked up in its gold articles first."""
    articles = engine.index.articles
    spans = []
    for sentence in q["evidence"]:
        for source in [*q["articles"], *sorted(set(articles) - set(q["articles"]))]:
            span = find_span(articles[source].text, sentence) if source in articles else None
            if span:
                spans.append((source, *span))
                break
    return spans


def plain_text(answer: Answer) -> str:
    """The answer text without its [n] citation markers."""
    return MARKER.sub("", answer.text).strip()


def score_retrieval(ranked: list[Passage], q: dict, spans: list[tuple[str, int, int]]) -> dict[str, float]:
    """Hit@k, MRR@10 and nDCG@10 at article and at evidence level for one question."""
    gold = set(q["articles"])
    levels = {
        "article": ([p.source in gold for p in ranked], len(gold)),
        "evidence": ([any(s == p.source and p.start <= a and b <= p.end for s, a, b in spans)
                      for p in ranked], len(spans)),
    }
    out: dict[str, float] = {}
    for level, (rel, n) in levels.items():
        for k in KS:
            out[f"{level}_hit@{k}"] = m.hit_at_k(rel, k)
        out[f"{level}_mrr@10"] = m.mrr_at_k(rel, 10)
        out[f"{level}_ndcg@10"] = m.ndcg_at_k(rel, 10, n)
    return out


def score_answer(answer: Answer, q: dict, spans: list[tuple[str, int, int]]) -> dict[str, float]:
    """Containment, token F1 and citation precision/recall of one answer to an answerable question."""
    text = plain_text(answer) if answer.answered else ""
    prediction = answer.short if answer.short is not None else text
    cited = [(c.source, c.start, c.end, c.text) for c in answer.citations]
    precision, recall = m.citation_precision_recall(cited, spans, q["answers"])
    return {"contains": m.contains_answer(text, q["answers"]), "f1": m.token_f1(prediction, q["answers"]),
            "em": m.exact_match(prediction, q["answers"]),
            "citation_precision": precision, "citation_recall": recall}


def score_reading(answer: Answer, golds: list[str]) -> dict[str, float]:
    """Whether the span reader's best span is right whatever its confidence, and whether any of its
    candidates is (from the answer's trace)."""
    spans = answer.trace.span_phrases
    return {"best_span_em": m.exact_match(spans[0], golds) if spans else 0.0,
            "candidate_recall": float(any(m.exact_match(s, golds) for s in spans))}


def lost(engine: QA, answer: Answer, q: dict) -> dict:
    """Where the answer was lost: in the articles, the reader's pool, what it read, what it said
    (a phrase; for a why or how, its first cited sentence), what was shown."""
    golds, t = q["answers"], answer.trace
    by_sentence = q["kind"] in {"why", "how"}
    first = answer.citations[0].text if answer.citations else ""
    articles = engine.index.articles.values()
    found = {"gold_in_articles": any(m.contains_answer(a.text, golds) for a in articles),
             "gold_in_pool": any(m.contains_answer(p.text, golds) for p in t.pool),
             "gold_given": any(m.contains_answer(p.text, golds) for p in t.given) or (
                 by_sentence and any(m.contains_answer(p.text, golds) for p in t.pool)),
             "read_right": bool(m.contains_answer(first, golds)) if by_sentence else bool(
                 t.phrase and m.exact_match(t.phrase, golds)),
             "shown_right": bool(m.contains_answer(first, golds)) if by_sentence else bool(
                 answer.short and m.exact_match(answer.short, golds))}
    return {**found, "loss": loss.bucket(*found.values())}


def ask_all(engine: QA, questions: list[dict], mode: str, shown: tqdm | None = None) -> list[dict]:
    """Ask every question in order, conversations with the earlier turns as history."""
    history: dict[str, list[tuple[str, Answer]]] = {}
    records = []
    for q in questions:
        conv = q.get("conversation")
        turns = history.setdefault(conv, []) if conv else []
        began = time.perf_counter()
        answer = engine.answer(q["question"], history=list(turns) or None, mode=mode)
        latency = (time.perf_counter() - began) * 1000
        if conv:
            turns.append((q["question"], answer))
        record = {"id": q["id"], "kind": q["kind"], "answerable": q["answerable"], "mode": mode,
                  "answered": answer.answered, "evidence_score": answer.evidence, "latency_ms": latency,
                  "short": answer.short, "confidence": answer.confidence, "text": answer.text,
                  "query": answer.query, "reader": str(answer.reader), "no_answer": answer.no_answer,
                  "read_ms": answer.timings.get("read_ms"), "notice": answer.notice,
                  # The refusal signals, whatever the thresholds: eval/quality/calibrate.py sweeps them.
                  "missing": bool(answer.trace.missing), "lacks_kind": answer.trace.lacks_kind}
        if q["answerable"]:
            spans = evidence_spans(engine, q)
            ranked = engine.retrieve(answer.query, k=10, mode=mode)  # type: ignore[arg-type]
            record.update(score_retrieval(ranked, q, spans), **score_answer(answer, q, spans),
                          # The span reader's candidates, when it read (the model names one phrase).
                          **(score_reading(answer, q["answers"]) if str(answer.reader) == "spans" else {}),
                          **lost(engine, answer, q),
                          evidence_found=len(spans))
        records.append(record)
        if shown is not None:
            shown.update()
    return records


def summarize(records: list[dict]) -> dict[str, float]:
    """Mean metrics over answerable questions, refusal precision/recall, latency percentiles."""
    answerable = [r for r in records if r["answerable"]]
    keys = [k for k in answerable[0] if ("@" in k or k in
            ("contains", "f1", "em", "best_span_em", "candidate_recall", "citation_precision",
             "citation_recall")) and all(k in r for r in answerable)] if answerable else []
    out = {k: sum(r[k] for r in answerable) / len(answerable) for k in keys}
    refused_unans = sum(not r["answered"] and not r["answerable"] for r in records)
    refused_ans = sum(not r["answered"] and r["answerable"] for r in records)
    answered_unans = sum(r["answered"] and not r["answerable"] for r in records)
    out["refusal_precision"], out["refusal_recall"] = m.precision_recall(refused_unans, refused_ans,
                                                                         answered_unans)
    out["false_refusal_rate"] = refused_ans / len(answerable) if answerable else 0.0
    read = [r for r in records if r.get("reader") == "lm" and r.get("read_ms") is not None]
    out["read_by_lm"] = len(read) / len(records)
    if read:
        out["read_ms_p50"] = m.percentile([r["read_ms"] for r in read], 50)
    latencies = [r["latency_ms"] for r in records]
    out["latency_p50_ms"] = m.percentile(latencies, 50)
    out["latency_p95_ms"] = m.percentile(latencies, 95)
    out["questions"] = len(records)
    if answerable and all("loss" in r for r in answerable):
        out["loss"] = loss.table([r["loss"] for r in answerable])
    return out


def run(modes: list[str], limit: int | None = None, seeds: Path | None = None) -> dict:
    """Per-mode summaries and per-question records for the question set."""
    questions = load_questions(limit=limit)
    steps = Steps("quality", {"build the index of eval/articles/": 20, "open the index": 15,
                              "ask the questions": 3.0 * len(questions) * len(modes)})
    steps.step("build the index of eval/articles/")
    # No embedder passed: the engine loads the model exactly as the product does (the seeds are
    # small, so there is nothing worth caching), and a fresh engine per mode means latency
    # includes embedding the question and no mode profits from another's query cache.
    with temp_engine(seeds or eval_articles()) as built:
        steps.step("open the index")
        shown = None
        records = {}
        for mode in modes:
            # Quality, not the machine's load: a question never falls back for waiting on the model.
            engine = QA(built.config.replace(read_timeout=max(built.config.reading.read_timeout, 600.0)))
            engine.answer("warm up", mode=mode)  # load the index before timing anything
            if shown is None:
                steps.step("ask the questions", f"{len(questions)} in {len(modes)} mode(s)")
                shown = bar(total=len(questions) * len(modes), desc="questions")
            records[mode] = ask_all(engine, questions, mode, shown)
        if shown is not None:
            shown.close()
        steps.finish()
        min_evidence = built.config.answering.min_evidence
    return {"min_evidence": min_evidence, "summary": {mode: summarize(r) for mode, r in records.items()},
            "records": records}
