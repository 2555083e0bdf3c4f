"""Sentence scores: how well each sentence answers the question, computed once per answer."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from qa import rules
from qa.question.record import Question
from qa.sentences.record import Sentence
from qa.text.words import tokenize

Embed = Callable[[str], np.ndarray]
Idf = Callable[[str], float]


@dataclass(frozen=True)
class Weights:
    """How much each piece of evidence counts in a sentence's score."""

    dense: float = 0.6  # cosine of question and sentence vectors
    lexical: float = 0.4  # idf-weighted share of the question's terms in the sentence
    type: float = 0.1  # the sentence holds a span of the kind asked for (a person, a count...)
    proximity: float = 0.1  # the question's terms sit close together in the sentence
    context: float = 0.3  # weight of terms that come from earlier turns, not the question


WEIGHTS = Weights()


def typed(question: Question, sentence: Sentence) -> bool:
    """True when the sentence holds a span of the kind the question asks for."""
    labels = question.labels
    return bool(labels) and any(tag[2] in labels for tag in sentence.tags)


def scores(sentences: Sequence[Sentence], embed: Embed, idf: Idf, question: Question,
           w: Weights = WEIGHTS) -> np.ndarray:
    """Each sentence's score against the question, in their order."""
    if not sentences:
        return np.zeros(0)
    vectors = np.stack([s.vector for s in sentences])
    query, asked = question.query, question.alone
    if question.searched != query:  # a broad question is scored by its topic alone
        query = asked = question.searched
    dense = vectors @ embed(query)
    if query != asked and rules.on("sentences.follow_up_alone"):
        # A follow-up may read best alone or best resolved; take the better reading.
        dense = np.maximum(dense, vectors @ embed(asked))
    own = tokenize(asked)
    own_set = set(own)
    extra = [t for t in tokenize(query) if t not in own_set]
    q_terms = own + extra
    weights = {t: idf(t) * (w.context if t in extra else 1.0) for t in q_terms}
    total = sum(weights.values()) or 1.0
    typed_w = w.type if rules.on("sentences.typed") else 0.0
    near_w = w.proximity if rules.on("sentences.proximity") else 0.0
    out = []
    for s, cos in zip(sentences, dense, strict=True):
        lexical = sum(v for t, v in weights.items() if t in set(s.terms)) / total
        out.append(w.dense * float(cos) + w.lexical * lexical + (typed_w if typed(question, s) else 0.0)
                   + near_w * proximity(q_terms, list(s.terms)))
    return np.array(out)


def proximity(q_terms: list[str], s_terms: list[str]) -> float:
    """Matched question terms per token of the shortest window holding them all (0 to 1)."""
    wanted = set(q_terms)
    hits = [(i, t) for i, t in enumerate(s_terms) if t in wanted]
    distinct = {t for _, t in hits}
    if len(distinct) < 2:
        return 0.0
    best = len(s_terms)
    last: dict[str, int] = {}
    for i, term in hits:
        last[term] = i
        if len(last) == len(distinct):
            best = min(best, i - min(last.values()) + 1)
    return len(distinct) / best
