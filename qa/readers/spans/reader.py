"""The span reader: score each candidate span on a calibrated scale, and the chance that none answers."""

from __future__ import annotations

import math
import re
from functools import lru_cache

import numpy as np

from qa.config import ReaderName
from qa.index.load import Index
from qa.question.kinds import SENTENCE_KINDS
from qa.question.parse import Asked
from qa.readers.base import Candidate, Earlier, Reading, ReadsAtOnce, Sentences
from qa.readers.spans.candidates import sentence_candidates, without_question_words
from qa.readers.spans.ranker import SPAN_FEATURES, Ranker, default_ranker, reading_of
from qa.readers.spans.types import NOUN_CHUNK_LABEL, prior

_SUBJECT = frozenset({"nsubj", "nsubjpass"})
_OBJECT = frozenset({"dobj", "pobj", "attr", "dative", "oprd"})
POOL = 8  # sentences read per question, best first
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


class SpanReader(ReadsAtOnce):
    """Reads the best sentences of an index for the span that answers a question."""

    name = ReaderName.SPANS

    def __init__(self, index: Index, ranker: Ranker | None = None, pool: int = POOL) -> None:
        self.index = index
        self._ranker = ranker
        self.pool = pool
        self._rarities: dict[frozenset[str], float] = {}

    @property
    def ranker(self) -> Ranker:
        """The span ranker, loaded on first use (fitting computes features before there is one)."""
        if self._ranker is None:
            self._ranker = default_ranker()
        return self._ranker

    def warm(self) -> None:
        """Read the ranker before the first question."""
        _ = self.ranker

    def candidates(self, sentence: int) -> tuple[Candidate, ...]:
        """Candidate spans of one sentence of the index."""
        start = int(self.index.sent_spans[sentence][0])
        return sentence_candidates(self.index.sentence_text(sentence), start,
                                   self.index.annotations.of(sentence))

    def features(self, asked: Asked, scored: Sentences
                 ) -> tuple[list[tuple[int, Candidate]], np.ndarray]:
        """Every candidate of the best sentences not already named by the question, and its features."""
        pool = list(scored[: self.pool])
        if not pool:
            return [], np.zeros((0, len(SPAN_FEATURES)))
        top = pool[0][1]
        found: list[tuple[int, Candidate, int, float]] = []
        # Each pooled sentence's text, article offset and where the question's terms sit in it.
        context: dict[int, tuple[str, int, list[tuple[int, str]]]] = {}
        for rank, (sid, score) in enumerate(pool):
            text, offset = self.index.sentence_text(sid), int(self.index.sent_spans[sid][0])
            context[sid] = (text, offset, _anchors(text, asked.terms))
            for c in sentence_candidates(text, offset, self.index.annotations.of(sid)):
                if c.terms and c.terms <= asked.terms:
                    continue  # the question already names it
                found.append((sid, without_question_words(c, text, offset, asked.terms), rank, score))
        rows = []
        priors: dict[str, float] = {}
        n_terms = max(1, len(asked.terms))
        stem = asked.noun[:-1] if asked.noun else None
        for sid, c, rank, score in found:
            text, offset, anchors = context[sid]
            a, b = c.start - offset, c.end - offset
            if c.label not in priors:
                priors[c.label] = prior(asked, c.label)
            distance, near, inside, acts = len(text), set(), 0, False
            for p, t in anchors:
                distance = min(distance, a - p if p < a else max(0, p - b))
                if a - 60 <= p <= b + 60:
                    near.add(t)
                inside += c.clause[0] <= p < c.clause[1]
                acts = acts or (t == asked.verb and c.clause[0] <= p < c.clause[1])
            role = c.role.rstrip("^")
            rows.append((
                priors[c.label],
                1.0 if c.label in asked.labels else 0.0,
                1.0 if c.label == NOUN_CHUNK_LABEL else 0.0,
                top - score,
                math.log1p(rank),
                math.log1p(distance / 10),
                len(near) / n_terms,
                len(c.terms & asked.terms) / max(1, len(c.terms)),
                math.log(1 + c.text.count(" ")),
                1.0 if stem and stem in text[max(0, a - 40): b + 40].lower() else 0.0,
                1.0 if c.proper else 0.0,
                a / max(1, len(text)),
                self._rarity(c.terms),
                1.0 if role in _SUBJECT else 0.0,
                1.0 if role in _OBJECT else 0.0,
                1.0 if c.role.endswith("^") else 0.0,
                # The share of the question's terms in this sentence that sit in the span's clause:
                # "Seddiqi said in a tweet that Ghani signed": "tweet" is in Seddiqi's clause only.
                inside / len(anchors) if anchors else 0.0,
                # "Who tweeted?": the subject of a clause that holds the question's verb (or its noun,
                # "said in a tweet"), not a name that clause mentions further down.
                1.0 if acts and role in _SUBJECT else 0.0,
            ))
        return [(sid, c) for sid, c, _, _ in found], np.array(rows, dtype=np.float64)

    def _rarity(self, terms: frozenset[str]) -> float:
        """Mean idf of a span's words over the index, 0 to 1: a name every sentence repeats is the topic."""
        found = self._rarities.get(terms)
        if found is None:
            weights = self.index.terms
            found = self._rarities[terms] = (sum(weights.weight(t) for t in terms)
                                             / (len(terms) * weights.default)) if terms else 0.0
        return found

    def read(self, asked: Asked, sentences: Sentences, earlier: Earlier | None = None) -> Reading:
        """The candidates best first, one per distinct text, and the chance that none answers (in
        milliseconds; the earlier turn is already in a resolved follow-up's words)."""
        if asked.kind in SENTENCE_KINDS:
            return Reading.empty(self.name)
        found, x = self.features(asked, sentences)
        if not found:
            return Reading.empty(self.name)
        return reading_of(found, self.ranker.p(x), self.ranker.calibration)


@lru_cache(maxsize=1 << 14)
def _term_positions(text: str) -> tuple[tuple[int, str], ...]:
    """(offset, stem) of each word of a sentence, cached: answers reread the same sentences."""
    from qa.text.words import tokenize

    return tuple((m.start(), t) for m in _WORD.finditer(text) for t in tokenize(m.group()))


def _anchors(text: str, terms: frozenset[str]) -> list[tuple[int, str]]:
    """Where the question's terms occur in a sentence."""
    return [(p, t) for p, t in _term_positions(text) if t in terms]
