"""Search the sentence-scoring weights on half the question set; report both halves.

Run: .venv/bin/python -m eval.quality.tune [--trials 60] [--seed 0] [--reader spans]

Questions are split by conversation or id (one half tunes, the other is held out), so the
held-out figures show whether a weight change generalises or only fits the questions it was
tuned on. Every question is answered through QA.answer with no evidence threshold; the
refusal thresholds are refitted on each trial's records (eval/quality/calibrate.py). The span
reader reads by default: the weights score the sentences both readers read, and it answers
in milliseconds.
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import random
from collections.abc import Iterator
from contextlib import contextmanager

from eval.paths import eval_articles
from eval.progress import bar
from eval.quality import calibrate
from eval.quality.harness import ask_all, load_questions, temp_engine
from qa import QA
from qa.sentences import gather, scoring
from qa.sentences.scoring import Weights


def _score(records: list[dict]) -> dict[str, float]:
    answerable = [r for r in records if r["answerable"]]
    best = calibrate.best(records)
    return {"contains": sum(r["contains"] for r in answerable) / len(answerable),
            "citation_precision": sum(r["citation_precision"] for r in answerable) / len(answerable),
            "balanced_accuracy": best["balanced_accuracy"], "min_evidence": best["min_evidence"],
            "hinge_evidence": best["hinge_evidence"]}


def _objective(s: dict[str, float]) -> float:
    return s["contains"] + s["citation_precision"] + s["balanced_accuracy"]


@contextmanager
def scored_with(weights: Weights) -> Iterator[None]:
    """Answers whose sentences are scored with these weights (the product's are module defaults)."""
    original = gather.scores
    gather.scores = functools.partial(scoring.scores, w=weights)  # type: ignore[assignment]
    try:
        yield
    finally:
        gather.scores = original  # type: ignore[assignment]


def half(q: dict) -> int:
    """0 (tuning) or 1 (held out); conversations stay whole, a follow-up with its first turn."""
    key = q.get("conversation") or q["id"]
    return sum(map(ord, key)) % 2


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--reader", default="spans", choices=["spans", "lm"])
    args = parser.parse_args()
    questions = load_questions()
    train = [q for q in questions if half(q) == 0]
    test = [q for q in questions if half(q) == 1]
    rng = random.Random(args.seed)
    with temp_engine(eval_articles(), min_evidence=-1e9, hinge_evidence=-1e9, reader=args.reader,
                     read_timeout=600.0) as engine:

        def evaluate(weights: Weights, qs: list[dict], e: QA = engine) -> dict[str, float]:
            with scored_with(weights):
                return _score(ask_all(e, qs, "hybrid"))

        best_w = Weights()
        best_s = evaluate(best_w, train)
        print("default  train", best_s, "test", evaluate(best_w, test))
        for _ in bar(range(args.trials), desc="trials", unit="trial"):
            changes = {f.name: max(0.0, getattr(best_w, f.name) * rng.uniform(0.5, 1.6)
                                   + rng.uniform(-0.05, 0.05))
                       for f in dataclasses.fields(Weights) if rng.random() < 0.5}
            candidate = dataclasses.replace(best_w, **changes)
            s = evaluate(candidate, train)
            if _objective(s) > _objective(best_s):
                best_w, best_s = candidate, s
                print(f"better {_objective(s):.3f}", s)
        print("best weights", best_w)
        print("best train", best_s)
        print("best test ", evaluate(best_w, test))


if __name__ == "__main__":
    main()
