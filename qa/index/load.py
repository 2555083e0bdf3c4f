"""The index folder: FAISS + BM25 + sentence vectors + typed spans + meta.json, swapped in atomically."""

from __future__ import annotations

import bisect
import json
import logging
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from qa.articles.load import Article
from qa.errors import IndexProblem
from qa.files import file_sha256
from qa.index.annotations import Annotations
from qa.index.lexical import BM25Index, TermWeights
from qa.passage import Passage
from qa.text.chunk import Chunk
from qa.text.sentences import SPLITTING
from qa.text.words import tokenize

if TYPE_CHECKING:
    import faiss

log = logging.getLogger(__name__)

FORMAT = 3  # 3: an article's headline is not one of its sentences
CURRENT = "CURRENT"


@dataclass
class Index:
    """A loaded index: articles, chunks with vectors and BM25, sentences with vectors."""

    path: Path
    meta: dict
    articles: dict[str, Article]
    chunks: list[Chunk]
    dense: faiss.Index  # over chunk vectors
    bm25: BM25Index
    terms: TermWeights
    sent_sources: list[str]
    sent_spans: np.ndarray  # (n, 2) int64 start, end
    sent_vectors: np.ndarray  # (n, dim) float32
    annotations: Annotations  # entity spans and noun chunks, read per sentence
    _chunk_sentences: list[tuple[int, int]] = field(default_factory=list, repr=False)
    _keys: list[tuple[str, int]] = field(default_factory=list, repr=False)
    # Each sentence's terms, tokenized on first use: answering reads the same sentences often.
    _terms: list[tuple[list[str], frozenset[str]] | None] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        # Sentences are stored sorted by (article, start); a chunk's are a contiguous run.
        keys = [(s, int(a)) for s, a in zip(self.sent_sources, self.sent_spans[:, 0], strict=True)]
        self._keys = keys
        ends = [(s, int(b)) for s, b in zip(self.sent_sources, self.sent_spans[:, 1], strict=True)]
        self._chunk_sentences = [
            (bisect.bisect_right(ends, (c.source, c.start)), bisect.bisect_left(keys, (c.source, c.end)))
            for c in self.chunks
        ]
        self._terms = [None] * len(self.sent_sources)

    def chunk_sentences(self, chunk_id: int) -> range:
        """Indices of the sentences that overlap a chunk."""
        return range(*self._chunk_sentences[chunk_id])

    def article_sentences(self, source: str) -> range:
        """Indices of an article's sentences, in order."""
        keys = self._keys
        return range(bisect.bisect_left(keys, (source, -1)), bisect.bisect_left(keys, (source + "\0", -1)))

    def sentence_at(self, source: str, start: int, end: int) -> int | None:
        """The sentence of source spanning exactly [start, end), or None."""
        at = bisect.bisect_left(self._keys, (source, start))
        if at < len(self._keys) and self._keys[at] == (source, start) and int(self.sent_spans[at][1]) == end:
            return at
        return None

    def sentence_text(self, i: int) -> str:
        """The exact text of sentence i."""
        start, end = self.sent_spans[i]
        return self.articles[self.sent_sources[i]].text[start:end]

    def passage(self, source: str, text: str, start: int, end: int, score: float) -> Passage:
        """A Passage of an article, with the article's title, date, author and URL."""
        a = self.articles[source]
        return Passage(source, a.title, text, start, end, score, a.date, a.author, a.url, a.file_date)

    def citation(self, i: int, score: float = 0.0) -> Passage:
        """The Passage citing sentence i, with its exact offsets."""
        start, end = (int(x) for x in self.sent_spans[i])
        return self.passage(self.sent_sources[i], self.sentence_text(i), start, end, round(score, 4))

    def dated(self, since: str | None, until: str | None) -> frozenset[str] | None:
        """The articles dated within [since, until] (ISO dates), or None when there is no bound."""
        if since is None and until is None:
            return None
        return frozenset(s for s, a in self.articles.items() if a.date is not None
                         and (since is None or a.date >= since) and (until is None or a.date <= until))

    def sentence_terms(self, i: int) -> tuple[list[str], frozenset[str]]:
        """Sentence i's terms in order (``tokenize``) and as a set, computed once."""
        terms = self._terms[i]
        if terms is None:
            tokens = tokenize(self.sentence_text(i))
            terms = self._terms[i] = (tokens, frozenset(tokens))
        return terms


