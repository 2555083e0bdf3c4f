"""The shapes of broad answers, each chosen from the sentence records and each sentence cited: an
overview or a summary, a list, what comes next, a definition, a comparison of sides, a yes or no."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from qa import rules
from qa.answer import Answer
from qa.answering.compose import Composer, Draft, Shown, refused
from qa.answering.layout import Piece, broad_answer
from qa.answering.select import (
    WORDS,
    centrality,
    covers,
    mmr,
    more,
    names_in,
    newest_first,
    on_topic,
    passes_over,
    shown,
    words,
)
from qa.readers.base import Reading
from qa.sentences.record import Sentence
from qa.text.nlp import NOUN_CHUNK

FUTURE = re.compile(r"\b(will|would|is expected|are expected|expects? to|plans? to|planned|is set to|"
                    r"are set to|scheduled|next (week|month|year|step|round|phase)|upcoming|to begin|"
                    r"to start|to resume|deadline|later this|in the coming|due to (start|begin|be)|"
                    r"pending)\b", re.I)
APPOSITIVE = r",\s+((?:a|an|the|who|whose|which)\b[^,.;]{3,120})[,.;]"
COPULA = r"\s+(?:is|was|are|were)\s+((?:a|an|the)\b[^,.;]{3,120})[,.;]"
ROLE_WORDS = 10  # a title longer than this is a clause, not a role
NAMED = frozenset({"person", "org", "place", "facility"})  # what a list of names asks for


class Broad(Composer):
    """An overview or a summary: the story's main facts, central and relevant, no two alike, the
    newest article's account first."""

    most = 5  # sentences at most
    lead_weight = 0.2  # how much an article's first sentences count over the rest
    # How much the question's topic counts against the story's centre (the rest): chosen on the broad
    # set's seeds questions among 0.2, 0.4, 0.6 and 0.85, confirmed on its other stories.
    topic_weight = 0.4
    fills = False  # whether the answer adds the pool's best sentences after its own (``broad_fill``)

    def compose(self, draft: Draft, reading: Reading, shown: Shown | None = None) -> Answer:
        pieces, short = self.pieces(draft, reading)
        if not pieces and draft.question.seen:  # a request for more, and nothing more on it
            return refused(draft, "no_more", {}, reading)
        if self.fills and pieces:
            chosen = [s for p in pieces for s in p.sentences]
            if extra := more(draft.evidence.read, chosen, self.policy.broad_fill, draft.question):
                pieces = self.with_more(pieces, extra)
        return broad_answer(draft, pieces, reading, shown or Shown(), self.verdict(draft, reading), short)

    def with_more(self, pieces: list[Piece], extra: list[Sentence]) -> list[Piece]:
        """The answer's parts with the pool's further sentences after them."""
        return [*pieces, Piece(tuple(extra))]

    def verdict(self, draft: Draft, reading: Reading) -> str | None:
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
        found = list(seen.values())
        # More of an answer is more on its question, not the story's centre beside it.
        q = draft.question
        return [s for s in found if on_topic(s, q)] if q.seen and q.topic else found

    def relevance(self, draft: Draft, candidates: Sequence[Sentence]) -> dict[int, float]:
        """How much each candidate belongs in the answer: relevant to the topic, central to the story
        and, in news, told first."""
        lead = {s.id for s in draft.evidence.leads}
        central = _scaled(centrality(candidates))
        if draft.question.topic or not draft.evidence.leads:
            topical = _scaled(np.array([s.score for s in candidates]))
        else:  # "What is this about?": no topic, the story's centre
            topical = central
        # More of an answer goes deeper on its topic: the story's centre was the first answer's.
        w = 1.0 if draft.question.seen else self.topic_weight
        return {s.id: w * t + (1 - w) * c + self.lead_weight * (s.id in lead)
                for s, t, c in zip(candidates, topical, central, strict=True)}

    def pieces(self, draft: Draft, reading: Reading) -> tuple[list[Piece], str | None]:
        """The answer's parts and its short answer."""
        chosen = self.choose(draft, self.candidates(draft))
        return [Piece(tuple(newest_first(chosen)))] if chosen else [], None

    def choose(self, draft: Draft, candidates: Sequence[Sentence]) -> list[Sentence]:
        """The most relevant sentences unlike each other, within the answer's length."""
        value = self.relevance(draft, candidates)
        ranked = mmr(candidates, lambda s: value[s.id], len(candidates) if passes_over() else self.most)
        kept: list[Sentence] = []
        for s in ranked:
            if len(kept) >= self.most:
                break
            if kept and words(kept) + len(s.text.split()) > WORDS:
                if passes_over():
                    continue
                break
            kept.append(s)
        return kept


class Listing(Broad):
    """A list: each item a sentence of its own, cited."""

    lead_weight = 0.0

    def pieces(self, draft: Draft, reading: Reading) -> tuple[list[Piece], str | None]:
        """Each item a sentence; a list of people, places or bodies ("Which towns were hit?") made of
        sentences that name such things."""
        q, candidates = draft.question, self.candidates(draft)
        labels = q.labels if q.expects in NAMED else frozenset()
        candidates = [s for s in candidates if names_in(s, labels, q)] or candidates
        chosen = self.choose(draft, candidates)
        return [Piece((s,), item=True) for s in chosen], None


