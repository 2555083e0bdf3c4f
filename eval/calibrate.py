"""Threshold calibration: sweep min_evidence over answerable vs unanswerable evidence scores."""

from __future__ import annotations


def sweep(records: list[dict]) -> list[dict[str, float]]:
    """Refusal quality at every candidate threshold (midpoints between observed evidence scores).

    Answer.evidence is the best sentence score whatever the threshold, so one run gives every
    threshold's outcome: a question is refused when its evidence is below the threshold.
    """
    scores = sorted({r["evidence_score"] for r in records})
    cuts = [scores[0] - 0.01, *[(a + b) / 2 for a, b in zip(scores, scores[1:], strict=False)],
            scores[-1] + 0.01]
    pos = [r["evidence_score"] for r in records if not r["answerable"]]
    neg = [r["evidence_score"] for r in records if r["answerable"]]
    rows = []
    for t in cuts:
        tp = sum(s < t for s in pos)  # rightly refused
        fp = sum(s < t for s in neg)  # falsely refused
        tpr = tp / len(pos) if pos else 0.0
        tnr = 1 - fp / len(neg) if neg else 0.0
        precision = tp / (tp + fp) if tp + fp else 0.0
        f1 = 2 * precision * tpr / (precision + tpr) if precision + tpr else 0.0
        rows.append({"threshold": round(t, 4), "balanced_accuracy": (tpr + tnr) / 2,
                     "refusal_recall": tpr, "false_refusal_rate": 1 - tnr, "refusal_f1": f1})
    return rows


def best(rows: list[dict[str, float]]) -> dict[str, float]:
    """The threshold with the highest balanced accuracy; ties go to the fewest false refusals."""
    return max(rows, key=lambda r: (round(r["balanced_accuracy"], 6), -r["false_refusal_rate"],
                                    r["refusal_f1"]))
