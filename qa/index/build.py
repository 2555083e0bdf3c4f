"""Building the index: embed only new or changed articles, write a new folder, swap it in."""

from __future__ import annotations

import contextlib
import errno
import logging
import shutil
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qa.articles.load import Article
from qa.embedding.base import Embedder
from qa.embedding.pooling import can_pool
from qa.errors import IndexProblem
from qa.files import file_lock
from qa.index.annotations import annotate
from qa.index.load import FORMAT, Index, index_settings, load_index, stale_reason
from qa.index.vectors import BATCH, embed_resumable, pool_into
from qa.index.write import Parts, write_folder
from qa.text.chunk import Chunk, chunk_article
from qa.text.nlp import Tagger
from qa.text.sentences import article_sentences

log = logging.getLogger(__name__)


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

    @classmethod
    def compare(cls, path: Path, articles: list[Article], old_hashes: dict[str, str], same: set[str],
                embedded: tuple[int, int], began: float, unchanged: set[str] | None = None) -> BuildReport:
        """The report of a build of articles over an index that held old_hashes (same: hashes equal)."""
        sources = {a.source for a in articles}
        return cls(path=path, added=sorted(sources - set(old_hashes)),
                   changed=sorted(s for s in sources if s in old_hashes and s not in same),
                   removed=sorted(set(old_hashes) - sources),
                   unchanged=sorted(same if unchanged is None else unchanged),
                   embedded_chunks=embedded[0], embedded_sentences=embedded[1],
                   seconds=time.perf_counter() - began)


def _flat(text: str) -> str:
    """Collapse whitespace (a sentence broken across lines) before embedding."""
    return " ".join(text.split())


def _assemble(
    articles: list[Article], old: Index | None, reuse: set[str], embedder: Embedder,
    chunk_size: int, chunk_overlap: int, progress: bool, partial: Path | None, batch_size: int,
) -> Parts:
    """Chunk and split every article; embed the new ones, copy vectors of the reused ones."""
    old_chunk_vectors = old.dense.reconstruct_n(0, old.dense.ntotal) if old and reuse else None
    chunks: list[Chunk] = []
    sentences: list[tuple[str, int, int]] = []
    # Each row is a vector copied from the old index or a slot to fill after embedding.
    chunk_rows: list[np.ndarray | str] = []
    sent_rows: list[np.ndarray | str] = []
    # With token vectors, each new chunk is embedded once and its sentences pooled from it:
    # (chunk row, [(sentence row, start, end in the chunk), ...]).
    pending: list[tuple[int, list[tuple[int, int, int]]]] = []
    new_sentences: dict[str, tuple[tuple[int, int], ...]] = {}
    rows = (chunks, chunk_rows, sentences, sent_rows)
    for article in sorted(articles, key=lambda a: a.source):
        if article.source in reuse and old is not None and old_chunk_vectors is not None:
            _copy(article.source, old, old_chunk_vectors, rows)
            continue
        new_sentences[article.source] = article_sentences(article.text)
        _split(article, new_sentences[article.source], chunk_size, chunk_overlap, rows,
               pending if can_pool(embedder) else None)
    # Every new row still holds its text here; pooling and embedding fill them with vectors.
    embedded_chunks = sum(isinstance(r, str) for r in chunk_rows)
    embedded_sentences = sum(isinstance(r, str) for r in sent_rows)
    if pending:
        pool_into(pending, chunks, chunk_rows, sent_rows, embedder, partial, batch_size, progress)
    chunk_vectors, sent_vectors = _fill([chunk_rows, sent_rows], embedder, progress, partial,
                                        batch_size)
    return Parts(
        chunks=chunks,
        chunk_vectors=chunk_vectors,
        sentences=sentences,
        sent_vectors=sent_vectors,
        embedded_chunks=embedded_chunks,
        embedded_sentences=embedded_sentences,
        new_sentences=new_sentences,
    )


Rows = tuple[list[Chunk], list, list[tuple[str, int, int]], list]


