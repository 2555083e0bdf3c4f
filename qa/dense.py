"""Dense vectors: resumable batched embedding, and the FAISS index type chosen by size."""

from __future__ import annotations

import hashlib
import logging
import os
from pathlib import Path

import numpy as np

from .embed import Embedder

log = logging.getLogger(__name__)

BATCH = 256
# HNSW settings. eval/scale_bench.py measured recall@10 against exact search on synthetic
# vectors: efSearch 1024 gives 0.99 at 100k and 0.89 at 1M (p95 21 ms on 2 busy cores);
# a higher efConstruction is the next thing to try for 0.95 at 1M.
HNSW_M = 32
HNSW_EF_CONSTRUCTION = 40
HNSW_EF_SEARCH = 1024


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
    bar = None
    if progress:
        from tqdm import tqdm

        bar = tqdm(total=len(unique), desc="embedding", unit="text")
    if cache_dir is not None:
        cache_dir.mkdir(parents=True, exist_ok=True)
    try:
        for start in range(0, len(unique), batch_size):
            batch = unique[start : start + batch_size]
            vectors[start : start + len(batch)] = _embed_batch(batch, embedder, cache_dir)
            if bar is not None:
                bar.update(len(batch))
    finally:
        if bar is not None:
            bar.close()
    out[:] = vectors[[row[text] for text in texts]]
    return out


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


def make_dense(vectors: np.ndarray, ann_threshold: int) -> tuple[object, dict]:
    """An exact inner-product index, or HNSW from ann_threshold vectors on; and its description."""
    import faiss

    dim = vectors.shape[1]
    if len(vectors) < ann_threshold:
        index = faiss.IndexFlatIP(dim)
        info: dict = {"type": "flat"}
    else:
        index = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
        index.hnsw.efConstruction = HNSW_EF_CONSTRUCTION
        index.hnsw.efSearch = HNSW_EF_SEARCH
        info = {"type": "hnsw", "M": HNSW_M, "efConstruction": HNSW_EF_CONSTRUCTION,
                "efSearch": HNSW_EF_SEARCH}
    # Searching sets FAISS to one thread (qa/retrieve.py); building wants every core.
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    try:
        index.add(np.ascontiguousarray(vectors, dtype=np.float32))
    finally:
        faiss.omp_set_num_threads(threads)
    return index, info


def tune_dense(index: object, info: dict | None) -> None:
    """Apply the search settings recorded in meta.json to a loaded index."""
    if info and info.get("type") == "hnsw":
        index.hnsw.efSearch = int(info.get("efSearch", HNSW_EF_SEARCH))  # type: ignore[attr-defined]
