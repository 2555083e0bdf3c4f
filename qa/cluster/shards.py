"""Shards of a cluster-built index: its chunk vectors in checksummed files, named in meta.json.

FAISS keeps the chunk vectors it searches, but an IVF (or PQ) index cannot give them back
exactly; the shards keep them, so a rerun copies the vectors of unchanged articles instead of
embedding them again, and a retrain (a new IVF at 10x the size) needs no model at all.
The sentence vectors are stored as float16: at 100M passages they are the bulk of the index.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np

from qa.files import file_sha256
from qa.index.load import Index
from qa.index.write import Parts

log = logging.getLogger(__name__)

SHARD_ROWS = 50_000  # chunk vectors per shard: 77 MB at 384 float32 dimensions
SENTENCE_DTYPE = "float16"


def write_shards(folder: Path, parts: Parts, rows: int = SHARD_ROWS) -> dict:
    """Write parts' chunk vectors as shards in folder/shards/; the manifest for meta.json."""
    (folder / "shards").mkdir()
    manifest = []
    vectors = np.ascontiguousarray(parts.chunk_vectors, dtype=np.float32)
    for number, start in enumerate(range(0, max(len(vectors), 1), rows)):
        stop = min(start + rows, len(vectors))
        rel = f"shards/chunks-{number:05d}.npy"
        np.save(folder / rel, vectors[start:stop])
        sources = sorted({c.source for c in parts.chunks[start:stop]})
        manifest.append({"file": rel, "rows": [start, stop], "sha256": file_sha256(folder / rel),
                         "articles": len(sources), "first": sources[0] if sources else None,
                         "last": sources[-1] if sources else None})
    return {"shards": manifest, "sentence_dtype": SENTENCE_DTYPE}


def shard_vectors(index: Index) -> np.ndarray | None:
    """Every chunk vector of an index, in row order: from its shards, else from a flat FAISS index.

    None when neither can give them (an IVF or HNSW index built without shards): that index is
    then rebuilt from scratch.
    """
    manifest = index.meta.get("shards")
    if manifest:
        parts = [np.load(index.path / s["file"], mmap_mode="r") for s in manifest]
        rows = sum(len(p) for p in parts)
        if rows == len(index.chunks):
            return np.concatenate(parts) if parts else np.zeros((0, index.meta["dim"]), np.float32)
        log.info("the shards hold %d rows for %d chunks; not reusing them", rows, len(index.chunks))
        return None
    if (index.meta.get("dense") or {}).get("type") == "flat":
        return index.dense.reconstruct_n(0, index.dense.ntotal)
    return None


def reuse(index: Index, sources: set[str]) -> dict[str, tuple[list, np.ndarray, list, np.ndarray, list]]:
    """For each source kept from the old index: its chunks, their vectors, its sentences, theirs, spans."""
    vectors = shard_vectors(index)
    if vectors is None:
        return {}
    chunk_rows: dict[str, list[int]] = {s: [] for s in sources}
    for i, c in enumerate(index.chunks):
        if c.source in chunk_rows:
            chunk_rows[c.source].append(i)
    sent_rows: dict[str, list[int]] = {s: [] for s in sources}
    for i, s in enumerate(index.sent_sources):
        if s in sent_rows:
            sent_rows[s].append(i)
    out = {}
    for source in sources:
        chunks = [(index.chunks[i].start, index.chunks[i].end) for i in chunk_rows[source]]
        sentences = [tuple(int(x) for x in index.sent_spans[i]) for i in sent_rows[source]]
        out[source] = (chunks, np.asarray(vectors[chunk_rows[source]], np.float32), sentences,
                       np.asarray(index.sent_vectors[sent_rows[source]], np.float32),
                       list(index.annotations.articles.get(source, [])))
    return out
