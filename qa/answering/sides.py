"""A comparison: each side's position attributed to its side, in the articles' own sentences."""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from qa import rules
from qa.answering.compose import Draft
from qa.answering.layout import Piece
from qa.answering.shapes import Broad
from qa.question.record import Question
from qa.readers.base import Reading
from qa.sentences.record import Sentence

ACTORS = frozenset({"PERSON", "ORG", "NORP", "GPE"})  # who takes a side in news
SIDES = 3  # sides compared at most
# Two things the question sets side by side: "how do the plane and the helicopter compare", "between
# the north and south", "the government's and the insurgents' demands".
_POSSESSIVE = r"(?:'s|’s|'|’)?"
PAIR = re.compile(rf"\b(?:between|how (?:do|does|did|would|will|is|are|was|were))\s+(?:the\s+)?([\w-]+?)"
                  rf"{_POSSESSIVE}\s+and\s+(?:the\s+)?([\w-]+?){_POSSESSIVE}(?=[\s?.,;]|$)", re.IGNORECASE)


class Comparison(Broad):
    """Each side's most relevant sentence that names it, labelled with the side; the sides are those
    the question names, else the actors the relevant sentences name most."""

    lead_weight = 0.0
    fills = True

    def pieces(self, draft: Draft, reading: Reading) -> tuple[list[Piece], str | None]:
        candidates = self.candidates(draft)
        value = self.relevance(draft, candidates)
        ranked = sorted(candidates, key=lambda s: -value[s.id])
        parts, used = [], set()
        for side in sides_of(draft.question, ranked[:12]):
            theirs = [s for s in ranked if side.lower() in s.text.lower() and s.id not in used]
            if theirs:
                used.add(theirs[0].id)
                parts.append(Piece((theirs[0],), label=side[:1].upper() + side[1:]))  # "North: …"
        if len(parts) < 2:  # one side, or none, is named: the question is answered as a summary
            return super().pieces(draft, reading)
        return parts, None

    def with_more(self, pieces: list[Piece], extra: list[Sentence]) -> list[Piece]:
        """Each further sentence with the first side it names (after the sides, unlabelled, if none)."""
        out = list(pieces)
        rest: list[Sentence] = []
        for s in extra:
            at = next((i for i, p in enumerate(out) if p.label and p.label.lower() in s.text.lower()), None)
            if at is None:
                rest.append(s)
            else:
                out[at] = replace(out[at], sentences=(*out[at].sentences, s))
        return [*out, Piece(tuple(rest))] if rest else out


def paired(text: str) -> list[str]:
    """The two things a question sets side by side in its words, names or not ("How do the plane and
    the helicopter compare?": the plane, the helicopter), or none."""
    m = PAIR.search(text)
    return [m.group(1), m.group(2)] if m else []


def sides_of(question: Question, sentences: Sequence[Sentence]) -> list[str]:
    """The sides to compare: the names the question gives, else the two things it sets side by side,
    else the actors most named in the sentences (none of them part of another: "Ghani" and "Ashraf
    Ghani" are one side)."""
    named = [h for h in question.named if h[:1].isupper() and not h.isdigit()]
    if len(named) >= 2:
        return named[:SIDES]
    if (pair := paired(question.text)) and rules.on("answering.sides_asked"):
        return pair
    counts: Counter[str] = Counter()
    for s in sentences:
        offset = s.start
        found = {s.text[a - offset:b - offset].removeprefix("the ").strip() for a, b, label, *_ in s.tags
                 if label in ACTORS}
        counts.update(f for f in found if f)
    sides: list[str] = [*named]
    for name, _ in counts.most_common():
        if not any(name.lower() in o.lower() or o.lower() in name.lower() for o in sides):
            sides.append(name)
        if len(sides) >= 2:
            break
    return sides[:SIDES]
