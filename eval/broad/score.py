"""A broad answer's figures: its vital and okay nuggets held, refusals, sentences without a
citation, words; and the set's figures in all and by kind."""

from __future__ import annotations

import re
from collections import defaultdict

from eval.broad.nuggets import Nugget, holds
from eval.quality import metrics as m

MARKER = re.compile(r"\[\d+\]")
# A sentence ends at . ! or ? (perhaps inside its closing quote: '...," he said' goes on) or its markers.
_SENTENCE_END = re.compile(r"(?:(?<=[.!?\]])|(?<=[.!?][”\"']))\s+(?=[A-Z“\"])|\n+")


def uncited(text: str, cited: tuple[str, ...] = ()) -> int:
    """Sentences of an answer's text that carry no [n] marker (a list's items and sides, lines;
    a verdict line of its own is not a sentence of the articles); a passage it cites whole, several
    sentences of a quotation among them, counts as one cited sentence."""
    for passage in sorted(cited, key=len, reverse=True):
        text = text.replace(passage, "Cited.")
    pieces = [p.strip(" -") for p in _SENTENCE_END.split(text) if p.strip(" -")]
    verdicts = {"Yes.", "No.", "The articles do not say clearly."}
    return sum(1 for p in pieces if p not in verdicts and not MARKER.search(p) and not _carried(p, pieces))


def _carried(piece: str, pieces: list[str]) -> bool:
    """A piece split off inside a cited sentence (an abbreviation's full stop) is cited with it."""
    at = pieces.index(piece)
    return at + 1 < len(pieces) and bool(MARKER.search(pieces[at + 1])) and len(piece.split()) < 6


def shown_sentences(text: str, cited: tuple[str, ...]) -> list[str]:
    """The cited sentences the answer's text shows (a copy cited beside one only by its marker is not)."""
    flat = " ".join(text.split())
    return [c for c in dict.fromkeys(" ".join(c.split()) for c in cited) if c and c in flat]


def record(q: dict, text: str, answered: bool, seconds: float, kind: str = "",
           cited: tuple[str, ...] = ()) -> dict:
    """One question's figures from the answer's text."""
    nuggets = [Nugget.of(n) for n in q["nuggets"]]
    vital = [n for n in nuggets if n.vital]
    held = [holds(n, text) for n in nuggets] if answered else [False] * len(nuggets)
    held_vital = [h for n, h in zip(nuggets, held, strict=True) if n.vital]
    # Sentences shown holding none of an answerable question's nuggets: what an answer pads itself with.
    shown = shown_sentences(text, cited) if answered and q["answerable"] else []
    bare = sum(not any(holds(n, s) for n in nuggets) for s in shown)
    return {"id": q["id"], "story": q["story"], "kind": q["kind"], "answered_kind": kind,
            "answerable": q["answerable"], "answered": answered,
            "vital": sum(held_vital) / len(vital) if vital else None,
            "all": sum(held) / len(nuggets) if nuggets else None,
            "full": all(held_vital) if vital else None, "uncited": uncited(text, cited) if answered else 0,
            "words": len(MARKER.sub("", text).split()) if answered else 0, "seconds": round(seconds, 3),
            "sentences": len(shown), "bare": bare}


def summary(records: list[dict]) -> dict:
    """The set's figures, in all and by kind."""
    out = _figures(records)
    by_kind: dict[str, list[dict]] = defaultdict(list)
    for r in records:
        by_kind[r["kind"]].append(r)
    out["by_kind"] = {k: _figures(v) for k, v in sorted(by_kind.items())}
    return out


def _figures(records: list[dict]) -> dict:
    answerable = [r for r in records if r["answerable"]]
    unanswerable = [r for r in records if not r["answerable"]]
    scored = [r for r in answerable if r["vital"] is not None]
    shown = [r for r in records if r["answered"]]
    return {
        "questions": len(records),
        "vital_recall": mean([r["vital"] for r in scored]),
        "all_recall": mean([r["all"] for r in answerable if r["all"] is not None]),
        "fully_answered": mean([float(r["full"]) for r in scored]),
        "false_refusals": sum(not r["answered"] for r in answerable),
        "answerable": len(answerable),
        "unanswerable_refused": sum(not r["answered"] for r in unanswerable),
        "unanswerable": len(unanswerable),
        "uncited_sentences": sum(r["uncited"] for r in records),
        "sentences_shown": sum(r.get("sentences", 0) for r in records),
        "sentences_without_nugget": sum(r.get("bare", 0) for r in records),
        "words_p50": m.percentile([r["words"] for r in shown], 50) if shown else 0,
        "seconds_p50": m.percentile([r["seconds"] for r in records], 50) if records else 0,
        "seconds_p95": m.percentile([r["seconds"] for r in records], 95) if records else 0,
    }


def mean(values: list[float]) -> float:
    return round(sum(values) / len(values), 4) if values else 0.0
