"""Building the index: embed only new or changed articles, write a new folder, swap it in."""

from __future__ import annotations

import contextlib
import errno
import fcntl
import json
import logging
import os
import shutil
import time
import uuid
from collections.abc import Iterator
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path

import numpy as np

from .articles import Article
from .chunk import Chunk, chunk_article
from .dense import BATCH, embed_resumable, make_dense
from .embed import Embedder
from .errors import IndexProblem
from .index import CURRENT, FORMAT, Index, file_sha256, index_files, index_settings, load_index, stale_reason
from .lexical import BM25Index, TermWeights
from .pool import can_pool, pool_into
from .reading.annotations import annotate, write_annotations
from .reading.nlp import Span, Tagger
from .sentences import split_sentences

log = logging.getLogger(__name__)

_VERSIONED = ("qa", "faiss-cpu", "bm25s", "sentence-transformers", "langchain-text-splitters",
              "pysbd", "numpy", "torch")


@dataclass(frozen=True)
class BuildReport:
    """What a build did: which articles changed, and how much was embedded."""

    path: Path
    added: list[str]
    changed: list[str]
    removed: list[str]
    unchanged: list[str]
    embedded_chunks: int
    embedded_sentences: int
    seconds: float

    @property
    def up_to_date(self) -> bool:
        """True when nothing had to change."""
        return not (self.added or self.changed or self.removed)


@dataclass
class _Parts:
    chunks: list[Chunk]
    chunk_vectors: np.ndarray
    sentences: list[tuple[str, int, int]]
    sent_vectors: np.ndarray
    embedded_chunks: int
    embedded_sentences: int
    # Each new article's sentence spans, for tagging; then every article's typed spans.
    new_sentences: dict[str, tuple[tuple[int, int], ...]]
    annotations: dict[str, list[Span]] | None = None


def _flat(text: str) -> str:
    """Collapse whitespace (a sentence broken across lines) before embedding."""
    return " ".join(text.split())


def _assemble(
    articles: list[Article], old: Index | None, reuse: set[str], embedder: Embedder,
    chunk_size: int, chunk_overlap: int, progress: bool, partial: Path, batch_size: int,
) -> _Parts:
    """Chunk and split every article; embed the new ones, copy vectors of the reused ones."""
    old_chunk_vectors = old.dense.reconstruct_n(0, old.dense.ntotal) if old and reuse else None  # type: ignore[attr-defined]
    chunks: list[Chunk] = []
    sentences: list[tuple[str, int, int]] = []
    # Each row is a vector copied from the old index or a slot to fill after embedding.
    chunk_rows: list[np.ndarray | str] = []
    sent_rows: list[np.ndarray | str] = []
    # With token vectors, each new chunk is embedded once and its sentences pooled from it:
    # (chunk row, [(sentence row, start, end in the chunk), ...]).
    pool = can_pool(embedder)
    pending: list[tuple[int, list[tuple[int, int, int]]]] = []
    new_sentences: dict[str, tuple[tuple[int, int], ...]] = {}
    for article in sorted(articles, key=lambda a: a.source):
        if article.source in reuse and old is not None:
            for i, c in enumerate(old.chunks):
                if c.source == article.source:
                    chunks.append(c)
                    chunk_rows.append(old_chunk_vectors[i])
            for i, s in enumerate(old.sent_sources):
                if s == article.source:
                    start, end = (int(x) for x in old.sent_spans[i])
                    sentences.append((s, start, end))
                    sent_rows.append(old.sent_vectors[i])
            continue
        first = len(sentences)
        spans = new_sentences[article.source] = split_sentences(article.text)
        for start, end in spans:
            sentences.append((article.source, start, end))
            sent_rows.append(_flat(article.text[start:end]))  # embedded alone unless pooled
        for c in chunk_article(article, chunk_size, chunk_overlap):
            chunks.append(c)
            chunk_rows.append(_flat(c.text))
            if pool:
                inside = [(j, max(s, c.start) - c.start, min(e, c.end) - c.start)
                          for j, (s, e) in enumerate(spans, first) if s < c.end and e > c.start]
                pending.append((len(chunks) - 1, inside))
    # Every new row still holds its text here; pooling and embedding fill them with vectors.
    embedded_chunks = sum(isinstance(r, str) for r in chunk_rows)
    embedded_sentences = sum(isinstance(r, str) for r in sent_rows)
    if pending:
        pool_into(pending, chunks, chunk_rows, sent_rows, embedder, partial, batch_size, progress)
    chunk_vectors, sent_vectors = _fill([chunk_rows, sent_rows], embedder, progress, partial,
                                        batch_size)
    return _Parts(
        chunks=chunks,
        chunk_vectors=chunk_vectors,
        sentences=sentences,
        sent_vectors=sent_vectors,
        embedded_chunks=embedded_chunks,
        embedded_sentences=embedded_sentences,
        new_sentences=new_sentences,
    )


