"""The span reader: score each candidate span on a calibrated scale, and the chance that none answers."""

from __future__ import annotations

import math
import re
from dataclasses import replace
from functools import lru_cache

import numpy as np

from qa import rules
from qa.config import ReaderName
from qa.question.kinds import SENTENCE_KINDS
from qa.question.record import Question
from qa.readers.base import Candidate, Reading, ReadsAtOnce, Sentences
from qa.readers.spans.candidates import sentence_candidates, without_question_words
from qa.readers.spans.ranker import SPAN_FEATURES, Ranker, default_ranker, reading_of
from qa.readers.spans.types import NOUN_CHUNK_LABEL, prior
from qa.sentences.record import Sentence, rarity_of
from qa.text.words import tokenize

_SUBJECT = frozenset({"nsubj", "nsubjpass"})
_OBJECT = frozenset({"dobj", "pobj", "attr", "dative", "oprd"})
POOL = 8  # sentences read per question, best first
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class SpanReader(ReadsAtOnce):
    """Reads the best sentences for the span that answers a question."""

    name = ReaderName.SPANS

    def __init__(self, min_short: float = 0.0, ranker: Ranker | None = None, pool: int = POOL) -> None:
        self._ranker = ranker
        self.pool = pool
        self.min_short = min_short

    @property
    def ranker(self) -> Ranker:
        """The span ranker, loaded on first use (fitting computes features before there is one)."""
        if self._ranker is None:
            self._ranker = default_ranker()
        return self._ranker

    def warm(self) -> None:
        """Read the ranker before the first question."""
        _ = self.ranker

    @staticmethod
    def candidates(sentence: Sentence) -> tuple[Candidate, ...]:
        """Candidate spans of one sentence."""
        return sentence_candidates(sentence.text, sentence.start, sentence.tags)

    def _found(self, question: Question, pool: list[Sentence]) -> list[tuple[Sentence, Candidate, int]]:
        """Every candidate of the pooled sentences the question does not already name, with its rank."""
        found = []
        for rank, s in enumerate(pool):
            for c in self.candidates(s):
                if c.terms and c.terms <= question.terms:
                    continue  # the question already names it
                found.append((s, without_question_words(c, s.text, s.start, question.terms), rank))
        return found

    def features(self, question: Question, scored: Sentences
                 ) -> tuple[list[tuple[Sentence, Candidate]], np.ndarray]:
        """Every candidate of the best sentences not already named by the question, and its features."""
        pool = list(scored[: self.pool])
        if not pool:
            return [], np.zeros((0, len(SPAN_FEATURES)))
        found = self._found(question, pool)
        rows = [self._row(question, s, c, rank, pool[0].score) for s, c, rank in found]
        return [(s, c) for s, c, _ in found], np.array(rows, dtype=np.float64).reshape(-1, len(SPAN_FEATURES))

    @staticmethod
    def _row(question: Question, s: Sentence, c: Candidate, rank: int, top: float) -> tuple[float, ...]:
        """SPAN_FEATURES of one candidate of sentence s (ranked ``rank``; the best score is ``top``)."""
        text, a, b = s.text, c.start - s.start, c.end - s.start
        anchors = _anchors(text, question.terms)
        distance, near, inside, acts = len(text), set(), 0, False
        for p, t in anchors:
            distance = min(distance, a - p if p < a else max(0, p - b))
            if a - 60 <= p <= b + 60:
                near.add(t)
            inside += c.clause[0] <= p < c.clause[1]
            acts = acts or (t == question.verb and c.clause[0] <= p < c.clause[1])
        role = c.role.rstrip("^")
        stem = question.noun[:-1] if question.noun else None
        return (
            prior(question, c.label),
            1.0 if c.label in question.labels else 0.0,
            1.0 if c.label == NOUN_CHUNK_LABEL else 0.0,
            top - s.score,
            math.log1p(rank),
            math.log1p(distance / 10),
            len(near) / max(1, len(question.terms)),
            len(c.terms & question.terms) / max(1, len(c.terms)),
            math.log(1 + c.text.count(" ")),
            1.0 if stem and stem in text[max(0, a - 40): b + 40].lower() else 0.0,
            1.0 if c.proper else 0.0,
            a / max(1, len(text)),
            rarity_of(s, c.terms),
            1.0 if role in _SUBJECT else 0.0,
            1.0 if role in _OBJECT else 0.0,
            1.0 if c.role.endswith("^") else 0.0,
            # The share of the question's terms in this sentence that sit in the span's clause:
            # "Seddiqi said in a tweet that Ghani signed": "tweet" is in Seddiqi's clause only.
            inside / len(anchors) if anchors else 0.0,
            # "Who tweeted?": the subject of a clause that holds the question's verb (or its noun,
            # "said in a tweet"), not a name that clause mentions further down.
            1.0 if acts and role in _SUBJECT else 0.0,
        )

    def read(self, question: Question, sentences: Sentences) -> Reading:
        """The candidates best first, one per distinct text, and the chance that none answers (in
        milliseconds; the earlier turn is already in a resolved follow-up's words)."""
        empty = Reading.empty(self.name, min_short=self.min_short)
        if question.expects in SENTENCE_KINDS and rules.on("spans.no_span_for_why_how"):
            return empty
        found, x = self.features(question, sentences)
        if not found:
            return empty
        return replace(reading_of(found, self.ranker.p(x), self.ranker.calibration), min_short=self.min_short)


@lru_cache(maxsize=1 << 14)
def _term_positions(text: str) -> tuple[tuple[int, str], ...]:
    """(offset, stem) of each word of a sentence, cached: answers reread the same sentences."""
    return tuple((m.start(), t) for m in _WORD.finditer(text) for t in tokenize(m.group()))


def _anchors(text: str, terms: frozenset[str]) -> list[tuple[int, str]]:
    """Where the question's terms occur in a sentence."""
    return [(p, t) for p, t in _term_positions(text) if t in terms]
