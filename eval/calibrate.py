"""Refusal calibration: min_evidence and hinge_evidence fitted on the question set, scored out of fold.

A question is refused when its evidence score is below min_evidence, when it asks for a count,
sum or share that no retrieved sentence holds (``lacks_kind``), or when it names something no
retrieved passage mentions (``missing``) and its evidence is below hinge_evidence. Each record
carries those signals whatever the thresholds, so one run scores every pair of thresholds.
"""

from __future__ import annotations

import math

FOLDS = 5
MAX_FALSE_REFUSALS = 0.05


def refused(r: dict, min_evidence: float, hinge_evidence: float) -> bool:
    """Whether the product would refuse this record at these thresholds."""
    e = r["evidence_score"]
    return e < min_evidence or r.get("lacks_kind", False) or (r.get("missing", False) and e < hinge_evidence)


def score(records: list[dict], t: float, h: float) -> dict[str, float]:
    """Refusal recall, false-refusal rate and balanced accuracy of one pair of thresholds."""
    pos = [r for r in records if not r["answerable"]]
    neg = [r for r in records if r["answerable"]]
    tpr = sum(refused(r, t, h) for r in pos) / len(pos) if pos else 0.0
    fpr = sum(refused(r, t, h) for r in neg) / len(neg) if neg else 0.0
    return {"min_evidence": round(t, 4), "hinge_evidence": round(h, 4), "refusal_recall": tpr,
            "false_refusal_rate": fpr, "balanced_accuracy": (tpr + 1 - fpr) / 2}


def _cuts(values: list[float]) -> list[float]:
    s = sorted(set(values))
    return [s[0] - 0.01, *[(a + b) / 2 for a, b in zip(s, s[1:], strict=False)], s[-1] + 0.01]


def sweep(records: list[dict]) -> list[dict[str, float]]:
    """Every pair of thresholds between observed evidence scores (hinge_evidence >= min_evidence)."""
    cuts = _cuts([r["evidence_score"] for r in records])
    return [score(records, t, h) for t in cuts for h in [c for c in cuts if c >= t] + [math.inf]]


def best(rows: list[dict[str, float]]) -> dict[str, float]:
    """The best balanced accuracy with false refusals at most 5% (else the fewest false refusals)."""
    ok = [r for r in rows if r["false_refusal_rate"] <= MAX_FALSE_REFUSALS] or rows
    return max(ok, key=lambda r: (round(r["balanced_accuracy"], 6), -r["false_refusal_rate"],
                                  -r["min_evidence"], -r["hinge_evidence"]))


def cross_validate(records: list[dict]) -> dict[str, float]:
    """Thresholds fitted on four folds, scored on the fifth: refusal figures out of fold."""
    refusals = false = 0
    pos = sum(not r["answerable"] for r in records)
    neg = len(records) - pos
    for f in range(FOLDS):
        train = [r for i, r in enumerate(records) if i % FOLDS != f]
        held = [r for i, r in enumerate(records) if i % FOLDS == f]
        b = best(sweep(train))
        refusals += sum(refused(r, b["min_evidence"], b["hinge_evidence"]) for r in held if not r["answerable"])
        false += sum(refused(r, b["min_evidence"], b["hinge_evidence"]) for r in held if r["answerable"])
    return {"refusal_recall": refusals / pos if pos else 0.0,
            "false_refusal_rate": false / neg if neg else 0.0, "folds": FOLDS}
