"""Search the answer-scoring weights on half the question set; report both halves.

Run: .venv/bin/python -m eval.tune [--trials 60]
Questions are split by id parity (even: tuning, odd: held out) so the held-out figures show
whether a weight change generalises or only fits the questions it was tuned on.
"""

from __future__ import annotations

import argparse
import dataclasses
import random

from eval import calibrate
from eval.harness import ROOT, ask_all, load_questions, temp_engine
from qa.reading.compose import Weights


def _score(records: list[dict]) -> dict[str, float]:
    answerable = [r for r in records if r["answerable"]]
    rows = calibrate.sweep(records)
    best = calibrate.best(rows)
    return {
        "contains": sum(r["contains"] for r in answerable) / len(answerable),
        "citation_precision": sum(r["citation_precision"] for r in answerable) / len(answerable),
        "balanced_accuracy": best["balanced_accuracy"],
        "threshold": best["threshold"],
    }


def _objective(s: dict[str, float]) -> float:
    return s["contains"] + s["citation_precision"] + s["balanced_accuracy"]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--trials", type=int, default=60)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    questions = load_questions()
    # Conversations stay whole: a follow-up is split with its first turn.
    def half(q: dict) -> int:
        key = q.get("conversation") or q["id"]
        return sum(map(ord, key)) % 2

    train = [q for q in questions if half(q) == 0]
    test = [q for q in questions if half(q) == 1]
    rng = random.Random(args.seed)
    with temp_engine(ROOT / "seeds") as engine:
        answerer = engine.answerer
        answerer.min_evidence = float("-inf")  # answer everything; the sweep sets the threshold

        def evaluate(weights: Weights, qs: list[dict]) -> dict[str, float]:
            answerer.weights = weights
            return _score(ask_all(engine, qs, "hybrid"))

        best_w = Weights()
        best_s = evaluate(best_w, train)
        print("default  train", best_s, "test", evaluate(best_w, test))
        for _ in range(args.trials):
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
