"""The reader: score each candidate span on a calibrated scale, and the chance that none answers."""

from __future__ import annotations

import json
import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from qa.index.load import Index
from qa.reading.candidates import Candidate, sentence_candidates, without_question_words
from qa.reading.question import Asked

RANKER_FILE = Path(__file__).with_name("ranker.json")
# No feature counts how many sentences or articles repeat a span: in the back numbers each
# question's passages are about different things, in a real index they are about one story,
# whose names every sentence repeats. Rarity (idf over the index) says "topic, not answer" in both.
FEATURES = ("prior", "match", "noun_chunk", "gap", "rank", "distance", "near", "overlap", "words",
            "names_noun", "proper", "position", "rarity", "subject", "object", "main", "clause",
            "agent")
_SUBJECT = frozenset({"nsubj", "nsubjpass"})
_OBJECT = frozenset({"dobj", "pobj", "attr", "dative", "oprd"})
# "Why" and "how did" are answered by a sentence, not a span.
SENTENCE_KINDS = frozenset({"reason", "manner"})
POOL = 8  # sentences read per question, best first
NO_ANSWER_TOP = 3  # the no-answer score is the product of (1 - p) over this many best spans
_WORD = re.compile(r"[^\W_]+", re.UNICODE)


@dataclass(frozen=True)
class Span:
    """A candidate the reader scored: where it is, what it says, and its probability of answering."""

    sentence: int
    candidate: Candidate
    p: float
    # The calibrated chance that this span is the answer, given how far it leads the others.
    confidence: float = 0.0


@dataclass(frozen=True)
class Reading:
    """The reader's verdict: candidates best first (one per distinct text) and the no-answer score."""

    spans: tuple[Span, ...]
    no_answer: float
    reader: str = "spans"  # which reader read: "spans" or "lm"
    model: str = ""  # the language model that read, for the "lm" reader
    # The language model said the passages don't state the answer, or wrote a phrase that no
    # passage holds word for word (never shown; kept here for the refusal and the log).
    declined: bool = False
    unverified: str | None = None
    stats: dict[str, float] = field(default_factory=dict)  # prompt and written tokens, read_ms

    @property
    def best(self) -> Span | None:
        return self.spans[0] if self.spans else None

    @classmethod
    def of(cls, found: Sequence[tuple[int, Candidate]], p: np.ndarray,
           calibration: Calibration | None = None) -> Reading:
        """The reading of scored candidates: best first, one per distinct text."""
        best: dict[str, int] = {}
        for i in np.argsort(-p, kind="stable"):
            best.setdefault(found[i][1].key, int(i))
        order = list(best.values())
        top = [float(p[i]) for i in order[:2]]
        spans = []
        for rank, i in enumerate(order):
            # The best span's lead is over the second; any other's is its gap to the best.
            margin = float(p[i]) - (top[1] if rank == 0 and len(top) > 1 else top[0] if rank else 0.0)
            confidence = calibration(float(p[i]), margin) if calibration else float(p[i])
            spans.append(Span(found[i][0], found[i][1], float(p[i]), confidence))
        return cls(tuple(spans), float(np.prod([1 - s.p for s in spans[:NO_ANSWER_TOP]])))


@dataclass(frozen=True)
class Calibration:
    """P(the span is the answer) from its probability and its lead over the runner-up, as fitted
    out of fold by eval/fit_reader.py: a span far ahead of its rivals is right more often."""

    weight_p: float
    weight_margin: float
    bias: float

    def __call__(self, p: float, margin: float) -> float:
        return 1.0 / (1.0 + math.exp(-(self.weight_p * p + self.weight_margin * margin + self.bias)))


@dataclass(frozen=True)
class Ranker:
    """A logistic model over FEATURES: weights and bias, as fitted by eval/fit_reader.py."""

    weights: np.ndarray
    bias: float
    calibration: Calibration | None = None

    @classmethod
    def load(cls, path: Path = RANKER_FILE) -> Ranker:
        data = json.loads(path.read_text("utf-8"))
        if tuple(data["features"]) != FEATURES or "confidence" not in data:
            raise ValueError(f"{path.name} was fitted on other features: run `python -m eval fit-reader`")
        c = data["confidence"]
        return cls(np.array(data["weights"], dtype=np.float64), float(data["bias"]),
                   Calibration(float(c["p"]), float(c["margin"]), float(c["bias"])))

    def p(self, x: np.ndarray) -> np.ndarray:
        return 1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias)))


@lru_cache(maxsize=1)
def default_ranker() -> Ranker:
    return Ranker.load()


class Reader:
    """Reads the best sentences of an index for the span that answers a question."""

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

    def candidates(self, sentence: int) -> tuple[Candidate, ...]:
        """Candidate spans of one sentence of the index."""
        start = int(self.index.sent_spans[sentence][0])
        return sentence_candidates(self.index.sentence_text(sentence), start,
                                   self.index.annotations.of(sentence))

    def features(self, asked: Asked, scored: Sequence[tuple[int, float]]
                 ) -> tuple[list[tuple[int, Candidate]], np.ndarray]:
        """Every candidate of the best sentences not already named by the question, and its features."""
        pool = list(scored[: self.pool])
        if not pool:
            return [], np.zeros((0, len(FEATURES)))
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
                priors[c.label] = asked.prior(c.label)
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
                1.0 if c.label == "NP" else 0.0,
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

    def read(self, asked: Asked, scored: Sequence[tuple[int, float]]) -> Reading:
        """The candidates best first, one per distinct text, and the chance that none answers."""
        if asked.kind in SENTENCE_KINDS:
            return Reading((), 1.0)
        found, x = self.features(asked, scored)
        if not found:
            return Reading((), 1.0)
        return Reading.of(found, self.ranker.p(x), self.ranker.calibration)


@lru_cache(maxsize=1 << 14)
def _term_positions(text: str) -> tuple[tuple[int, str], ...]:
    """(offset, stem) of each word of a sentence, cached: answers reread the same sentences."""
    from qa.text.words import tokenize

    return tuple((m.start(), t) for m in _WORD.finditer(text) for t in tokenize(m.group()))


def _anchors(text: str, terms: frozenset[str]) -> list[tuple[int, str]]:
    """Where the question's terms occur in a sentence."""
    return [(p, t) for p, t in _term_positions(text) if t in terms]