def index_files(folder: Path) -> list[Path]:
    return sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "meta.json")


def current_path(index_dir: Path) -> Path | None:
    """The folder of the index in use, or None when there is none."""
    link = index_dir / CURRENT
    return (index_dir / os.readlink(link)) if link.is_symlink() else None


def _checked_meta(path: Path, fix: str, verify: bool) -> dict:
    """meta.json of an index folder, its format checked and (with ``verify``) every file's hash."""
    meta = json.loads((path / "meta.json").read_text("utf-8"))
    if meta.get("format") != FORMAT:
        raise IndexProblem(f"index format {meta.get('format')} is not {FORMAT}", fix)
    if verify:
        for rel, digest in meta["files"].items():
            file = path / rel
            if not file.is_file() or file_sha256(file) != digest:
                raise IndexProblem(f"index file {rel} is missing or corrupt", fix)
    return meta


def load_index(index_dir: Path, verify: bool = True) -> Index:
    """Load the current index, checking every file against the hashes in meta.json."""
    import faiss

    from qa.index.dense import tune_dense

    path = current_path(index_dir)
    if path is None or not (path / "meta.json").is_file():
        raise IndexProblem(f"no index in {index_dir}/", "run `qa build`")
    fix = f"run `qa build --force` to rebuild {index_dir}/"
    try:
        meta = _checked_meta(path, fix, verify)
        articles = {
            a["source"]: Article(**a)
            for a in json.loads((path / "articles.json").read_text("utf-8"))
        }
        chunks = [
            Chunk(s, a, b, articles[s].text[a:b])
            for s, a, b in json.loads((path / "chunks.json").read_text("utf-8"))
        ]
        sentences = json.loads((path / "sentences.json").read_text("utf-8"))
        dense = faiss.read_index(str(path / "dense.faiss"))
        tune_dense(dense, meta.get("dense"))
        sent_sources = [s for s, _, _ in sentences]
        sent_spans = np.array([[a, b] for _, a, b in sentences], dtype=np.int64).reshape(-1, 2)
        return Index(
            path=path,
            meta=meta,
            articles=articles,
            chunks=chunks,
            dense=dense,
            bm25=BM25Index.load(path / "bm25"),
            terms=TermWeights.from_json((path / "terms.json").read_text("utf-8")),
            sent_sources=sent_sources,
            sent_spans=sent_spans,
            # Mapped, not read: at a million passages the sentence vectors are gigabytes, and an
            # answer reads a few dozen rows.
            sent_vectors=np.load(path / "sentence_vectors.npy", mmap_mode="r"),
            annotations=Annotations.load(path, sent_sources, sent_spans),
        )
    except IndexProblem:
        raise
    except Exception as exc:  # any unreadable part means the same thing to the user
        raise IndexProblem(f"index in {index_dir}/ is unreadable ({type(exc).__name__})", fix) from exc


def stale_reason(meta: dict, settings: dict, articles: list[Article] | None = None) -> str | None:
    """Why an index no longer matches the settings (or the articles, if given), or None."""
    for key, value in settings.items():
        if meta.get(key) != value:
            return f"it was built with {key}={meta.get(key)!r}, now {value!r}"
    if articles is None:
        return None
    built = meta.get("articles", {})
    now = {a.source: a.sha256 for a in articles}
    if built != now:
        diff = sorted(set(built) ^ set(now)) + sorted(s for s in now if s in built and built[s] != now[s])
        more = "…" if len(diff) > 3 else ""
        return f"articles changed since it was built ({', '.join(diff[:3])}{more})"
    return None


def index_settings(model: str, embedder: str, chunk_size: int, chunk_overlap: int,
                   pooled: bool, nlp: str) -> dict:
    """The settings an index must have been built with to be reused."""
    # "pooled": sentence vectors are their chunk's token vectors averaged (qa/embedding/pooling.py);
    # "embedded": each sentence went through the model alone.
    return {"model": model, "embedder": embedder, "chunk_size": chunk_size, "chunk_overlap": chunk_overlap,
            "sentence_vectors": "pooled" if pooled else "embedded", "nlp": nlp, "sentences": SPLITTING}