def _fill(tables: list[list[np.ndarray | str]], embedder: Embedder, progress: bool, partial: Path,
          batch_size: int) -> list[np.ndarray]:
    """Embed the text rows of every table in one pass (resumably, in batches of similar
    length), and stack each table's new vectors with its copied ones."""
    texts = [r for rows in tables for r in rows if isinstance(r, str)]
    fresh = iter(embed_resumable(texts, embedder, partial, batch_size, progress))
    out = []
    for rows in tables:
        vectors = np.zeros((len(rows), embedder.dim), dtype=np.float32)
        for i, row in enumerate(rows):
            vectors[i] = next(fresh) if isinstance(row, str) else row
        out.append(vectors)
    return out


def _write_folder(index_dir: Path, articles: list[Article], parts: _Parts, meta: dict,
                  ann_threshold: int) -> Path:
    """Write every file into a temporary folder, then point CURRENT at it in one rename."""
    import faiss

    tmp = index_dir / f".tmp-{uuid.uuid4().hex[:12]}"
    tmp.mkdir()
    # Exact search up to ann_threshold chunks; beyond, HNSW keeps a query in milliseconds.
    dense, meta["dense"] = make_dense(parts.chunk_vectors, ann_threshold)
    # Written by Python, not faiss.write_index, so a full disk is an OSError we can name.
    (tmp / "dense.faiss").write_bytes(faiss.serialize_index(dense).tobytes())
    np.save(tmp / "sentence_vectors.npy", parts.sent_vectors)
    by_source = sorted(articles, key=lambda a: a.source)
    _write_json(tmp / "articles.json", [asdict(a) for a in by_source])
    _write_json(tmp / "chunks.json", [[c.source, c.start, c.end] for c in parts.chunks])
    _write_json(tmp / "sentences.json", parts.sentences)
    texts = {a.source: a.text for a in articles}
    (tmp / "terms.json").write_text(
        TermWeights.build([texts[s][a:b] for s, a, b in parts.sentences]).to_json(), "utf-8"
    )
    BM25Index.build([c.text for c in parts.chunks]).save(tmp / "bm25")
    write_annotations(tmp, meta["nlp"], parts.annotations or {})
    meta = {
        **meta,
        "counts": {"articles": len(articles), "chunks": len(parts.chunks),
                   "sentences": len(parts.sentences)},
        "versions": {name: _version(name) for name in _VERSIONED},
        "built_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "files": {p.relative_to(tmp).as_posix(): file_sha256(p) for p in index_files(tmp)},
    }
    _write_json(tmp / "meta.json", meta, indent=2)
    for p in [*index_files(tmp), tmp / "meta.json"]:
        with p.open("rb") as fh:
            os.fsync(fh.fileno())
    final = index_dir / f"v-{time.strftime('%Y%m%d%H%M%S')}-{tmp.name[5:]}"
    os.rename(tmp, final)
    link = index_dir / f".{CURRENT}-{uuid.uuid4().hex[:8]}"
    os.symlink(final.name, link)
    os.replace(link, index_dir / CURRENT)
    _fsync_dir(index_dir)
    for stale in index_dir.iterdir():
        if stale.is_dir() and stale != final and stale.name.startswith(("v-", ".tmp-")):
            shutil.rmtree(stale, ignore_errors=True)
    return final


