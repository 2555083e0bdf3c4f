"""The work each Ray actor does for a batch of articles: chunk, split, embed on ONNX, tag."""

from __future__ import annotations

import logging
import pickle
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from qa.articles.load import Article
from qa.embedding.base import Embedder
from qa.index.annotations import annotate
from qa.index.build import _assemble  # the single-machine build's per-article work, reused as is
from qa.index.vectors import BATCH
from qa.text.nlp import Tagger

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Settings:
    """What every actor needs to do the same work as the single-machine build."""

    model: str
    export: Path  # the float32 ONNX export: the exact vectors of the packaged model
    nlp: str
    chunk_size: int
    chunk_overlap: int


@dataclass
class Piece:
    """One article's share of the index, as an actor computed it."""

    chunks: list[tuple[int, int]]
    chunk_vectors: np.ndarray
    sentences: list[tuple[int, int]]
    sent_vectors: np.ndarray
    spans: list


class ArticleWorker:
    """A Ray Data actor: loads the ONNX model and the spaCy pipeline once, then does batches."""

    def __init__(self, settings: Settings) -> None:
        from qa.embedding.onnx_runtime import OnnxEmbedder
        from qa.text.nlp import Tagger

        self.settings = settings
        # One thread: the actor holds one CPU of the cluster, and the pool spreads over the rest.
        self.embedder = OnnxEmbedder(settings.model, 1, settings.export)
        self.tagger = Tagger(settings.nlp)

    def __call__(self, batch: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """source, title, text, sha256 columns in; source and a pickled Piece per article out."""
        articles = [Article(str(s), str(t), str(x), str(h)) for s, t, x, h in
                    zip(batch["source"], batch["title"], batch["text"], batch["sha256"], strict=True)]
        pieces = work(articles, self.embedder, self.tagger, self.settings)
        sources = [a.source for a in articles]
        payload = np.empty(len(sources), dtype=object)
        payload[:] = [pickle.dumps(pieces[s], protocol=pickle.HIGHEST_PROTOCOL) for s in sources]
        return {"source": np.array(sources, dtype=object), "payload": payload}


def work(articles: list[Article], embedder: Embedder, tagger: Tagger, settings: Settings) -> dict[str, Piece]:
    """Each article's chunks, sentences, vectors and typed spans, as ``qa build`` computes them."""
    parts = _assemble(articles, None, set(), embedder, settings.chunk_size, settings.chunk_overlap, False,
                      None, BATCH)
    spans = annotate(articles, {}, tagger, parts.new_sentences)
    pieces: dict[str, Piece] = {}
    for a in articles:
        pieces[a.source] = Piece([], np.zeros((0, embedder.dim), np.float32), [],
                                 np.zeros((0, embedder.dim), np.float32), spans[a.source])
    rows: dict[str, list[int]] = {a.source: [] for a in articles}
    for i, c in enumerate(parts.chunks):
        pieces[c.source].chunks.append((c.start, c.end))
        rows[c.source].append(i)
    for source, picked in rows.items():
        pieces[source].chunk_vectors = parts.chunk_vectors[picked]
    rows = {a.source: [] for a in articles}
    for i, (source, start, end) in enumerate(parts.sentences):
        pieces[source].sentences.append((start, end))
        rows[source].append(i)
    for source, picked in rows.items():
        pieces[source].sent_vectors = parts.sent_vectors[picked]
    return pieces


def unpack(payload: bytes) -> Piece:
    """The Piece an actor pickled."""
    return pickle.loads(payload)  # written by our own actors in this build
