"""Sentence scores: how well each sentence of the retrieved chunks answers the question."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from qa.index.load import Index
from qa.question.parse import Asked
from qa.text.words import tokenize

Embed = Callable[[str], np.ndarray]


@dataclass(frozen=True)
class Weights:
    """How much each piece of evidence counts in a sentence's score."""

    dense: float = 0.6  # cosine of question and sentence vectors
    lexical: float = 0.4  # idf-weighted share of the question's terms in the sentence
    type: float = 0.1  # the sentence holds a span of the kind asked for (a person, a count...)
    proximity: float = 0.1  # the question's terms sit close together in the sentence
    rank: float = 0.0  # the sentence's passage ranks high in retrieval
    context: float = 0.3  # weight of terms that come from earlier turns, not the question


@dataclass(frozen=True)
class Scored:
    """One sentence's score, and the short answer it leads with once chosen."""

    sentence: int
    score: float
    short: str | None = None


WEIGHTS = Weights()


def score_sentences(index: Index, embed: Embed, asked: Asked, question: str, query: str,
                    chunk_ids: list[int], w: Weights = WEIGHTS) -> list[Scored]:
    """Every sentence of the retrieved chunks, scored against the question, best first."""
    rank: dict[int, int] = {}
    for r, chunk_id in enumerate(chunk_ids):
        for sid in index.chunk_sentences(chunk_id):
            rank.setdefault(sid, r)
    ids = sorted(rank)
    if not ids:
        return []
    vectors = index.sent_vectors[ids]
    dense = vectors @ embed(query)
    if query != question:
        # A follow-up may read best alone or best resolved; take the better reading.
        dense = np.maximum(dense, vectors @ embed(question))
    own = tokenize(question)
    own_set = set(own)
    extra = [t for t in tokenize(query) if t not in own_set]
    q_terms = own + extra
    idf = {t: index.terms.weight(t) * (w.context if t in extra else 1.0) for t in q_terms}
    total = sum(idf.values()) or 1.0
    labels = asked.labels
    scored = []
    for sid, cos in zip(ids, dense, strict=True):
        s_terms, s_set = index.sentence_terms(sid)
        lexical = sum(v for t, v in idf.items() if t in s_set) / total
        typed = bool(labels) and any(s[2] in labels for s in index.annotations.of(sid))
        score = (w.dense * float(cos) + w.lexical * lexical + (w.type if typed else 0.0)
                 + w.proximity * proximity(q_terms, s_terms) + w.rank / (1 + rank[sid]))
        scored.append(Scored(sid, score))
    return sorted(scored, key=lambda s: (-s.score, s.sentence))


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
