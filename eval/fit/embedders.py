"""`python -m eval embedders`: would a stronger embedder put the answer in the passages read?

For each RealTime QA question with search results, the product's index of its own articles
(eval/realtimeqa/engines.py, MiniLM) is searched as the product searches it, and again with a
candidate embedder's vectors in place of MiniLM's (eval/fit/candidates.py): dense alone, and
fused with the same BM25 ranking as the product fuses them. A pool of k passages holds the answer
when one of its sentences holds the right choice's text: the figure QA_READ_K's pool is judged by
(docs/evaluation.md). Also timed in the same run: the seconds each embedder takes to embed a
question's passages (the candidate's vectors are kept in eval/results/cache/, so a rerun times only
the questions it had not embedded).

    python -m eval embedders --candidate nomic --limit 60
    python -m eval embedders --candidate gemma --limit 60 --year 2022
"""

from __future__ import annotations

import argparse
import copy
import json
import sys
import time
from pathlib import Path

import numpy as np

from eval.fit.candidates import Candidate, load
from eval.paths import RUNS
from eval.progress import bar
from eval.quality import metrics as m
from eval.realtimeqa import cache, data
from eval.realtimeqa.engines import question_engine
from qa import QA, Config
from qa.retrieval.retrieve import clean_question
from qa.text.nlp import Tagger

POOLS = (5, 10, 20)  # passages in the pool; the product reads from QA_READ_K (10)
RESULTS = RUNS / "embedders.json"


class _Documents:
    """A candidate's document side as an Embedder, so its vectors are cached like MiniLM's."""

    def __init__(self, candidate: Candidate) -> None:
        self.candidate = candidate
        self.name = f"{candidate.name}:documents"
        self.dim = candidate.dim

    def embed(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """The candidate's document vectors."""
        return self.candidate.documents(texts)


def passages(engine: QA) -> list[str]:
    """The text of every passage (chunk) of the engine's index, by chunk id."""
    index = engine.index
    return [index.articles[c.source].text[c.start:c.end] for c in index.chunks]


def measure(engine: QA, question: str, gold: str, name: str, vectors: np.ndarray, query: np.ndarray
            ) -> dict[str, bool]:
    """Whether the first k passages hold the answer, as the product ranks them and with the
    candidate's passage ``vectors`` (by chunk id) for the dense ranking: keys
    "{product|name} {hybrid|dense}@k"."""
    index, retriever = engine.index, engine.answerer.retriever

    def holds(chunk_id: int) -> bool:
        return any(m.contains_answer(index.sentence_text(s), [gold]) for s in index.chunk_sentences(chunk_id))

    sims = vectors @ query
    ranking = [(int(i), float(sims[i])) for i in np.argsort(-sims, kind="stable")[:retriever.depth]]
    other = copy.copy(retriever)
    other.dense_ranking = lambda question, allowed=None: ranking  # type: ignore[method-assign]
    row = {}
    for who, r in (("product", retriever), (name, other)):
        for mode in ("hybrid", "dense"):
            for k in POOLS:
                row[f"{who} {mode}@{k}"] = any(holds(c) for c, _ in r.select(question, k, mode))
    return row


def run(candidate_name: str, year: str, limit: int | None) -> dict:
    """Pool recall of the product's ranking and the candidate's, and their embedding times, per question."""
    candidate = load(candidate_name, Config.from_env().cache_dir)
    product = cache.build_embedder()
    embedder = cache.CachingEmbedder(product, cache.DEFAULT_CACHE)
    documents = cache.CachingEmbedder(_Documents(candidate), cache.DEFAULT_CACHE.parent / "candidates.sqlite")
    tagger = cache.CachingTagger(Tagger(Config.from_env().indexing.nlp), cache.DEFAULT_CACHE)
    questions = [q for q in data.load(data.rtqa_dir(year)) if q["articles"] and q["scored"]][:limit]
    rows, seconds = [], {"product": 0.0, candidate.name: 0.0, "questions": 0}
    for q in bar(questions, desc=f"{candidate.name} on RealTime QA {year}", every=10):
        engine = question_engine(year, q, embedder, tagger)
        question = clean_question(q["question_sentence"], engine.config.retrieval.max_question_chars)
        texts = passages(engine)
        before, began = documents.misses, time.perf_counter()
        vectors = documents.embed(texts)
        spent = time.perf_counter() - began
        if documents.misses - before == len(set(texts)):  # embedded afresh: time MiniLM on the same
            began = time.perf_counter()
            product.embed(list(dict.fromkeys(texts)))
            seconds["product"] += time.perf_counter() - began
            seconds[candidate.name] += spent
            seconds["questions"] += 1
        row = measure(engine, question, q["gold"], candidate.name, vectors, candidate.query(question))
        row["ceiling"] = any(m.contains_answer(t, [q["gold"]]) for t in q["articles"])
        rows.append({"id": q["question_id"], **row})
    n = max(1, len(rows))
    keys = [k for k in rows[0] if k != "id"] if rows else []
    timed = max(1, seconds["questions"])
    return {"year": year, "candidate": candidate.name, "questions": len(rows),
            "recall": {k: round(sum(r[k] for r in rows) / n, 3) for k in keys},
            "seconds_per_question": {"product": round(seconds["product"] / timed, 2),
                                     candidate.name: round(seconds[candidate.name] / timed, 2),
                                     "timed_questions": seconds["questions"]},
            "rows": rows}


def main(argv: list[str] | None = None) -> int:
    """Measure each candidate named, print its figures and save them."""
    ap = argparse.ArgumentParser(prog="python -m eval embedders", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--candidate", default="nomic", help="nomic, gemma, or both: nomic,gemma")
    ap.add_argument("--year", default="2022", choices=["2022", "2025"])
    ap.add_argument("--limit", type=int, default=60, help="the first N questions with search results")
    ap.add_argument("--out", type=Path, default=RESULTS)
    args = ap.parse_args(argv)
    figures = [run(name.strip(), args.year, args.limit) for name in args.candidate.split(",") if name.strip()]
    for f in figures:
        print(json.dumps({k: v for k, v in f.items() if k != "rows"}, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps({"candidates": figures}, indent=1) + "\n", "utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
