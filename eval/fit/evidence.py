"""`python -m eval fit-evidence`: fit what the language model reads first, on RealTime QA 2022.

Each question's own search results are indexed (dated, titled, as the product reads them); the
sentences of a deep pool (the best DEPTH passages) get qa/sentences/evidence.py's features, and a
sentence is a positive when it holds the right choice's text. A logistic regression over those
features ranks the pool. Figures are out of fold (5 folds by question), for each pool size (the
first k passages of the deep pool, as QA_READ_K=k takes them) and reading budget: recall at the
reading budget, the share of questions whose answer is in what the model reads, against the
unfitted ranking, the pool (the answer among the pool's sentences at all) and the ceiling (the
answer in the articles at all). --write ships qa/sentences/evidence.json, fitted on QA_READ_K's pool.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from eval.fit.shipped import write_shipped
from eval.paths import RUNS
from eval.progress import bar
from eval.quality import metrics as m
from eval.realtimeqa import cache, data
from eval.realtimeqa.engines import INDEXES, question_engine
from qa import Config
from qa.question import analyse
from qa.readers.lm.excerpts import excerpts
from qa.retrieval.retrieve import clean_question
from qa.sentences.evidence import FEATURES, EvidenceModel, lead_first
from qa.text.nlp import Tagger

FOLDS = 5
DEPTH = 20  # passages of the deepest pool gathered; smaller pools are its first k passages
POOL_SIZES = (5, 10, 15, 20)
# Reading budgets the recall is also measured at: (sentences, characters of excerpts).
BUDGETS = ((4, 1100), (5, 1400), (6, 1600), (8, 2200))
RESULTS = RUNS / "evidence_fit.json"
_RANK = FEATURES.index("passage_rank")


def pools(year: str, limit: int | None, root: Path = INDEXES, depth: int = DEPTH) -> list[dict]:
    """Per question with articles: its deep pool's sentence records, features, labels, passage ranks,
    and whether its articles hold the answer at all."""
    embedder = cache.CachingEmbedder(cache.build_embedder(), cache.DEFAULT_CACHE)
    tagger = cache.CachingTagger(Tagger(Config.from_env().indexing.nlp), cache.DEFAULT_CACHE)
    out = []
    questions = [q for q in data.load(data.rtqa_dir(year)) if q["articles"] and q["scored"]][:limit]
    for q in bar(questions, desc=f"pools of RealTime QA {year}", every=10):
        engine = question_engine(year, q, embedder, tagger, root)
        a = engine.answerer
        question = analyse(clean_question(q["question_sentence"], engine.config.retrieval.max_question_chars))
        hits = a.retriever.select(question.query, depth)
        gathered = a.gatherer.gather(question, hits, engine.config.retrieval.k, a.retriever.embed_query,
                                     q.get("day"))
        records = sorted(gathered.read, key=lambda s: (-s.score, s.id))  # the features' own order
        x = np.array([[s.features[f] for f in FEATURES] for s in records]).reshape(-1, len(FEATURES))
        y = np.array([m.contains_answer(s.text, [q["gold"]]) for s in records], dtype=bool)
        rank = np.rint(1 / x[:, _RANK] - 1).astype(int) if len(records) else np.zeros(0, dtype=int)
        out.append({"id": q["question_id"], "gold": q["gold"], "ids": records, "x": x, "y": y, "rank": rank,
                    "in_articles": any(m.contains_answer(t, [q["gold"]]) for t in q["articles"])})
    return out


def recall(pool: list[dict], scores: list[np.ndarray], sentences: int, budget: int, k: int = DEPTH,
           cited: int = 0) -> float:
    """The share of questions whose answer is in the excerpts the model reads from the first k
    passages' sentences, ranked by scores; with ``cited``, as the product reads them: the best
    sentence score of the first ``cited`` passages first (the rule sentences.lead_read_first)."""
    hits = 0
    for p, s in zip(pool, scores, strict=True):
        records = p["ids"]
        keep = np.flatnonzero(p["rank"] < k)
        cite = np.flatnonzero(p["rank"] < cited)
        lead = [records[i] for i in cite[np.argsort(-p["x"][cite, 0], kind="stable")[:1]]]
        ranked = lead_first([records[i] for i in keep[np.argsort(-s[keep], kind="stable")]], lead)
        read = excerpts(ranked, sentences, budget).sentences if ranked else []
        hits += any(m.contains_answer(r.text, [p["gold"]]) for r in read)
    return hits / max(1, len(pool))


def fit(pool: list[dict], k: int) -> EvidenceModel:
    """The logistic model over the sentences of these questions' first k passages."""
    from sklearn.linear_model import LogisticRegression

    x = np.vstack([p["x"][p["rank"] < k] for p in pool])
    y = np.concatenate([p["y"][p["rank"] < k] for p in pool])
    model = LogisticRegression(C=1.0, max_iter=5000).fit(x, y)
    return EvidenceModel(tuple(float(w) for w in model.coef_[0]), float(model.intercept_[0]))


