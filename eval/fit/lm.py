"""`python -m eval fit-lm`: calibrate the language-model reader on RealTime QA 2022 readings.

Reads the per-question records a `python -m eval realtimeqa` run logged (what the model wrote,
its token log-probabilities, whether its sentences held the right answer) and fits, out of fold:

- the confidence: P(the phrase is the right answer) from
  qa.readers.lm.calibration.TOKEN_FEATURES, a logistic regression;
- the no-answer score: P(the sentences the model read don't hold the answer) from the model's
  probability of declining and whether its phrase was in no sentence, a logistic regression;
- the decline threshold (QA_READER_DECLINE): the lowest no-answer score that refuses at most
  5% of the questions whose sentences hold the answer.
- the phrase's threshold (QA_READER_MIN_SHORT): the highest confidence whose EM as shown is
  within EM_TOLERANCE of the best (the precision rule, shown phrases right 0.80 of the time, is
  reported beside it), with the trade-off curve.

Both models go to qa/readers/lm/calibration.json (with --write, through eval/fit/shipped.py).

Both are fitted on 2022 (and confirmed on 2025 by `python -m eval realtimeqa --year 2025`).
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Callable
from pathlib import Path

import numpy as np

from eval.fit.shipped import write_shipped
from eval.paths import RUNS
from eval.progress import Steps
from eval.quality import metrics as m
from eval.realtimeqa.cache import records_log
from qa.readers.lm.calibration import CONFIDENCE_FEATURES, NO_ANSWER_FEATURES

FOLDS = 5
MAX_FALSE_REFUSALS = 0.05
MIN_SHOWN_PRECISION = 0.80  # the precision rule: a shown short answer is right at least this often
# The threshold shipped: the highest whose EM as shown is within this of the best, out of fold
# (on 2022 the precision rule shows almost nothing: docs/evaluation.md).
EM_TOLERANCE = 0.01
THRESHOLDS = [round(t, 2) for t in np.arange(0.05, 1.0, 0.05)]


def rows(records: list[dict]) -> dict[str, np.ndarray]:
    """Per question: the confidence features every record has (of CONFIDENCE_FEATURES),
    NO_ANSWER_FEATURES, the phrase's rightness, whether the sentences held the answer."""
    kept = [r for r in records if r.get("lm") and "logprob" in r["lm"] and r["scored"]]
    names = tuple(f for f in CONFIDENCE_FEATURES if all(f in r["lm"] for r in kept if r.get("short")))
    return {"names": names,  # type: ignore[dict-item]
            "x": np.array([[r["lm"].get(f, 0.0) for f in names] for r in kept], dtype=np.float64),
            "found": np.array([bool(r.get("short")) for r in kept]),  # a phrase found in a sentence
            # A phrase the user could be shown: a refused question shows none, whatever its confidence.
            "phrase": np.array([bool(r.get("short")) and bool(r.get("answered", True)) for r in kept]),
            "z": np.array([[r["lm"]["declined"], float(r["lm"].get("unverified") is not None)]
                           for r in kept], dtype=np.float64),
            "right": np.array([bool(r["short"]) and m.exact_match(r["short"], [r["gold"]]) == 1.0
                               for r in kept]),
            "given": np.array([bool(r.get("gold_given")) for r in kept])}


def unfit(right: np.ndarray, given: np.ndarray) -> str | None:
    """Why these records cannot be fitted out of fold (None when they can)."""
    if len(right) < 2 * FOLDS:
        return f"{len(right)} questions the model read, fewer than {2 * FOLDS}"
    if right.all() or not right.any():
        return f"its phrases are all {'right' if right.all() else 'wrong'}"
    if given.all() or not given.any():
        return f"the answer is in the sentences of {'every' if given.all() else 'no'} question"
    return None


def _folds(n: int) -> np.ndarray:
    return np.arange(n) % FOLDS


def fit(x: np.ndarray, y: np.ndarray) -> tuple[object, np.ndarray]:
    """A logistic model on all rows, and its out-of-fold probabilities."""
    from sklearn.linear_model import LogisticRegression

    oof = np.zeros(len(y))
    folds = _folds(len(y))
    for k in range(FOLDS):
        train, test = folds != k, folds == k
        fold = LogisticRegression(C=1.0, max_iter=2000).fit(x[train], y[train])
        oof[test] = fold.predict_proba(x[test])[:, 1]
    return LogisticRegression(C=1.0, max_iter=2000).fit(x, y), oof


def pick_decline(none: np.ndarray, given: np.ndarray) -> float:
    """The lowest threshold whose false refusals (refused though the answer was given) stay at 5%."""
    ok = [t for t in THRESHOLDS if given.any() and (none[given] >= t).mean() <= MAX_FALSE_REFUSALS]
    return min(ok) if ok else 1.0


def decline_oof(none: np.ndarray, given: np.ndarray) -> dict[str, float]:
    """Each fold refused at the threshold picked on the others: false refusals and refusal recall."""
    folds = _folds(len(given))
    refused = np.zeros(len(given), dtype=bool)
    for k in range(FOLDS):
        t = pick_decline(none[folds != k], given[folds != k])
        refused[folds == k] = none[folds == k] >= t
    return {"false_refusals": float(refused[given].mean()) if given.any() else 0.0,
            "refusal_recall": float(refused[~given].mean()) if (~given).any() else 0.0}


def pick_min_short(confidence: np.ndarray, right: np.ndarray, phrase: np.ndarray) -> float:
    """The lowest confidence from which shown phrases are right MIN_SHOWN_PRECISION of the time."""
    for t in THRESHOLDS:
        shown = phrase & (confidence >= t)
        if shown.sum() >= 5 and right[shown].mean() >= MIN_SHOWN_PRECISION:
            return t
    return 1.0


