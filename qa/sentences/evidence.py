"""The order in which the reader reads the pool's sentences: a logistic model over features that hold
for any news, fitted on RealTime QA 2022 by `python -m eval fit-evidence` (``evidence.json``).

The answer's own sentences (its citations, its evidence score) come from the few best passages; the
language model reads further, so that the sentence holding the answer is among what it reads.
"""

from __future__ import annotations

import datetime as dt
import json
import logging
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from qa.question.record import Question
from qa.sentences.record import Sentence
from qa.sentences.scoring import Embed, Idf, proximity, typed
from qa.text.words import tokenize

log = logging.getLogger(__name__)

EVIDENCE_FILE = Path(__file__).with_name("evidence.json")
FEATURES = ("score", "dense", "lexical", "proximity", "typed", "passage_rank", "names", "position",
            "length", "window_lexical", "novel", "typed_new", "window_typed_new", "question", "age",
            "recent", "dated")
RECENT_DAYS = (-2, 8)  # an article dated this many days around the question's day is "recent"


@dataclass(frozen=True)
class EvidenceModel:
    """A logistic model over FEATURES; without a fit, the answer's own sentence score ranks."""

    weights: tuple[float, ...] = ()
    bias: float = 0.0

    def rank(self, x: np.ndarray) -> np.ndarray:
        """Each row's score (higher reads first)."""
        if not self.weights:
            return x[:, 0]
        return x @ np.asarray(self.weights) + self.bias


@lru_cache(maxsize=1)
def default_model() -> EvidenceModel:
    """The shipped model, or the unfitted one (with a warning) when its file does not match."""
    if not EVIDENCE_FILE.is_file():
        return EvidenceModel()
    data = json.loads(EVIDENCE_FILE.read_text("utf-8"))
    if tuple(data.get("features", ())) != FEATURES:
        log.warning("%s was fitted on other features: run `python -m eval fit-evidence`", EVIDENCE_FILE.name)
        return EvidenceModel()
    return EvidenceModel(tuple(float(w) for w in data["weights"]), float(data["bias"]))


def day_of(iso: str | None) -> dt.date | None:
    """A YYYY-MM-DD date, None when there is none or it does not parse."""
    try:
        return dt.date.fromisoformat(iso[:10]) if iso else None
    except ValueError:
        return None


@dataclass(frozen=True)
class Query:
    """What every sentence's features are measured against: the query's vector, terms and names."""

    vector: np.ndarray
    terms: list[str]
    idf: dict[str, float]
    names: list[str]
    day: dt.date


def query_of(question: Question, embed: Embed, idf: Idf, today: str | None) -> Query:
    """The question as the features read it, on the day it is asked (default: today)."""
    terms = tokenize(question.searched)
    names = [h.lower() for h in question.named]
    return Query(embed(question.searched), terms, {t: idf(t) for t in terms}, names,
                 day_of(today) or dt.date.today())


def features(sentences: Sequence[Sentence], ranks: Sequence[int], question: Question, q: Query) -> np.ndarray:
    """FEATURES for each sentence (``score`` already set), given the rank of its best passage."""
    if not sentences:
        return np.zeros((0, len(FEATURES)))
    asked = set(q.terms)
    total = sum(q.idf.values()) or 1.0
    new = {s.id: _typed_new(question, asked, s) for s in sentences}
    rows = []
    for s, rank in zip(sentences, ranks, strict=True):
        s_set = set(s.terms)
        near = [n for n in (s.before, s.after) if n is not None]
        window = s_set.union(*(n.terms for n in near))
        dated = day_of(s.date)
        age = (q.day - dated).days if dated else None
        lower = s.text.lower()
        rows.append((
            s.score, float(s.vector @ q.vector),
            sum(v for t, v in q.idf.items() if t in s_set) / total,
            proximity(q.terms, list(s.terms)),
            float(typed(question, s)),
            1.0 / (1 + rank),
            sum(n in lower for n in q.names) / len(q.names) if q.names else 0.0,
            math.log1p(s.start / 200),
            math.log1p(len(s.text) / 50),
            sum(v for t, v in q.idf.items() if t in window) / total,
            len(s_set - asked) / max(1, len(s_set)),
            new[s.id],
            max([new[s.id], *(_typed_new(question, asked, n) for n in near)]),
            float(s.text.rstrip().endswith("?")),
            math.log1p(abs(age)) if age is not None else 0.0,
            float(age is not None and RECENT_DAYS[0] <= age <= RECENT_DAYS[1]),
            float(age is not None),
        ))
    return np.array(rows, dtype=np.float64)


def _typed_new(question: Question, asked: set[str], sentence: Sentence) -> float:
    """1.0 when the sentence names something of the kind asked for that the question does not name."""
    if not question.labels:
        return 0.0
    text, offset = sentence.text, sentence.start
    for start, end, label, *_ in sentence.tags:
        if label in question.labels and (words := set(tokenize(text[start - offset:end - offset]))) \
                and not words <= asked:
            return 1.0
    return 0.0


def lead_first(order: Sequence[Sentence], lead: Sequence[Sentence]) -> list[Sentence]:
    """``order`` with those of ``lead`` it holds moved ahead, in lead's order; the rest keep theirs."""
    first = {s.id: n for n, s in enumerate(lead)}
    return sorted(order, key=lambda s: first.get(s.id, len(first)))
