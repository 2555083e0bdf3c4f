"""Dense vectors: resumable batched embedding, and the FAISS index type chosen by size."""

from __future__ import annotations

import logging
import os
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    import faiss

log = logging.getLogger(__name__)

# Approximate search from Config.indexing.ann_threshold chunks on: FAISS IVF (inverted lists over
# k-means cells), exact inner products inside the cells it probes. eval/perf/scale.py
# measured recall@10 against exact search on 1M synthetic vectors (Gaussian, the real
# vectors' covariance: hard, no clusters): IVF_NLIST cells, IVF_NPROBE probed -> see docs/speed.md.
# HNSW (M=32, efConstruction 40) reached only 0.89 at efSearch 1024 there; a better graph
# costs hours of build on 2 cores. Indexes built as HNSW still load (tune_dense).
IVF_CELLS_PER_SQRT = 4  # nlist = 4 * sqrt(n), the usual rule, at most IVF_MAX_NLIST
IVF_MAX_NLIST = 4096
IVF_PROBE_SHARE = 0.2  # share of the cells probed per query
IVF_TRAIN_PER_CELL = 40  # k-means sample: this many vectors per cell
HNSW_EF_SEARCH = 1024


def ivf_nlist(n: int) -> int:
    """Cells for an IVF index of n vectors."""
    return max(1, min(IVF_MAX_NLIST, int(IVF_CELLS_PER_SQRT * n**0.5), n // IVF_TRAIN_PER_CELL))


def make_dense(vectors: np.ndarray, ann_threshold: int) -> tuple[faiss.Index, dict]:
    """An exact inner-product index, or IVF from ann_threshold vectors on; and its description."""
    import faiss

    n, dim = vectors.shape
    vectors = np.ascontiguousarray(vectors, dtype=np.float32)
    # Searching sets FAISS to one thread (qa/retrieval/retrieve.py); building wants every core.
    threads = faiss.omp_get_max_threads()
    faiss.omp_set_num_threads(os.cpu_count() or 1)
    try:
        index: faiss.Index
        if n < ann_threshold:
            index = faiss.IndexFlatIP(dim)
            info: dict = {"type": "flat"}
        else:
            nlist = ivf_nlist(n)
            nprobe = max(1, round(nlist * IVF_PROBE_SHARE))
            ivf = faiss.IndexIVFFlat(faiss.IndexFlatIP(dim), dim, nlist, faiss.METRIC_INNER_PRODUCT)
            sample = np.random.default_rng(0).choice(n, min(n, nlist * IVF_TRAIN_PER_CELL), replace=False)
            ivf.train(vectors[np.sort(sample)])
            ivf.nprobe = nprobe
            index = ivf
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