def pick_shown(confidence: np.ndarray, right: np.ndarray, phrase: np.ndarray) -> float:
    """The highest confidence threshold whose EM as shown is within EM_TOLERANCE of the best one's."""
    em = {t: float((right & phrase & (confidence >= t)).mean()) for t in THRESHOLDS}
    best = max(em.values())
    return max(t for t, e in em.items() if e >= best - EM_TOLERANCE)


def trade_off(confidence: np.ndarray, right: np.ndarray, phrase: np.ndarray) -> list[dict[str, float]]:
    """Shown share against precision (and EM as shown) for each threshold, out of fold."""
    out = []
    for t in THRESHOLDS:
        shown = phrase & (confidence >= t)
        out.append({"threshold": t, "shown": round(float(shown.mean()), 3),
                    "precision": round(float(right[shown].mean()), 3) if shown.any() else 0.0,
                    "em_as_shown": round(float((right & shown).mean()), 3)})
    return out


def min_short_oof(confidence: np.ndarray, right: np.ndarray, phrase: np.ndarray,
                  pick: Callable[[np.ndarray, np.ndarray, np.ndarray], float]) -> dict[str, float]:
    """Each fold shown at the threshold ``pick`` chose on the others: shown share, precision, EM as shown."""
    folds = _folds(len(right))
    shown = np.zeros(len(right), dtype=bool)
    for k in range(FOLDS):
        t = pick(confidence[folds != k], right[folds != k], phrase[folds != k])
        shown[folds == k] = phrase[folds == k] & (confidence[folds == k] >= t)
    return {"shown": float(shown.mean()), "precision": float(right[shown].mean()) if shown.any() else 0.0,
            "em_as_shown": float((right & shown).mean())}


def _model(model: object, names: tuple[str, ...]) -> dict:
    weights = model.coef_[0]  # type: ignore[attr-defined]
    return {"features": list(names), "weights": [round(float(w), 5) for w in weights],
            "bias": round(float(model.intercept_[0]), 5)}  # type: ignore[attr-defined]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval fit-lm", description=__doc__)
    ap.add_argument("--records", type=Path, default=records_log("2022"),
                    help="a realtimeqa run's records log (default: the last 2022 run's)")
    ap.add_argument("--out", type=Path, default=RUNS / "lm_fit.json", help="the figures of the fit")
    ap.add_argument("--write", action="store_true", help="write qa/readers/lm/calibration.json")
    args = ap.parse_args(argv)
    if not args.records.is_file():
        print(f"error: no records at {args.records}: run `python -m eval realtimeqa` first", file=sys.stderr)
        return 2
    steps = Steps("fit-lm", {"read the records": 2, "fit the confidence": 5, "fit the no-answer score": 5,
                             "pick the decline threshold": 2})
    steps.step("read the records", str(args.records))
    records = [json.loads(line) for line in args.records.open(encoding="utf-8") if line.strip()]
    d = rows(records)
    right, given, found = d["right"], d["given"], d["found"]
    problem = unfit(right, given) or unfit(right[found], given)
    try:
        if problem is None:
            # The confidence is only ever asked of a phrase found in a sentence: fitted on those.
            steps.step("fit the confidence", f"{int(found.sum())} phrases of {len(right)} questions")
            confidence, found_oof = fit(d["x"][found], right[found])
            oof = np.zeros(len(right))
            oof[found] = found_oof
            steps.step("fit the no-answer score")
            no_answer, none_oof = fit(d["z"], ~given)
    except ValueError as exc:  # a fold holding one class only
        problem = str(exc).split(":")[0]
    if problem is not None:
        print(f"error: {args.records}: {problem}: run more of `python -m eval realtimeqa` first",
              file=sys.stderr)
        return 2
    steps.step("pick the decline threshold")
    decline = pick_decline(none_oof, given)
    phrase = d["phrase"]
    min_short = pick_shown(oof, right, phrase)
    precise = pick_min_short(oof, right, phrase)
    report = {"questions": len(right), "phrases": int(found.sum()), "phrase_right": float(right.mean()),
              "min_short": min_short, "min_short_oof": min_short_oof(oof, right, phrase, pick_shown),
              "precision_rule": precise,
              "precision_rule_oof": min_short_oof(oof, right, phrase, pick_min_short),
              "trade_off_oof": trade_off(oof, right, phrase),
              "sentences_held_answer": float(given.mean()),
              "brier_oof": float(((oof[found] - right[found]) ** 2).mean()),
              "decline": decline,
              "decline_oof": decline_oof(none_oof, given),
              "confidence": _model(confidence, d["names"]),  # type: ignore[arg-type]
              "no_answer": _model(no_answer, NO_ANSWER_FEATURES)}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    print(json.dumps(report, indent=1))
    steps.finish()
    if args.write:
        path = write_shipped("lm_calibration", {
            "confidence": report["confidence"], "no_answer": report["no_answer"],
            "fitted": f"RealTime QA 2022, {len(right)} questions, `python -m eval fit-lm --write`; "
                      f"refuse from a no-answer score of {decline} (QA_READER_DECLINE), show the phrase "
                      f"from a confidence of {min_short} (QA_READER_MIN_SHORT), both in qa/config.py"})
        print(f"wrote {path}: set reader_decline = {decline} and reader_min_short = {min_short} in "
              "qa/config.py (the thresholds are named there once)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
