"""What the reader reads: the sentences of a wider pool of passages, ranked by a fitted model.

The answer's own sentences (its citations, its evidence score) come from the few best passages
(``scoring.py``); the language model reads further, so that the sentence holding the answer is
among what it reads. A logistic model over features that hold for any news ranks that pool; it is
fitted on RealTime QA 2022 by `python -m eval fit-evidence` and ships as ``evidence.json``.
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

from qa.answering.scoring import Embed, Scored, proximity, score_sentences
from qa.index.load import Index
from qa.question.parse import Asked
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


def _day(iso: str | None) -> dt.date | None:
    try:
        return dt.date.fromisoformat(iso[:10]) if iso else None
    except ValueError:
        return None


def features(index: Index, embed: Embed, asked: Asked, question: str, query: str, chunk_ids: Sequence[int],
             today: str | None = None) -> tuple[list[int], np.ndarray]:
    """The sentences of the chunks (best chunk first) and FEATURES for each."""
    scored: list[Scored] = score_sentences(index, embed, asked, question, query, list(chunk_ids))
    if not scored:
        return [], np.zeros((0, len(FEATURES)))
    rank: dict[int, int] = {}
    for r, chunk_id in enumerate(chunk_ids):
        for sid in index.chunk_sentences(chunk_id):
            rank.setdefault(sid, r)
    ids = [s.sentence for s in scored]
    dense = index.sent_vectors[ids] @ embed(query)
    terms = tokenize(query)
    asked_terms = set(terms)
    idf = {t: index.terms.weight(t) for t in terms}
    total = sum(idf.values()) or 1.0
    names = [h.lower() for h in asked.named]
    day = _day(today) or dt.date.today()
    typed_new = {sid: _typed_new(index, asked, asked_terms, sid) for sid in ids}
    rows = []
    for s, cos in zip(scored, dense, strict=True):
        sid = s.sentence
        s_terms, s_set = index.sentence_terms(sid)
        text = index.sentence_text(sid)
        lower = text.lower()
        near = [n for n in (sid - 1, sid + 1)
                if 0 <= n < len(index.sent_sources) and index.sent_sources[n] == index.sent_sources[sid]]
        window = set(s_set).union(*(index.sentence_terms(n)[1] for n in near))
        dated = _day(index.articles[index.sent_sources[sid]].date)
        age = (day - dated).days if dated else None
        rows.append((
            s.score, float(cos),
            sum(v for t, v in idf.items() if t in s_set) / total,
            proximity(terms, s_terms),
            float(bool(asked.labels) and any(a[2] in asked.labels for a in index.annotations.of(sid))),
            1.0 / (1 + rank.get(sid, len(chunk_ids))),
            sum(n in lower for n in names) / len(names) if names else 0.0,
            math.log1p(int(index.sent_spans[sid][0]) / 200),
            math.log1p(len(text) / 50),
            sum(v for t, v in idf.items() if t in window) / total,
            len(s_set - asked_terms) / max(1, len(s_set)),
            typed_new[sid],
            max([typed_new[sid], *(_typed_new(index, asked, asked_terms, n) for n in near)]),
            float(text.rstrip().endswith("?")),
            math.log1p(abs(age)) if age is not None else 0.0,
            float(age is not None and RECENT_DAYS[0] <= age <= RECENT_DAYS[1]),
            float(age is not None),
        ))
    return ids, np.array(rows, dtype=np.float64)


def _typed_new(index: Index, asked: Asked, asked_terms: set[str], sid: int) -> float:
    """1.0 when the sentence names something of the kind asked for that the question does not name."""
    if not asked.labels:
        return 0.0
    text = index.articles[index.sent_sources[sid]].text
    for start, end, label, *_ in index.annotations.of(sid):
        if label in asked.labels and (words := set(tokenize(text[start:end]))) and not words <= asked_terms:
            return 1.0
    return 0.0


def rank_evidence(index: Index, embed: Embed, asked: Asked, question: str, query: str,
                  chunk_ids: Sequence[int], today: str | None = None,
                  model: EvidenceModel | None = None, lead: Sequence[int] = ()) -> list[tuple[int, float]]:
    """The pool's sentences as (sentence id, score), what the reader should read first first;
    the ``lead`` sentences (the answer's own best, which it cites first) ahead of the rest."""
    ids, x = features(index, embed, asked, question, query, chunk_ids, today)
    if not ids:
        return []
    scores = (model or default_model()).rank(x)
    score = dict(zip(ids, scores.tolist(), strict=True))
    ranked = [ids[i] for i in np.argsort(-scores, kind="stable")]
    return [(sid, score[sid]) for sid in lead_first(ranked, lead)]


def lead_first(order: Sequence[int], lead: Sequence[int]) -> list[int]:
    """``order`` with those of ``lead`` it holds moved ahead, in lead's order; the rest keep theirs."""
    first = {item: n for n, item in enumerate(lead)}
    return sorted(order, key=lambda item: first.get(item, len(first)))