def _write_json(path: Path, data: object, indent: int | None = None) -> None:
    path.write_text(json.dumps(data, ensure_ascii=False, indent=indent), "utf-8")


def _fsync_dir(path: Path) -> None:
    fd = os.open(path, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


@contextlib.contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """Hold an exclusive flock on path, across threads and processes (each call opens its own file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


def build_index(
    index_dir: Path,
    articles: list[Article],
    embedder: Embedder,
    chunk_size: int,
    chunk_overlap: int,
    force: bool = False,
    progress: bool = False,
    ann_threshold: int = 200_000,
    batch_size: int = BATCH,
    tagger: Tagger | None = None,
) -> BuildReport:
    """Build or update the index, embedding only new or changed articles, then swap it in.

    Embedded batches are kept in ``index_dir/.partial/`` until the build succeeds, so a
    rerun after an interruption embeds only what was not finished.
    """
    began = time.perf_counter()
    tagger = tagger or Tagger()
    settings = index_settings(embedder.name, type(embedder).__name__, chunk_size, chunk_overlap,
                              can_pool(embedder), tagger.name)
    with file_lock(index_dir / ".lock"):  # one build at a time per index folder
        old = None
        if not force:
            try:
                old = load_index(index_dir)
                if reason := stale_reason(old.meta, settings):
                    log.info("rebuilding from scratch: %s", reason)
                    old = None
            except IndexProblem as exc:
                log.info("not reusing the old index: %s", exc)
        old_hashes: dict[str, str] = old.meta["articles"] if old else {}
        reuse = {a.source for a in articles if old_hashes.get(a.source) == a.sha256}
        if old is not None and stale_reason(old.meta, settings, articles) is None:
            return BuildReport(old.path, [], [], [], sorted(reuse), 0, 0, time.perf_counter() - began)
        partial = index_dir / ".partial"
        try:
            parts = _assemble(articles, old, reuse, embedder, chunk_size, chunk_overlap, progress,
                              partial, batch_size)
            reused = {s: old.annotations.articles.get(s, []) for s in reuse} if old else {}
            parts.annotations = annotate(articles, reused, tagger, parts.new_sentences, progress)
            meta = {"format": FORMAT, **settings, "dim": embedder.dim,
                    "articles": {a.source: a.sha256 for a in articles}}
            path = _write_folder(index_dir, articles, parts, meta, ann_threshold)
        except OSError as exc:
            if exc.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
                raise
            # Only this build writes here (we hold the lock): free what it wrote; CURRENT is untouched.
            for tmp in index_dir.glob(".tmp-*"):
                shutil.rmtree(tmp, ignore_errors=True)
            raise IndexProblem(f"the disk is full ({exc.strerror}) while writing the index in {index_dir}/: "
                               "free some space and run `qa build` again; the old index is still "
                               "in use") from None
        shutil.rmtree(partial, ignore_errors=True)
    log.info("index built in %s: %d chunks embedded", path, parts.embedded_chunks)
    return BuildReport(
        path=path,
        added=sorted(a.source for a in articles if a.source not in old_hashes),
        changed=sorted(a.source for a in articles if a.source in old_hashes and a.source not in reuse),
        removed=sorted(set(old_hashes) - {a.source for a in articles}),
        unchanged=sorted(reuse),
        embedded_chunks=parts.embedded_chunks,
        embedded_sentences=parts.embedded_sentences,
        seconds=time.perf_counter() - began,
    )
