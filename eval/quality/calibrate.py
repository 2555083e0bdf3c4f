"""Refusal calibration: two thresholds fitted on the question set, and scored out of fold.

A question is refused when its evidence score is below min_evidence; when it asks for a count,
sum or share that no retrieved sentence holds (``lacks_kind``); or when it names something no
retrieved passage mentions (``missing``) and its evidence is below hinge_evidence. Each record
carries those signals whatever the thresholds, so one run scores every pair.
"""

from __future__ import annotations

import numpy as np

FOLDS = 5
MAX_FALSE_REFUSALS = 0.05
NAMES = ("min_evidence", "hinge_evidence")


def _signals(records: list[dict]) -> dict[str, np.ndarray]:
    return {"evidence": np.array([r["evidence_score"] for r in records]),
            "missing": np.array([r.get("missing", False) for r in records]),
            "lacks": np.array([r.get("lacks_kind", False) for r in records]),
            "answerable": np.array([r["answerable"] for r in records])}


def _grid(records: list[dict]) -> np.ndarray:
    """Candidate pairs: midpoints between observed evidence scores, hinge_evidence >= min_evidence."""
    e = np.unique([r["evidence_score"] for r in records])
    cuts = np.concatenate([[e[0] - 0.01], (e[1:] + e[:-1]) / 2, [e[-1] + 0.01]])
    t, h = np.meshgrid(cuts, np.append(cuts, np.inf), indexing="ij")
    keep = h >= t
    return np.stack([t[keep], h[keep]], axis=1)


def _refused(s: dict[str, np.ndarray], grid: np.ndarray) -> np.ndarray:
    """(thresholds, records) booleans: refused at each row of the grid."""
    t, h = grid[:, :1], grid[:, 1:2]
    e = s["evidence"][None]
    return (e < t) | s["lacks"][None] | (s["missing"][None] & (e < h))


def _fit(records: list[dict]) -> tuple[np.ndarray, dict[str, float]]:
    s = _signals(records)
    grid = _grid(records)
    refused = _refused(s, grid)
    pos, neg = ~s["answerable"], s["answerable"]
    recall = refused[:, pos].mean(axis=1) if pos.any() else np.zeros(len(grid))
    false = refused[:, neg].mean(axis=1) if neg.any() else np.zeros(len(grid))
    balanced = (recall + 1 - false) / 2
    ok = false <= MAX_FALSE_REFUSALS
    # Best balanced accuracy within the false-refusal budget; ties: the loosest thresholds.
    order = np.lexsort((-grid[:, 1], -grid[:, 0], -false, np.round(balanced, 6), ok))
    i = order[-1]
    return grid[i], {"refusal_recall": float(recall[i]), "false_refusal_rate": float(false[i]),
                     "balanced_accuracy": float(balanced[i])}


def best(records: list[dict]) -> dict[str, float]:
    """The thresholds fitted on all records, with their refusal figures on them."""
    thresholds, figures = _fit(records)
    return {**{n: round(float(v), 4) for n, v in zip(NAMES, thresholds, strict=True)}, **figures}


def cross_validate(records: list[dict]) -> dict[str, float]:
    """Thresholds fitted on four folds, scored on the fifth: refusal figures out of fold."""
    refusals = false = 0
    pos = sum(not r["answerable"] for r in records)
    neg = len(records) - pos
    for f in range(FOLDS):
        train = [r for i, r in enumerate(records) if i % FOLDS != f]
        held = [r for i, r in enumerate(records) if i % FOLDS == f]
        thresholds, _ = _fit(train)
        refused = _refused(_signals(held), thresholds[None])[0]
        refusals += sum(x for x, r in zip(refused, held, strict=True) if not r["answerable"])
        false += sum(x for x, r in zip(refused, held, strict=True) if r["answerable"])
    return {"refusal_recall": refusals / pos if pos else 0.0,
            "false_refusal_rate": false / neg if neg else 0.0, "folds": FOLDS}
