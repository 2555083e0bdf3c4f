"""Sentence vectors pooled from their chunk's tokens: one model pass per chunk, not per sentence.

sentence-transformers' vector for a text is the mean of its token vectors. Embedding each
chunk once and averaging the token vectors inside each of its sentences gives every sentence
a vector in context, at no extra model cost; the chunk's own vector is exactly the model's.
"""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np

from .chunk import Chunk
from .dense import in_groups
from .embed import Embedder

log = logging.getLogger(__name__)

GROUP = 256  # texts per saved group, so an interrupted build resumes after the last group


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


def embed_pooled(texts: list[str], spans: list[list[tuple[int, int]]], embedder: Embedder,
                 cache_dir: Path | None, group_size: int = GROUP, progress: bool = False
                 ) -> tuple[np.ndarray, list[np.ndarray]]:
    """``embed_spans`` over all texts, longest last, saving each finished group in cache_dir."""
    order = sorted(range(len(texts)), key=lambda i: (len(texts[i]), i))
    vectors = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    pooled: list[np.ndarray] = [np.zeros((0, embedder.dim), dtype=np.float32)] * len(texts)
    for start, stop in in_groups(len(order), group_size, cache_dir, progress, "chunk"):
        group = order[start:stop]
        for i, (vector, spans_pooled) in zip(group, _group(texts, spans, group, embedder, cache_dir),
                                             strict=True):
            vectors[i] = vector
            pooled[i] = spans_pooled
    return vectors, pooled


def _group(texts: list[str], spans: list[list[tuple[int, int]]], group: list[int], embedder: Embedder,
           cache_dir: Path | None) -> list[tuple[np.ndarray, np.ndarray]]:
    """One group's vectors: from the file an earlier run saved, else embedded and saved."""
    digest = hashlib.sha256(f"{embedder.name}\0{embedder.dim}\0spans".encode())
    for i in group:
        digest.update(f"\0{texts[i]}\0{spans[i]}".encode())
    file = cache_dir / f"{digest.hexdigest()}.npz" if cache_dir is not None else None
    sizes = [len(spans[i]) for i in group]
    if file is not None and file.is_file():
        try:
            with np.load(file) as saved:
                vectors, flat = saved["vectors"], saved["spans"]
            if vectors.shape == (len(group), embedder.dim) and len(flat) == sum(sizes):
                return list(zip(vectors, np.split(flat, np.cumsum(sizes)[:-1]), strict=True))
        except (OSError, ValueError, KeyError):
            log.info("ignoring an unreadable saved group %s", file.name)
    vectors, pooled = embedder.embed_spans([texts[i] for i in group], [spans[i] for i in group])  # type: ignore[attr-defined]
    if file is not None:
        # Written under a temporary name first: a crash mid-write leaves no half group.
        tmp = file.with_name(f"{file.stem}.{os.getpid()}.tmp")
        with tmp.open("wb") as fh:
            np.savez(fh, vectors=vectors, spans=np.concatenate([*pooled, np.zeros((0, embedder.dim),
                                                                               dtype=np.float32)]))
        os.replace(tmp, file)
    return list(zip(vectors, pooled, strict=True))


def pool_into(pending: list[tuple[int, list[tuple[int, int, int]]]], chunks: list[Chunk],
               chunk_rows: list[np.ndarray | str], sent_rows: list[np.ndarray | str],
               embedder: Embedder, partial: Path, batch_size: int, progress: bool) -> int:
    """Embed the pending chunks once; fill their rows and their sentences' pooled rows.

    A sentence in two overlapping chunks averages both poolings; one with no token inside any
    chunk (past the model's 256-token limit) keeps its text, to be embedded alone. Returns how
    many sentences were pooled.
    """
    texts = [chunks[row].text for row, _ in pending]
    spans = [[(a, b) for _, a, b in inside] for _, inside in pending]
    vectors, pooled = embed_pooled(texts, spans, embedder, partial, batch_size, progress)
    sums: dict[int, np.ndarray] = {}
    for (row, inside), vector, means in zip(pending, vectors, pooled, strict=True):
        chunk_rows[row] = vector
        for (j, _, _), mean in zip(inside, means, strict=True):
            if mean.any():
                sums[j] = sums.get(j, 0) + mean
    for j, total in sums.items():
        sent_rows[j] = (total / max(float(np.linalg.norm(total)), 1e-12)).astype(np.float32)
    return len(sums)
