"""Retrieval: dense (FAISS) and BM25 rankings merged by reciprocal rank fusion."""

from __future__ import annotations

import logging
import re
import unicodedata
from collections import OrderedDict
from typing import Literal, TypeVar

import numpy as np

from qa.embedding.base import Embedder
from qa.errors import BadInput
from qa.index.load import Index
from qa.passage import Passage
from qa.text.chunk import Chunk

log = logging.getLogger(__name__)

T = TypeVar("T")
Mode = Literal["hybrid", "dense", "bm25"]
MODES: tuple[Mode, ...] = ("hybrid", "dense", "bm25")
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def clean_question(question: str, max_chars: int = 2000) -> str:
    """Normalise a question; raise BadInput when it is empty or not text."""
    if not isinstance(question, str):
        raise BadInput(f"the question must be text, not {type(question).__name__}")
    text = _CONTROL.sub(" ", unicodedata.normalize("NFC", question)).strip()
    if not text:
        raise BadInput("the question is empty: type a question about the articles")
    if len(text) > max_chars:
        log.warning("question of %d characters cut to %d", len(text), max_chars)
        text = text[:max_chars]
    return text


class Retriever:
    """Searches one loaded index with one embedder."""

    def __init__(self, index: Index, embedder: Embedder, depth: int = 50, rrf_k: int = 60) -> None:
        self.index = index
        self.embedder = embedder
        self.depth = depth
        self.rrf_k = rrf_k
        self._cache: OrderedDict[str, np.ndarray] = OrderedDict()
        import faiss

        # One query is too small to split across threads: OpenMP start-up and spinning cost
        # more than they save, and idle spinning threads slow the ONNX query embedder.
        faiss.omp_set_num_threads(1)

    def embed_query(self, question: str) -> np.ndarray:
        """The query's unit vector, cached for repeated questions."""
        vector = self._cache.get(question)
        if vector is None:
            vector = self.embedder.embed([question])[0]
            self._cache[question] = vector
            if len(self._cache) > 256:
                self._cache.popitem(last=False)
        return vector

    def dense_ranking(self, question: str, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Chunk ids by cosine similarity, best first; only ids in allowed (sorted) when given."""
        import faiss

        total = self.index.dense.ntotal
        n = min(self.depth, total if allowed is None else len(allowed))
        if n == 0:
            return []
        query = self.embed_query(question)[None, :]
        if allowed is None:
            scores, ids = self.index.dense.search(query, n)
        else:
            # FAISS skips the other chunks while it searches, flat, IVF or an older HNSW index alike.
            params = faiss.SearchParameters(sel=faiss.IDSelectorBatch(allowed))  # type: ignore[call-arg]  # SWIG
            scores, ids = self.index.dense.search(query, n, params=params)
        return [(int(i), float(s)) for i, s in zip(ids[0], scores[0], strict=True) if i >= 0]

    def bm25_ranking(self, question: str, allowed: np.ndarray | None = None) -> list[tuple[int, float]]:
        """Chunk ids by BM25 score, best first; chunks sharing no term (or not allowed) are left out."""
        scores = self.index.bm25.scores(question)
        if allowed is not None:
            kept = np.zeros_like(scores)
            kept[allowed] = scores[allowed]
            scores = kept
        n = min(self.depth, len(scores))
        top = np.argpartition(-scores, n - 1)[:n] if n < len(scores) else np.arange(len(scores))
        top = top[np.argsort(-scores[top], kind="stable")]
        return [(int(i), float(scores[i])) for i in top if scores[i] > 0]

    def allowed(self, since: str | None, until: str | None) -> np.ndarray | None:
        """The chunk ids of articles dated within [since, until], or None when there is no bound."""
        if since is not None and until is not None and since > until:
            raise BadInput(f"the dates are the wrong way round: {since} is after {until}")
        sources = self.index.dated(since, until)
        if sources is None:
            return None
        if not sources:
            span = " and ".join(f"{w} {d}" for w, d in (("from", since), ("until", until)) if d)
            raise BadInput(f"no article is dated {span} (undated articles are left out when a date is "
                             "given): widen the dates, or give none")
        return np.array([i for i, c in enumerate(self.index.chunks) if c.source in sources], dtype=np.int64)

    def ranking(self, question: str, mode: Mode = "hybrid", since: str | None = None,
                until: str | None = None) -> list[tuple[int, float]]:
        """Chunk ids with scores, best first, for one retrieval mode and date range."""
        allowed = self.allowed(since, until)
        if mode == "dense":
            return self.dense_ranking(question, allowed)
        if mode == "bm25":
            return self.bm25_ranking(question, allowed)
        if mode != "hybrid":
            raise BadInput(f"unknown retrieval mode {mode!r}: use one of {', '.join(MODES)}")
        fused: dict[int, float] = {}
        for ranking in (self.dense_ranking(question, allowed), self.bm25_ranking(question, allowed)):
            for rank, (chunk_id, _score) in enumerate(ranking):
                fused[chunk_id] = fused.get(chunk_id, 0.0) + 1.0 / (self.rrf_k + rank + 1)
        return sorted(fused.items(), key=lambda item: (-item[1], item[0]))

    def select(self, question: str, k: int = 5, mode: Mode = "hybrid", since: str | None = None,
               until: str | None = None) -> list[tuple[int, float]]:
        """The k best (chunk id, score) pairs, none repeated and no two overlapping."""
        if k < 1:
            raise BadInput(f"k must be at least 1, not {k}")
        chosen: list[tuple[int, float]] = []
        for chunk_id, score in self.ranking(question, mode, since, until):
            chunk = self.index.chunks[chunk_id]
            if any(_overlap(chunk, self.index.chunks[c]) for c, _ in chosen):
                continue
            chosen.append((chunk_id, score))
            if len(chosen) == k:
                break
        return chosen

    def search(self, question: str, k: int = 5, mode: Mode = "hybrid", since: str | None = None,
               until: str | None = None) -> list[Passage]:
        """The k best passages (of articles dated within [since, until] when given), none overlapping."""
        return [self.passage(i, s) for i, s in self.select(question, k, mode, since, until)]

    def passage(self, chunk_id: int, score: float) -> Passage:
        """The Passage for a chunk id."""
        chunk = self.index.chunks[chunk_id]
        return self.index.passage(chunk.source, chunk.text, chunk.start, chunk.end, round(score, 6))


def _overlap(a: Chunk, b: Chunk) -> bool:
    """True when two chunks of the same article share characters."""
    return a.source == b.source and a.start < b.end and b.start < a.end


def day(value: object) -> str | None:
    """A date bound as YYYY-MM-DD (from a date or ISO text), None for None; BadInput otherwise."""
    import datetime as dt

    if value is None or value == "":
        return None
    if isinstance(value, dt.date):
        return value.strftime("%Y-%m-%d")
    try:
        return dt.date.fromisoformat(str(value).strip()[:10]).isoformat()
    except ValueError:
        raise BadInput(f"{str(value)[:40]!r} is not a date: use YYYY-MM-DD, e.g. 2020-03-01") from None


def valid_text(text: T) -> T:
    """Text with lone surrogates as U+FFFD (the tokenizer raises on them); non-text passes through."""
    # Python decodes bytes that are not UTF-8 in argv to lone surrogates: `qa ask $'\xff'`.
    if isinstance(text, str) and not text.isascii():
        return text.encode("utf-8", "surrogatepass").decode("utf-8", "replace")  # type: ignore[return-value]
    return text
