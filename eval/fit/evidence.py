"""`python -m eval fit-evidence`: fit what the language model reads first, on RealTime QA 2022.

Each question's own search results are indexed (dated, titled, as the product reads them); the
sentences of its reading pool (QA_READ_K passages) get qa/answering/evidence.py's features, and a
sentence is a positive when it holds the right choice's text. A logistic regression over those
features ranks the pool. Figures are out of fold (5 folds by question): recall at the reading
budget, the share of questions whose answer is in what the model reads, against the unfitted
ranking and the ceiling (the answer in the pool at all). --write ships qa/answering/evidence.json.
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
from qa.answering.evidence import FEATURES, EvidenceModel, features
from qa.question.parse import parse
from qa.readers.lm.excerpts import excerpts
from qa.retrieval.retrieve import clean_question
from qa.text.nlp import Tagger

FOLDS = 5
# Reading budgets the recall is also measured at: (sentences, characters of excerpts).
BUDGETS = ((4, 1100), (6, 1600), (8, 2200), (10, 2600), (12, 3200))
RESULTS = RUNS / "evidence_fit.json"


def pools(year: str, limit: int | None, root: Path = INDEXES) -> list[dict]:
    """Per question with articles: its pool's sentence ids, features, labels and its engine's index."""
    embedder = cache.CachingEmbedder(cache.build_embedder(), cache.DEFAULT_CACHE)
    tagger = cache.CachingTagger(Tagger(Config.from_env().nlp), cache.DEFAULT_CACHE)
    out = []
    questions = [q for q in data.load(data.rtqa_dir(year), limit) if q["articles"] and q["scored"]]
    for q in bar(questions, desc=f"pools of RealTime QA {year}", every=10):
        engine = question_engine(year, q, embedder, tagger, root)
        a = engine.answerer
        question = clean_question(q["question_sentence"], a.policy.max_question_chars)
        asked = parse(question, question)
        hits = a.retriever.select(question, max(a.policy.k, a.policy.read_k))
        ids, x = features(a.index, a.retriever.embed_query, asked, question, question, [i for i, _ in hits],
                          q.get("day"))
        y = np.array([m.contains_answer(a.index.sentence_text(s), [q["gold"]]) for s in ids])
        out.append({"id": q["question_id"], "gold": q["gold"], "ids": ids, "x": x, "y": y, "index": a.index})
    return out


def recall(pool: list[dict], scores: list[np.ndarray], sentences: int, budget: int) -> float:
    """The share of questions whose answer is in the excerpts the model reads, ranked by scores."""
    hits = 0
    for p, s in zip(pool, scores, strict=True):
        order = [(p["ids"][i], float(s[i])) for i in np.argsort(-s, kind="stable")] if len(s) else []
        read = excerpts(p["index"], order, sentences, budget).sentences if order else []
        hits += any(m.contains_answer(p["index"].sentence_text(sid), [p["gold"]]) for sid in read)
    return hits / max(1, len(pool))


def fit(xs: list[np.ndarray], ys: list[np.ndarray]) -> EvidenceModel:
    """The logistic model over the rows of these questions."""
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=1.0, max_iter=3000).fit(np.vstack(xs), np.concatenate(ys))
    return EvidenceModel(tuple(float(w) for w in model.coef_[0]), float(model.intercept_[0]))


def main(argv: list[str] | None = None) -> int:
    """Fit out of fold, print and save the figures; --write ships the model fitted on every question."""
    ap = argparse.ArgumentParser(prog="python -m eval fit-evidence", description=__doc__)
    ap.add_argument("--limit", type=int, help="only the first N questions of 2022")
    ap.add_argument("--write", action="store_true", help="write qa/answering/evidence.json")
    ap.add_argument("--out", type=Path, default=RESULTS, help="the figures of the fit")
    args = ap.parse_args(argv)
    config = Config.from_env()
    pool = [p for p in pools("2022", args.limit) if len(p["ids"])]
    oof: list[np.ndarray] = [np.zeros(0)] * len(pool)
    for f in range(FOLDS):
        train = [p for i, p in enumerate(pool) if i % FOLDS != f]
        model = fit([p["x"] for p in train], [p["y"] for p in train])
        for i, p in enumerate(pool):
            if i % FOLDS == f:
                oof[i] = model.rank(p["x"])
    budget, sentences = config.reader_budget, config.reader_sentences
    report = {"questions": len(pool), "features": list(FEATURES), "reader_budget": budget,
              "reader_sentences": sentences,
              "pool_holds_answer": sum(bool(p["y"].any()) for p in pool) / max(1, len(pool)),
              "recall_unfitted": recall(pool, [EvidenceModel().rank(p["x"]) for p in pool], sentences,
                                        budget),
              "recall_fitted_oof": recall(pool, oof, sentences, budget),
              "by_budget": {f"{n} sentences, {chars} characters": {
                  "unfitted": round(recall(pool, [EvidenceModel().rank(p["x"]) for p in pool], n, chars), 3),
                  "fitted_oof": round(recall(pool, oof, n, chars), 3)} for n, chars in BUDGETS}}
    print(json.dumps(report, indent=1))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    if args.write:
        final = fit([p["x"] for p in pool], [p["y"] for p in pool])
        path = write_shipped("evidence", {
            "features": list(FEATURES), "weights": [round(w, 5) for w in final.weights],
            "bias": round(final.bias, 5),
            "fitted": f"logistic regression on the reading pools of {len(pool)} RealTime QA 2022 questions; "
                      "refit with `python -m eval fit-evidence --write`"})
        print(f"wrote {path}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
