"""Where a broad answer's vital nuggets are lost: shown; in the pool of sentences its answer is
chosen from, but not chosen; in the articles, but not in that pool; or not in the articles as the
nugget's words are matched. The pool is the product's own draft of the question (``QA.answerer``)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from eval.broad.nuggets import Nugget, holds
from qa import QA, Answer

STAGES = ("shown", "in the pool, not chosen", "in the articles, not in the pool", "not in the articles")


def stage(nugget: Nugget, answer: str, pool: Sequence[str], articles: Sequence[str]) -> str:
    """The first of STAGES that holds the nugget: the answer, a sentence of the pool, an article."""
    if holds(nugget, answer):
        return STAGES[0]
    if any(holds(nugget, text) for text in pool):
        return STAGES[1]
    return STAGES[2] if any(holds(nugget, text) for text in articles) else STAGES[3]


def lost(engine: QA, q: dict, answer: str, history: Sequence[tuple[str, Answer]] = ()) -> list[str]:
    """Where each vital nugget of an answered question is, its pool drafted as the product drafts it
    after the question's earlier turns (history, as it was asked)."""
    draft = engine.answerer.draft(q["question"], list(history) or None, "hybrid", None, None)
    pool = [s.text for s in (*draft.evidence.leads, *draft.evidence.read)]
    articles = [a.text for a in engine.index.articles.values()]
    return [stage(Nugget.of(n), answer, pool, articles) for n in q["nuggets"] if n["vital"]]


def tally(records: Sequence[dict]) -> dict:
    """How many vital nuggets are at each stage, in all and by kind (records with a "where" list)."""
    kinds: dict[str, Counter[str]] = {}
    for r in records:
        kinds.setdefault(r["kind"], Counter()).update(r.get("where", ()))
    total: Counter[str] = sum(kinds.values(), Counter())
    return {"all": {s: total[s] for s in STAGES},
            "by_kind": {k: {s: c[s] for s in STAGES} for k, c in kinds.items()}}