def out_of_fold(pool: list[dict], k: int) -> list[np.ndarray]:
    """Each question's sentence scores from the model fitted on the other folds."""
    scores: list[np.ndarray] = [np.zeros(0)] * len(pool)
    for f in range(FOLDS):
        model = fit([p for i, p in enumerate(pool) if i % FOLDS != f], k)
        for i, p in enumerate(pool):
            if i % FOLDS == f:
                scores[i] = model.rank(p["x"])
    return scores


def report(pool: list[dict], config: Config) -> dict:
    """Recall at each budget for each pool size, unfitted and fitted out of fold."""
    unfitted = [EvidenceModel().rank(p["x"]) for p in pool]
    n = max(1, len(pool))
    by_pool: dict[str, dict] = {}
    for k in POOL_SIZES:
        fitted = out_of_fold(pool, k)
        by_pool[str(k)] = {
            "pool_holds_answer": round(sum(bool(p["y"][p["rank"] < k].any()) for p in pool) / n, 3),
            **{f"{s} sentences, {c} characters": {
                "unfitted": round(recall(pool, unfitted, s, c, k), 3),
                "fitted_oof": round(recall(pool, fitted, s, c, k), 3),
                "fitted_oof_cited_first": round(recall(pool, fitted, s, c, k, config.retrieval.k), 3)}
               for s, c in BUDGETS}}
    budget = f"{config.reading.reader_sentences} sentences, {config.reading.reader_budget} characters"
    shipped = by_pool.get(str(config.retrieval.read_k), {}).get(budget, {})
    r = config.reading
    return {"questions": len(pool), "features": list(FEATURES), "k": config.retrieval.k,
            "read_k": config.retrieval.read_k, "reader_sentences": r.reader_sentences,
            "reader_budget": r.reader_budget,
            "ceiling": round(sum(p["in_articles"] for p in pool) / n, 3),
            "recall_unfitted": shipped.get("unfitted"), "recall_fitted_oof": shipped.get("fitted_oof"),
            "recall_as_read": shipped.get("fitted_oof_cited_first"), "by_pool": by_pool}


def main(argv: list[str] | None = None) -> int:
    """Fit out of fold, print and save the figures; --write ships the model fitted on every question."""
    ap = argparse.ArgumentParser(prog="python -m eval fit-evidence", description=__doc__)
    ap.add_argument("--limit", type=int, help="only the first N questions of 2022 with search results")
    ap.add_argument("--write", action="store_true", help="write qa/sentences/evidence.json")
    ap.add_argument("--out", type=Path, default=RESULTS, help="the figures of the fit")
    args = ap.parse_args(argv)
    config = Config.from_env()
    pool = [p for p in pools("2022", args.limit, depth=max(DEPTH, config.retrieval.read_k)) if len(p["ids"])]
    figures = report(pool, config)
    print(json.dumps(figures, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(figures, indent=1) + "\n", "utf-8")
    if args.write:
        final = fit(pool, config.retrieval.read_k)
        path = write_shipped("evidence", {
            "features": list(FEATURES), "weights": [round(w, 5) for w in final.weights],
            "bias": round(final.bias, 5), "read_k": config.retrieval.read_k,
            "fitted": f"logistic regression on the sentences of the first {config.retrieval.read_k} passages "
                      "of "
                      f"{len(pool)} RealTime QA 2022 questions; refit with "
                      "`python -m eval fit-evidence --write`"})
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
