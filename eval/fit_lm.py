"""`python -m eval fit-lm`: calibrate the language-model reader on RealTime QA 2022 readings.

Reads the per-question records a `python -m eval realtimeqa` run logged (what the model wrote,
its token log-probabilities, whether its sentences held the right answer) and fits, out of fold:

- the confidence: P(the phrase is the right answer) from qa.reading.lm_reader.FEATURES, a
  logistic regression (qa/reading/lm_calibration.json);
- the decline threshold (QA_READER_DECLINE): the smallest P(the model declines) that refuses at
  most 5% of the questions whose sentences hold the answer.

Both are fitted on 2022 (and confirmed on 2025 by `python -m eval realtimeqa --year 2025`).
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

import numpy as np

from eval import metrics as m
from eval.cache import records_log
from eval.paths import RUNS
from qa.reading.lm_reader import CALIBRATION_FILE, FEATURES

FOLDS = 5
MAX_FALSE_REFUSALS = 0.05
THRESHOLDS = [round(t, 2) for t in np.arange(0.05, 1.0, 0.05)]


def rows(records: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Features, rightness of the phrase, whether the sentences held the answer, and P(decline)."""
    kept = [r for r in records if r.get("lm") and "logprob" in r["lm"] and r["scored"]]
    x = np.array([[r["lm"][f] for f in FEATURES] for r in kept], dtype=np.float64)
    right = np.array([bool(r["short"]) and m.exact_match(r["short"], [r["gold"]]) == 1.0 for r in kept])
    given = np.array([bool(r.get("gold_given")) for r in kept])
    return x, right, given, np.array([r["lm"]["no_answer"] for r in kept])


def _folds(n: int) -> np.ndarray:
    return np.arange(n) % FOLDS


def fit_confidence(x: np.ndarray, right: np.ndarray) -> tuple[object, np.ndarray]:
    """The logistic model on all rows, and its out-of-fold probabilities."""
    from sklearn.linear_model import LogisticRegression

    oof = np.zeros(len(right))
    folds = _folds(len(right))
    for k in range(FOLDS):
        train, test = folds != k, folds == k
        fold = LogisticRegression(C=1.0, max_iter=2000).fit(x[train], right[train])
        oof[test] = fold.predict_proba(x[test])[:, 1]
    return LogisticRegression(C=1.0, max_iter=2000).fit(x, right), oof


def pick_decline(declined: np.ndarray, given: np.ndarray) -> float:
    """The lowest threshold whose false refusals (refused though the answer was given) stay at 5%."""
    ok = [t for t in THRESHOLDS if given.any() and (declined[given] >= t).mean() <= MAX_FALSE_REFUSALS]
    return min(ok) if ok else 1.0


def decline_oof(declined: np.ndarray, given: np.ndarray) -> dict[str, float]:
    """Each fold refused at the threshold picked on the others: false refusals and refusal recall."""
    folds = _folds(len(given))
    refused = np.zeros(len(given), dtype=bool)
    for k in range(FOLDS):
        t = pick_decline(declined[folds != k], given[folds != k])
        refused[folds == k] = declined[folds == k] >= t
    return {"false_refusals": float(refused[given].mean()) if given.any() else 0.0,
            "refusal_recall": float(refused[~given].mean()) if (~given).any() else 0.0}


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval fit-lm", description=__doc__)
    ap.add_argument("--records", type=Path, default=records_log("2022"),
                    help="a realtimeqa run's records log (default: the last 2022 run's)")
    ap.add_argument("--out", type=Path, default=RUNS / "lm_fit.json", help="the figures of the fit")
    ap.add_argument("--write", action="store_true", help="write qa/reading/lm_calibration.json")
    args = ap.parse_args(argv)
    if not args.records.is_file():
        print(f"error: no records at {args.records}: run `python -m eval realtimeqa` first", file=sys.stderr)
        return 2
    records = [json.loads(line) for line in args.records.open(encoding="utf-8") if line.strip()]
    x, right, given, declined = rows(records)
    model, oof = fit_confidence(x, right)
    by_threshold = {}
    for t in (0.2, 0.3, 0.4, 0.5, 0.6):
        shown = oof >= t
        by_threshold[str(t)] = {"shown": float(shown.mean()), "precision": float(right[shown].mean())
                                if shown.any() else 0.0, "em": float((right & shown).mean())}
    decline = pick_decline(declined, given)
    report = {"questions": len(right), "phrase_right": float(right.mean()), "sentences_held_answer":
              float(given.mean()), "brier_oof": float(((oof - right) ** 2).mean()),
              "by_confidence_oof": by_threshold, "decline": decline,
              "decline_oof": decline_oof(declined, given),
              "weights": dict(zip(FEATURES, (round(float(w), 4) for w in model.coef_[0]), strict=True)),
              "bias": round(float(model.intercept_[0]), 4)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    print(json.dumps(report, indent=1))
    if args.write:
        CALIBRATION_FILE.write_text(json.dumps(
            {"features": list(FEATURES), "weights": [round(float(w), 5) for w in model.coef_[0]],
             "bias": round(float(model.intercept_[0]), 5),
             "fitted": f"RealTime QA 2022, {len(right)} questions, `python -m eval fit-lm --write`; "
                       f"set QA_READER_DECLINE={decline} (qa/config.py)"}, indent=1) + "\n", "utf-8")
        print(f"wrote {CALIBRATION_FILE}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
