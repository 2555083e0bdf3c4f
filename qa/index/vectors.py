"""Embedding chunks and sentences for a build, in saved groups so an interrupted build resumes."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from qa.embedding.base import Embedder
from qa.text.chunk import Chunk

log = logging.getLogger(__name__)

GROUP = 256  # texts per saved group, so an interrupted build resumes after the last group


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
               embedder: Embedder, partial: Path | None, batch_size: int, progress: bool) -> int:
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


BATCH = 256


def _batch_key(embedder: Embedder, texts: list[str]) -> str:
    """A batch's cache name: the model and every text, so a changed batch is never reused."""
    digest = hashlib.sha256(f"{embedder.name}\0{embedder.dim}".encode())
    for text in texts:
        digest.update(b"\0" + text.encode("utf-8"))
    return digest.hexdigest()


def embed_resumable(texts: list[str], embedder: Embedder, cache_dir: Path | None,
                    batch_size: int = BATCH, progress: bool = False) -> np.ndarray:
    """Embed texts batch by batch, saving each finished batch so an interrupted build resumes.

    Each distinct text is embedded once, and texts go to the model shortest first: a batch
    of similar lengths pads little (sentences and passages differ tenfold in length).
    """
    out = np.zeros((len(texts), embedder.dim), dtype=np.float32)
    if not texts:
        return out
    unique = sorted(set(texts), key=lambda t: (len(t), t))
    row = {text: i for i, text in enumerate(unique)}
    vectors = np.zeros((len(unique), embedder.dim), dtype=np.float32)
    for start, stop in in_groups(len(unique), batch_size, cache_dir, progress, "text"):
        vectors[start:stop] = _embed_batch(unique[start:stop], embedder, cache_dir)
    out[:] = vectors[[row[text] for text in texts]]
    return out


def in_groups(total: int, size: int, cache_dir: Path | None, progress: bool,
              unit: str) -> Iterator[tuple[int, int]]:
    """(start, stop) of each group of size rows, with a progress bar when asked.

    The groups are what an interrupted build saves in cache_dir (made here) and resumes from.
    """
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=total, desc="embedding", unit=unit)
    try:
        for start in range(0, total, size):
            stop = min(total, start + size)
            yield start, stop
            if bar is not None:
                bar.update(stop - start)
    finally:
        if bar is not None:
            bar.close()


def _embed_batch(batch: list[str], embedder: Embedder, cache_dir: Path | None) -> np.ndarray:
    """One batch's vectors: from the cache when an earlier run finished it, else embedded and saved."""
    file = cache_dir / f"{_batch_key(embedder, batch)}.npy" if cache_dir else None
    vectors = _load_batch(file, len(batch), embedder.dim)
    if vectors is None:
        vectors = embedder.embed(batch)
        if file is not None:
            # Written under a temporary name first: a crash mid-write leaves no half batch.
            tmp = file.with_suffix(f".{os.getpid()}.tmp")
            with tmp.open("wb") as fh:
                np.save(fh, vectors)
            os.replace(tmp, file)
    return vectors


def _load_batch(file: Path | None, rows: int, dim: int) -> np.ndarray | None:
    """A cached batch, or None when it is missing or does not fit."""
    if file is None or not file.is_file():
        return None
    try:
        vectors = np.load(file)
    except (OSError, ValueError):
        return None
    return vectors if vectors.shape == (rows, dim) else None
