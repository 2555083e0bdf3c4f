"""The shapes of broad answers, each chosen from the sentence records and each sentence cited: an
overview or a summary, a list, what comes next, a definition, a comparison of sides, a yes or no."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from qa import rules
from qa.answer import Answer
from qa.answering.compose import Composer, Draft, Shown
from qa.answering.layout import Piece, broad_answer
from qa.answering.select import centrality, mmr, newest_first, shown
from qa.readers.base import Reading
from qa.sentences.record import Sentence

WORDS = 120  # a broad answer stops adding sentences past this many words
FUTURE = re.compile(r"\b(will|would|is expected|are expected|expects? to|plans? to|planned|is set to|"
                    r"are set to|scheduled|next (week|month|year|step|round|phase)|upcoming|to begin|"
                    r"to start|to resume|deadline|later this|in the coming|due to (start|begin|be)|"
                    r"pending)\b", re.I)
APPOSITIVE = r",\s+((?:a|an|the|who|whose|which)\b[^,.;]{3,120})[,.;]"
COPULA = r"\s+(?:is|was|are|were)\s+((?:a|an|the)\b[^,.;]{3,120})[,.;]"


class Broad(Composer):
    """An overview or a summary: the story's main facts, central and relevant, no two alike, the
    newest article's account first."""

    most = 5  # sentences at most
    lead_weight = 0.2  # how much an article's first sentences count over the rest

    def compose(self, draft: Draft, reading: Reading, shown: Shown | None = None) -> Answer:
        pieces, short = self.pieces(draft, reading)
        return broad_answer(draft, pieces, reading, shown or Shown(), self.verdict(reading), short)

    def verdict(self, reading: Reading) -> str | None:
        """The verdict the answer leads with (yes/no questions only)."""
        return None

    def candidates(self, draft: Draft) -> list[Sentence]:
        """The sentences the answer may show: the pool's and the articles' first ones, no furniture
        (the first ones alone for a question naming no topic: the pool was found for no topic)."""
        seen: dict[int, Sentence] = {}
        evidence = draft.evidence
        pool = evidence.read if draft.question.topic or not evidence.leads else ()
        for s in (*evidence.leads, *pool):
            if s.id not in seen and shown(s):
                seen[s.id] = s
        return list(seen.values())

    def relevance(self, draft: Draft, candidates: Sequence[Sentence]) -> dict[int, float]:
        """How much each candidate belongs in the answer: relevant to the topic, central to the story
        and, in news, told first."""
        lead = {s.id for s in draft.evidence.leads}
        central = _scaled(centrality(candidates))
        if draft.question.topic or not draft.evidence.leads:
            topical = _scaled(np.array([s.score for s in candidates]))
        else:  # "What is this about?": no topic, the story's centre
            topical = central
        return {s.id: 0.6 * t + 0.4 * c + self.lead_weight * (s.id in lead)
                for s, t, c in zip(candidates, topical, central, strict=True)}

    def pieces(self, draft: Draft, reading: Reading) -> tuple[list[Piece], str | None]:
        """The answer's parts and its short answer."""
        chosen = self.choose(draft, self.candidates(draft))
        return [Piece(tuple(newest_first(chosen)))] if chosen else [], None

    def choose(self, draft: Draft, candidates: Sequence[Sentence]) -> list[Sentence]:
        """The most relevant sentences unlike each other, within the answer's length."""
        value = self.relevance(draft, candidates)
        picked = mmr(candidates, lambda s: value[s.id], self.most)
        kept: list[Sentence] = []
        for s in picked:
            if kept and sum(len(k.text.split()) for k in kept) + len(s.text.split()) > WORDS:
                break
            kept.append(s)
        return kept


class Listing(Broad):
    """A list: each item a sentence of its own, cited."""

    lead_weight = 0.0

    def pieces(self, draft: Draft, reading: Reading) -> tuple[list[Piece], str | None]:
        chosen = self.choose(draft, self.candidates(draft))
        return [Piece((s,), item=True) for s in chosen], None


def says_ahead(text: str) -> bool:
    """Whether a sentence says what is planned, expected or scheduled."""
    return rules.on("answering.future_cues") and FUTURE.search(text) is not None


class Next(Broad):
    """What comes next: the sentences that say what is planned, expected or scheduled."""

    most = 3
    lead_weight = 0.0

    def candidates(self, draft: Draft) -> list[Sentence]:
        found = super().candidates(draft)
        return [s for s in found if says_ahead(s.text)] or found


class Definition(Broad):
    """Who or what something is: the sentence that defines it (an appositive, "X is a ..."), its
    definition as the short answer."""

    most = 2
    lead_weight = 0.0

    def pieces(self, draft: Draft, reading: Reading) -> tuple[list[Piece], str | None]:
        name = draft.question.topic
        candidates = self.candidates(draft)
        named = [s for s in candidates if name and name.lower() in s.text.lower()] or candidates
        best = max(named, key=lambda s: (_definition(s.text, name) is not None, s.score), default=None)
        if best is None:
            return [], None
        rest = [s for s in self.choose(draft, [s for s in named if s.id != best.id])][:self.most - 1]
        return [Piece((best, *rest))], _definition(best.text, name)


class YesNo(Broad):
    """A yes or a no (or that the articles do not say clearly), decided by the reader, then the
    sentences it stands on, cited: never a bare yes or no."""

    most = 3
    lead_weight = 0.0

    def verdict(self, reading: Reading) -> str | None:
        return reading.verdict  # None when the model could not read: the sentences alone, with a notice

    def pieces(self, draft: Draft, reading: Reading) -> tuple[list[Piece], str | None]:
        """The sentences the verdict was read from, the most relevant first."""
        given = [s for s in reading.given if shown(s)] or self.candidates(draft)
        chosen = self.choose(draft, given)
        return ([Piece(tuple(chosen))] if chosen else []), None


def _definition(text: str, name: str) -> str | None:
    """What a sentence says the name is ("Abdullah Abdullah, Ghani's rival, ..." -> "Ghani's rival")."""
    if not name:
        return None
    for pattern in (re.escape(name) + APPOSITIVE, re.escape(name) + COPULA):
        if m := re.search(pattern, text, re.IGNORECASE):
            return m.group(1).strip()
    return None


def _scaled(values: np.ndarray) -> np.ndarray:
    """Values scaled to 0..1 (all equal: all 1)."""
    if not len(values):
        return values
    low, high = float(values.min()), float(values.max())
    return np.ones_like(values) if high - low < 1e-9 else (values - low) / (high - low)
