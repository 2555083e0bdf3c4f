"""A RealTime QA run's figures from its records: EM and F1 by prediction policy, multiple choice,
what the language model was given and wrote."""

from __future__ import annotations

import numpy as np

from eval.quality import metrics as m
from eval.report import loss
from qa import Config
from qa.readers.lm.calibration import TOKEN_FEATURES, default_calibration


def confidence(r: dict) -> float:
    """The phrase's confidence under the calibration shipped now (qa/readers/lm/calibration.json),
    from the token features the run recorded: a refit needs no new run."""
    lm = r.get("lm") or {}
    if r.get("short") is None or not all(f in lm for f in TOKEN_FEATURES):
        return r.get("confidence", 0.0)
    return default_calibration().confidence(lm)


def predictions(r: dict, min_short: float) -> dict[str, str]:
    """The candidate predictions of one record, by policy: "as_shown" is what the user saw (the
    short answer shown, else nothing), the others what a reader said, whatever was shown."""
    fallback = r["short"] if r["short"] is not None else r["first_cited"]
    shown = r["short"] if confidence(r) >= min_short else None
    return {"as_shown": r.get("shown") or "", "short_or_sentence": fallback, "short_only": r["short"] or "",
            "short_if_confident": shown or "", "span_reader": r.get("span_short") or ""}


def summarize(records: list[dict]) -> dict:
    """EM/F1 per prediction policy over scored questions, answer-bearing rate, MC accuracy."""
    scored = [r for r in records if r["scored"]]
    # The language model's phrases are shown on its own calibration and threshold.
    min_short = Config.from_env().reading.reader_min_short
    out: dict = {"questions": len(records), "scored": len(scored), "policies": {}}
    for policy in predictions(records[0], min_short):
        preds = [(predictions(r, min_short)[policy], [r["gold"]]) for r in scored]
        out["policies"][policy] = {"em": sum(m.exact_match(p, g) for p, g in preds) / max(1, len(preds)),
                                   "f1": sum(m.token_f1(p, g) for p, g in preds) / max(1, len(preds))}
    bearing = sum(m.contains_answer(r["first_cited"], [r["gold"]]) for r in records)
    out["answer_bearing"] = bearing / len(records)
    out["gold_given"] = sum(bool(r.get("gold_given")) for r in records) / len(records)
    out["candidate_recall"] = sum(bool(r.get("in_candidates")) for r in records) / len(records)
    shown = [r for r in scored if r["short"] and confidence(r) >= min_short]
    out["short_shown"] = len(shown) / max(1, len(scored))
    out["short_shown_precision"] = (sum(m.exact_match(r["short"], [r["gold"]]) for r in shown)
                                    / len(shown)) if shown else 0.0
    out["mc_accuracy"] = sum(r["mc"] == r["mc_right"] for r in records) / len(records)
    nota = [r for r in records if r.get("nota_right") is not None]
    if nota:
        out["nota_mc_accuracy"] = sum(r.get("nota_mc") == r["nota_right"] for r in nota) / len(nota)
    lm = [r for r in records if r.get("lm")]
    read = [r["lm"] for r in lm]
    out["lm_read"] = len(read) / len(records)
    # The model wrote "not in the articles": no phrase, shown or unverified (older logs lack the flag).
    out["lm_declined"] = sum(r["lm"].get("wrote_declined", r["short"] is None
                                         and r["lm"].get("unverified") is None) for r in lm) / max(1, len(lm))
    out["lm_unverified"] = sum(x.get("unverified") is not None for x in read) / max(1, len(read))
    times = [x["read_ms"] for x in read if "read_ms" in x]
    out["lm_read_ms_p50"] = float(np.median(times)) if times else 0.0
    out["answered_at_threshold"] = sum(r["answered"] for r in records) / len(records)
    if all("gold_in_pool" in r for r in records):
        out["loss"] = loss.table([loss.rtqa_bucket(r) for r in records])
    return out