def says_ahead(text: str) -> bool:
    """Whether a sentence says what is planned, expected or scheduled."""
    return rules.on("answering.future_cues") and FUTURE.search(text) is not None


class Next(Broad):
    """What comes next: the sentences that say what is planned, expected or scheduled."""

    most = 3
    lead_weight = 0.0
    fills = True

    def candidates(self, draft: Draft) -> list[Sentence]:
        found = super().candidates(draft)
        return [s for s in found if says_ahead(s.text)] or found


class Definition(Broad):
    """Who or what something is: the sentence that defines it (an appositive, "X is a ..."), its
    definition as the short answer."""

    most = 2
    lead_weight = 0.0
    fills = True

    def pieces(self, draft: Draft, reading: Reading) -> tuple[list[Piece], str | None]:
        name = draft.question.topic
        candidates = self.candidates(draft)
        named = [s for s in candidates if name and name.lower() in s.text.lower()] or candidates
        best = max(named, key=lambda s: (definition(s, name) is not None, s.score), default=None)
        if best is None:
            return [], None
        rest = [s for s in self.choose(draft, [s for s in named if s.id != best.id])][:self.most - 1]
        return [Piece((best, *rest))], definition(best, name)


class YesNo(Broad):
    """A yes or a no (or that the articles do not say clearly), decided by the reader, then the
    sentences it stands on, cited: never a bare yes or no."""

    most = 3
    lead_weight = 0.0
    fills = True

    def verdict(self, draft: Draft, reading: Reading) -> str | None:
        if reading.verdict in ("yes", "no") and not covers(reading.given, draft.question):
            return "unclear"  # what it read is not about what was asked: its yes or no stands on nothing
        return reading.verdict  # None when the model could not read: the sentences alone, with a notice

    def pieces(self, draft: Draft, reading: Reading) -> tuple[list[Piece], str | None]:
        """The sentences the verdict was read from, the most relevant first (without a verdict, those
        it would be read from: the pool's first)."""
        given = [s for s in reading.given if shown(s)] or self.best(draft)
        chosen = self.choose(draft, given)
        return ([Piece(tuple(chosen))] if chosen else []), None

    def best(self, draft: Draft) -> list[Sentence]:
        """The pool's first sentences in the order a verdict reader reads them."""
        return ([s for s in draft.evidence.read if shown(s)] or self.candidates(draft))[:self.most]


def definition(sentence: Sentence, name: str) -> str | None:
    """What a sentence says the name is: an appositive or "X is a ..." ("Abdullah Abdullah, Ghani's
    rival, ..." -> "Ghani's rival"), else the title its noun phrase gives it ("US negotiator Zalmay
    Khalilzad" -> "US negotiator")."""
    if not name:
        return None
    for pattern in (re.escape(name) + APPOSITIVE, re.escape(name) + COPULA):
        if m := re.search(pattern, sentence.text, re.IGNORECASE):
            return m.group(1).strip()
    return _title(sentence, name) if rules.on("answering.titles") else None


def _title(sentence: Sentence, name: str) -> str | None:
    """The role a noun phrase next to the name gives it: in its own phrase before it, the phrase just
    before it ("Ghani's former chief executive Abdullah Abdullah") or just after its comma."""
    text, offset = sentence.text, sentence.start
    at = text.lower().find(name.lower())
    if at < 0 or not all(w[:1].isupper() for w in name.split()):  # titles are given to proper names
        return None
    end = at + len(name)
    # Words of the sentence's names (people, places, bodies): a title is more than those ("CNN").
    named = {w.lower() for start, stop, label, *_ in sentence.tags if label != NOUN_CHUNK
             for w in text[start - offset:stop - offset].split()}
    for start, stop, label, *_ in sentence.tags:
        start, stop = start - offset, stop - offset
        if label != NOUN_CHUNK:
            continue
        if start < at <= stop:  # its own phrase: the words before the name
            role = text[start:at]
        elif stop <= at and text[stop:at].strip() in ("", ","):  # the phrase just before
            role = text[start:stop]
        elif text[end:start].strip() == "," and start > end:  # just after its comma, to the next one
            role = re.split(r"[,.;]", text[start:])[0]
        else:
            continue
        if found := _role(role, named):
            return found
    return None


def _role(words: str, named: set[str]) -> str | None:
    """A phrase as a role: without its leading article, of a few words, one of them a common word or
    a title outside the sentence's names ("Mayor", "CEO"), not a hyphenated modifier ("so-called")."""
    role = re.sub(r"^(the|a|an)\s+", "", words.strip(" ,"), flags=re.IGNORECASE)
    titled = [w for w in role.split() if "-" not in w and (w[:1].islower() or w.lower() not in named)]
    return role if titled and len(role.split()) <= ROLE_WORDS else None


def _scaled(values: np.ndarray) -> np.ndarray:
    """Values scaled to 0..1 (all equal: all 1)."""
    if not len(values):
        return values
    low, high = float(values.min()), float(values.max())
    return np.ones_like(values) if high - low < 1e-9 else (values - low) / (high - low)