def _copy(source: str, old: Index, old_chunk_vectors: np.ndarray, rows: Rows) -> None:
    """Copy a reused article's chunks and sentences, with their vectors, from the old index."""
    chunks, chunk_rows, sentences, sent_rows = rows
    for i, c in enumerate(old.chunks):
        if c.source == source:
            chunks.append(c)
            chunk_rows.append(old_chunk_vectors[i])
    for i, s in enumerate(old.sent_sources):
        if s == source:
            start, end = (int(x) for x in old.sent_spans[i])
            sentences.append((s, start, end))
            sent_rows.append(old.sent_vectors[i])


def _split(article: Article, spans: tuple[tuple[int, int], ...], chunk_size: int, chunk_overlap: int,
           rows: Rows, pending: list[tuple[int, list[tuple[int, int, int]]]] | None) -> None:
    """A new article's sentences and chunks as text rows to embed; with ``pending``, each chunk's
    sentences to pool from its token vectors."""
    chunks, chunk_rows, sentences, sent_rows = rows
    first = len(sentences)
    for start, end in spans:
        sentences.append((article.source, start, end))
        sent_rows.append(_flat(article.text[start:end]))  # embedded alone unless pooled
    for c in chunk_article(article, chunk_size, chunk_overlap):
        chunks.append(c)
        chunk_rows.append(_flat(c.text))
        if pending is not None:
            inside = [(j, max(s, c.start) - c.start, min(e, c.end) - c.start)
                      for j, (s, e) in enumerate(spans, first) if s < c.end and e > c.start]
            pending.append((len(chunks) - 1, inside))


def _fill(tables: list[list[np.ndarray | str]], embedder: Embedder, progress: bool, partial: Path | None,
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


def _reusable(index_dir: Path, settings: dict) -> Index | None:
    """The index in use, when it was built with these settings: its unchanged articles are reused."""
    try:
        old = load_index(index_dir)
    except IndexProblem as exc:
        log.info("not reusing the old index: %s", exc)
        return None
    if reason := stale_reason(old.meta, settings):
        log.info("rebuilding from scratch: %s", reason)
        return None
    return old


@contextlib.contextmanager
def _disk_full_freed(index_dir: Path) -> Iterator[None]:
    """A full disk while writing frees what this build wrote and says so in one line."""
    try:
        yield
    except OSError as exc:
        if exc.errno not in (errno.ENOSPC, errno.EFBIG, errno.EDQUOT):
            raise
        # Only this build writes here (we hold the lock): free what it wrote; CURRENT is untouched.
        for tmp in index_dir.glob(".tmp-*"):
            shutil.rmtree(tmp, ignore_errors=True)
        raise IndexProblem(f"the disk is full ({exc.strerror}) while writing the index in {index_dir}/: "
                           "free some space and run `qa build` again; the old index is still "
                           "in use") from None


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
        old = None if force else _reusable(index_dir, settings)
        old_hashes: dict[str, str] = old.meta["articles"] if old else {}
        reuse = {a.source for a in articles if old_hashes.get(a.source) == a.sha256}
        if old is not None and stale_reason(old.meta, settings, articles) is None:
            return BuildReport(old.path, [], [], [], sorted(reuse), 0, 0, time.perf_counter() - began)
        partial = index_dir / ".partial"
        with _disk_full_freed(index_dir):
            parts = _assemble(articles, old, reuse, embedder, chunk_size, chunk_overlap, progress,
                              partial, batch_size)
            reused = {s: old.annotations.articles.get(s, []) for s in reuse} if old else {}
            parts.annotations = annotate(articles, reused, tagger, parts.new_sentences, progress)
            meta = {"format": FORMAT, **settings, "dim": embedder.dim,
                    "articles": {a.source: a.sha256 for a in articles}}
            path = write_folder(index_dir, articles, parts, meta, ann_threshold)
        shutil.rmtree(partial, ignore_errors=True)
    log.info("index built in %s: %d chunks embedded", path, parts.embedded_chunks)
    return BuildReport.compare(path, articles, old_hashes, reuse,
                               (parts.embedded_chunks, parts.embedded_sentences), began)
