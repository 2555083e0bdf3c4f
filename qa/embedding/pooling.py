"""Sentence vectors pooled from their chunk's tokens: one model pass per chunk, not per sentence.

sentence-transformers' vector for a text is the mean of its token vectors. Embedding each
chunk once and averaging the token vectors inside each of its sentences gives every sentence
a vector in context, at no extra model cost; the chunk's own vector is exactly the model's.
"""

from __future__ import annotations

import logging

import numpy as np

log = logging.getLogger(__name__)


def can_pool(embedder: object) -> bool:
    """True when the embedder exposes token vectors (``embed_spans``)."""
    return callable(getattr(embedder, "embed_spans", None))


def pool_spans(vectors: np.ndarray, offsets: np.ndarray, spans: list[tuple[int, int]]) -> np.ndarray:
    """Mean token vector of each (start, end) character span; zeros where no token lies inside."""
    out = np.zeros((len(spans), vectors.shape[1]), dtype=np.float32)
    if not spans:
        return out
    starts, ends = offsets[:, 0], offsets[:, 1]
    bounds = np.asarray(spans, dtype=np.int64)
    inside = ((starts[None, :] >= bounds[:, :1]) & (ends[None, :] <= bounds[:, 1:])
              & (ends > starts)[None, :])
    counts = inside.sum(axis=1)
    found = counts > 0
    out[found] = (inside[found].astype(np.float32) @ vectors) / counts[found, None]
    return out


def pool_text(vectors: np.ndarray, offsets: np.ndarray, spans: list[tuple[int, int]]
              ) -> tuple[np.ndarray, np.ndarray]:
    """A text's unit vector (the mean of all its token vectors) and its spans' mean token vectors."""
    mean = vectors.mean(axis=0)
    return mean / max(float(np.linalg.norm(mean)), 1e-12), pool_spans(vectors, offsets, spans)


