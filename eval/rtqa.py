"""RealTime QA 2022: answer each question over only its own search-result articles, and score it."""

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
from qa.reading.reader import Reading
from qa.text.nlp import Tagger

log = logging.getLogger(__name__)
ROOT = Path(__file__).parent.parent
BASELINES = {"RAG + search results": {"mc_accuracy": 0.543, "em": 0.248, "f1": 0.320},
             "GPT-3 + search results": {"mc_accuracy": 0.723, "em": 0.335, "f1": 0.462}}
ANSWER_BEARING_CEILING = 0.613


def rtqa_dir() -> Path:
    """The benchmark folder: $QA_RTQA_DIR, else ../shared/benchmarks/realtimeqa-2022 beside the repo."""
    return benchmark_dir("realtimeqa-2022")


def _read(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def load(folder: Path | None = None, limit: int | None = None) -> list[dict]:
    """Questions joined with their search-result articles (read in place, never copied)."""
    folder = folder or rtqa_dir()
    results = {r["question_id"]: r["search_result"] for r in _read(folder / "search_results.jsonl.gz")}
    rows = []
    for q in _read(folder / "questions.jsonl.gz")[:limit]:
        gold = q["choices"][int(q["answer"][0])]
        articles = [a["text"] for a in results.get(q["question_id"], []) if (a.get("text") or "").strip()]
        rows.append({**q, "gold": gold, "articles": articles,
                     "scored": not q["question_sentence"].strip().rstrip(":?.").lower().endswith("except")})
    return rows


def choose(engine: QA, question: str, options: list[str], passages: list[str],
           scored: list[tuple[int, float]] | None = None, reading: Reading | None = None) -> int:
    """The choice the articles support best, by the scorer fitted on back numbers (eval/choices.py)."""
    answerer = engine.answerer
    scored = answerer.scored(question) if scored is None else scored
    reading = answerer.read(question, scored=scored) if reading is None else reading
    return _chooser().choose(choices.features(engine, question, options, reading, scored, passages))


@lru_cache(maxsize=1)
def _chooser() -> choices.Chooser:
    return choices.Chooser.load()


def ask(q: dict, embedder: Embedder, min_evidence: float, tagger: Tagger | None = None,
        **config: object) -> dict:
    """Index this question's articles in a temp dir, answer it, and record what it predicts."""
    record = {"id": q["question_id"], "scored": q["scored"], "gold": q["gold"],
              "articles": len(q["articles"]), "mc_right": int(q["answer"][0])}
    if not q["articles"]:
        return {**record, "answered": False, "evidence": 0.0, "short": None, "first_cited": "", "mc": -1,
                "confidence": 0.0, "in_candidates": False}
    with tempfile.TemporaryDirectory(prefix="qa-rtqa-") as tmp:
        seeds = Path(tmp) / "seeds"
        seeds.mkdir()
        for i, text in enumerate(q["articles"]):
            (seeds / f"{i:02d}.txt").write_text(text, encoding="utf-8")
        # Never refuse and always give the reader's best span here: the product's thresholds are
        # applied afterwards, from Answer.evidence and Answer.confidence.
        cfg = Config.from_env(seeds_dir=seeds, index_dir=Path(tmp) / "index", **config).replace(
            min_evidence=-1e9, hinge_evidence=-1e9, min_short=0.0)
        engine = QA(cfg, embedder=embedder, tagger=tagger)
        try:
            engine.build()
            answer = engine.answer(q["question_sentence"])
            scored = engine.answerer.scored(q["question_sentence"])
            reading = engine.answerer.read(q["question_sentence"], scored=scored)
            gold = normalise(q["gold"])
            in_candidates = any(s.candidate.key == gold for s in reading.spans)
            mc = choose(engine, q["question_sentence"], q["choices"], [p.text for p in answer.passages],
                        scored, reading)
        except Exception as exc:  # noqa: BLE001 - one article the pipeline cannot take must not end the run
            log.warning("%s: %s: %s", q["question_id"], type(exc).__name__, exc)
            # Multiple choice can still be read off the raw articles: the most-mentioned choice.
            counts = [sum(m.contains_answer(a, [c]) for a in q["articles"]) for c in q["choices"]]
            return {**record, "answered": False, "evidence": 0.0, "short": None, "first_cited": "",
                    "mc": int(np.argmax(counts)), "error": f"{type(exc).__name__}: {exc}"}
    first = answer.citations[0].text if answer.citations else ""
    return {**record, "answered": answer.evidence >= min_evidence, "evidence": answer.evidence,
            "short": answer.short, "confidence": answer.confidence, "in_candidates": in_candidates,
            "first_cited": " ".join(first.split()), "mc": mc}


def predictions(r: dict, min_short: float) -> dict[str, str]:
    """The candidate predictions of one record, by policy."""
    fallback = r["short"] if r["short"] is not None else r["first_cited"]
    shown = r["short"] if r.get("confidence", 0.0) >= min_short else None
    return {"short_or_sentence": fallback, "short_only": r["short"] or "",
            "short_or_sentence_if_answered": fallback if r["answered"] else "",
            "short_if_confident": shown or ""}


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
    out["candidate_recall"] = sum(bool(r.get("in_candidates")) for r in records) / len(records)
    shown = [r for r in scored if r["short"] and r.get("confidence", 0.0) >= min_short]
    out["short_shown"] = len(shown) / len(scored)
    out["short_shown_precision"] = (sum(m.exact_match(r["short"], [r["gold"]]) for r in shown)
                                    / len(shown)) if shown else 0.0
    out["mc_accuracy"] = sum(r["mc"] == r["mc_right"] for r in records) / len(records)
    out["answered_at_threshold"] = sum(r["answered"] for r in records) / len(records)
    return out


def run(embedder: Embedder, limit: int | None = None, out: Path | None = None,
        tagger: Tagger | None = None) -> dict:
    """Answer and score the first `limit` questions (all 519 when None), timing the run."""
    began = time.perf_counter()
    questions = load(limit=limit)
    min_evidence = Config.from_env().min_evidence
    records = []
    with open(out, "a", encoding="utf-8") if out else open(os.devnull, "w") as sink:
        for q in tqdm(questions, desc="RealTime QA", unit="q", mininterval=5):
            records.append(ask(q, embedder, min_evidence, tagger))
            sink.write(json.dumps(records[-1]) + "\n")
            sink.flush()
    summary = summarize(records)
    summary["errors"] = sum("error" in r for r in records)
    summary.update(seconds=round(time.perf_counter() - began, 1), min_evidence=min_evidence,
                   baselines=BASELINES, answer_bearing_ceiling=ANSWER_BEARING_CEILING)
    return {"summary": summary, "records": records}
