"""Writing a built index into a fresh folder and switching CURRENT to it atomically."""

from __future__ import annotations

import os
import shutil
import time
import uuid
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from qa.articles.load import Article
from qa.files import file_sha256, fsync_dir, write_json
from qa.index.annotations import write_annotations
from qa.index.dense import make_dense
from qa.index.lexical import BM25Index, TermWeights
from qa.index.load import CURRENT, index_files
from qa.text.chunk import Chunk
from qa.text.nlp import Span

_VERSIONED = ("qa", "faiss-cpu", "bm25s", "sentence-transformers", "langchain-text-splitters",
              "pysbd", "numpy", "torch")


def write_folder(index_dir: Path, articles: list[Article], parts: Parts, meta: dict,
                  ann_threshold: int, extra: Callable[[Path, Parts], dict] | None = None) -> Path:
    """Write every file into a temporary folder, then point CURRENT at it in one rename.

    ``extra`` writes more files into the folder (the cluster build's shards) and returns what
    to add to meta.json; they are checksummed and swapped in with the rest.
    """
    import faiss

    tmp = index_dir / f".tmp-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    # Exact search up to ann_threshold chunks; beyond, IVF keeps a query in milliseconds.
    dense, meta["dense"] = make_dense(parts.chunk_vectors, ann_threshold)
    # Written by Python, not faiss.write_index, so a full disk is an OSError we can name.
    (tmp / "dense.faiss").write_bytes(faiss.serialize_index(dense).tobytes())
    np.save(tmp / "sentence_vectors.npy", parts.sent_vectors)
    by_source = sorted(articles, key=lambda a: a.source)
    write_json(tmp / "articles.json", [asdict(a) for a in by_source])
    write_json(tmp / "chunks.json", [[c.source, c.start, c.end] for c in parts.chunks])
    write_json(tmp / "sentences.json", parts.sentences)
    texts = {a.source: a.text for a in articles}
    (tmp / "terms.json").write_text(
        TermWeights.build([texts[s][a:b] for s, a, b in parts.sentences]).to_json(), "utf-8"
    )
    BM25Index.build([c.text for c in parts.chunks]).save(tmp / "bm25")
    write_annotations(tmp, meta["nlp"], parts.annotations or {})
    if extra is not None:
        meta = {**meta, **extra(tmp, parts)}
    meta = {
        **meta,
        "counts": {"articles": len(articles), "chunks": len(parts.chunks),
                   "sentences": len(parts.sentences)},
        "versions": {name: _version(name) for name in _VERSIONED},
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": {p.relative_to(tmp).as_posix(): file_sha256(p) for p in index_files(tmp)},
    }
    write_json(tmp / "meta.json", meta, indent=2)
    for p in [*index_files(tmp), tmp / "meta.json"]:
        with p.open("rb") as fh:
            os.fsync(fh.fileno())
    final = index_dir / f"v-{time.strftime('%Y%m%d%H%M%S')}-{tmp.name[5:]}"
    os.rename(tmp, final)
    link = index_dir / f".{CURRENT}-{uuid.uuid4().hex[:8]}"
    os.symlink(final.name, link)
    os.replace(link, index_dir / CURRENT)
    fsync_dir(index_dir)
    for stale in index_dir.iterdir():
        if stale.is_dir() and stale != final and stale.name.startswith(("v-", ".tmp-")):
            shutil.rmtree(stale, ignore_errors=True)
    return final


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@dataclass
class Parts:
    """Everything a build computed, ready to be written."""

    chunks: list[Chunk]
    chunk_vectors: np.ndarray
    sentences: list[tuple[str, int, int]]
    sent_vectors: np.ndarray
    embedded_chunks: int
    embedded_sentences: int
    # Each new article's sentence spans, for tagging; then every article's typed spans.
    new_sentences: dict[str, tuple[tuple[int, int], ...]]
    annotations: dict[str, list[Span]] | None = None
