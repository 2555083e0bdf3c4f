"""Dense vectors: resumable batched embedding, and the FAISS index type chosen by size."""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from .embed import Embedder

log = logging.getLogger(__name__)

BATCH = 256
# Approximate search from Config.ann_threshold chunks on: FAISS IVF (inverted lists over
# k-means cells), exact inner products inside the cells it probes. eval/scale_bench.py
# measured recall@10 against exact search on 1M synthetic vectors (Gaussian, the real
# vectors' covariance: hard, no clusters): IVF_NLIST cells, IVF_NPROBE probed -> see docs/speed.md.
# HNSW (M=32, efConstruction 40) reached only 0.89 at efSearch 1024 there; a better graph
# costs hours of build on 2 cores. Indexes built as HNSW still load (tune_dense).
IVF_CELLS_PER_SQRT = 4  # nlist = 4 * sqrt(n), the usual rule, at most IVF_MAX_NLIST
IVF_MAX_NLIST = 4096
IVF_PROBE_SHARE = 0.2  # share of the cells probed per query
IVF_TRAIN_PER_CELL = 40  # k-means sample: this many vectors per cell
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


def ivf_nlist(n: int) -> int:
    """Cells for an IVF index of n vectors."""
    return max(1, min(IVF_MAX_NLIST, int(IVF_CELLS_PER_SQRT * n**0.5), n // IVF_TRAIN_PER_CELL))


def make_dense(vectors: np.ndarray, ann_threshold: int) -> tuple[object, dict]:
    """An exact inner-product index, or IVF from ann_threshold vectors on; and its description."""
    import faiss

    n, dim = vectors.shape
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    # Searching sets FAISS to one thread (qa/retrieve.py); building wants every core.
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    try:
        if n < ann_threshold:
            index = faiss.IndexFlatIP(dim)
            info: dict = {"type": "flat"}
        else:
            nlist = ivf_nlist(n)
            nprobe = max(1, round(nlist * IVF_PROBE_SHARE))
            index = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
            sample = np.random.default_rng(0).choice(n, min(n, nlist * IVF_TRAIN_PER_CELL), replace=False)
            index.train(vectors[np.sort(sample)])
            index.nprobe = nprobe
            info = {"type": "ivf", "nlist": nlist, "nprobe": nprobe}
        index.add(vectors)
    finally:
        faiss.omp_set_num_threads(threads)
    return index, info


def tune_dense(index: object, info: dict | None) -> None:
    """Apply the search settings recorded in meta.json to a loaded index."""
    kind = (info or {}).get("type")
    if kind == "ivf":
        index.nprobe = int(info["nprobe"])  # type: ignore[attr-defined, index]
    elif kind == "hnsw":
        index.hnsw.efSearch = int(info.get("efSearch", HNSW_EF_SEARCH))  # type: ignore[attr-defined, union-attr]
