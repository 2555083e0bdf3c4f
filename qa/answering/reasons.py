"""Reasons: when a why-question's reading names none, the best sentence read that gives a cause."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from qa import rules
from qa.answering.cite import Fact, Pick, cited_sentences
from qa.answering.select import shown
from qa.sentences.record import Sentence
from qa.text.normalise import plain

CUES = tomllib.loads(Path(__file__).with_name("reason_cues.toml").read_text("utf-8"))


def _pattern(words: list[str]) -> re.Pattern[str]:
    parts = [re.escape(w[:-1]) + r"\w*" if w.endswith("*") else re.escape(w) for w in words]
    return re.compile(r"\b(" + "|".join(parts) + r")\b", re.I)


PATTERNS = {"answering.reason_cues": _pattern(CUES["cause"])}


def _stems(asked: str) -> set[str]:
    return {w[:5] for w in re.findall(r"\w+", asked.lower()) if len(w) > 3}


def _gives_reason(text: str, own: set[str]) -> bool:
    return any(m.group(0).lower()[:5] not in own
               for name, pattern in PATTERNS.items() if rules.on(name) for m in pattern.finditer(text))


def gives_reason(text: str, asked: str) -> bool:
    """True when the sentence has a word of cause or condition that is not the question's own
    ("rejected" in a sentence about "why did they reject…" restates the question)."""
    return _gives_reason(text, _stems(asked))


def with_reason(facts: list[Fact], given: tuple[Sentence, ...], scored: list[Pick],
                question: str) -> list[Fact]:
    """The facts, and after them the best-scored sentence gathered (read or not) that gives a cause
    or a condition, when none of the facts does: a why-question the model declined still cites a reason."""
    own = _stems(question)  # once per answer, not once per sentence
    cited = cited_sentences(facts)
    if any(_gives_reason(item.sentence.text, own) for group in facts for item in group):
        return facts
    said = {plain(item.sentence.text) for group in facts for item in group}
    score = {s.id: s.score for s in given} | {p.sentence.id: p.score for p in scored}
    reasons = [s for s in dict.fromkeys(given) if s.id not in cited and plain(s.text) not in said
               and shown(s) and _gives_reason(s.text, own)]
    if not reasons:
        return facts
    best = max(reasons, key=lambda s: score.get(s.id, 0.0))
    return [*facts, [Pick(best, score.get(best.id, 0.0))]]
