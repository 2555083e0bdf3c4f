"""Sentence vectors pooled from one pass over each chunk (qa/embedding/pooling.py), with a fake."""

from __future__ import annotations

import re

import numpy as np
import pytest
from conftest import FakeEmbedder

from qa.articles.load import load_articles
from qa.embedding.pooling import can_pool, pool_spans
from qa.index.build import build_index
from qa.index.load import current_path, load_index, stale_reason


class TokenFakeEmbedder(FakeEmbedder):
    """FakeEmbedder with token vectors: each word is a token; [CLS] and [SEP] lie at (0, 0).

    Its tokens ignore their context, so a sentence pooled from its chunk must equal the
    sentence embedded alone: that is what the build is checked against.
    """

    name = "fake-tokens"

    def __init__(self, fail_after: int | None = None) -> None:
        super().__init__()
        self.span_calls: list[int] = []
        self.fail_after = fail_after

    def _tokens(self, text: str) -> tuple[np.ndarray, np.ndarray]:
        words = list(re.finditer(r"\S+", text))
        vectors = [np.full(self.dim, 0.05, dtype=np.float32)]  # [CLS]
        vectors += [self._word(w.group()) for w in words]
        vectors.append(np.full(self.dim, -0.05, dtype=np.float32))  # [SEP]
        offsets = [(0, 0), *((w.start(), w.end()) for w in words), (0, 0)]
        return np.array(vectors), np.array(offsets, dtype=np.int64)

    def _word(self, word: str) -> np.ndarray:
        calls = self.calls
        self.calls = []  # a token's vector is not a call to embed
        try:
            return FakeEmbedder.embed(self, [word])[0]
        finally:
            self.calls = calls

    def embed(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.array([self._tokens(t)[0].mean(axis=0) for t in texts], dtype=np.float32)
        return out / np.linalg.norm(out, axis=1, keepdims=True)

    def embed_spans(self, texts: list[str], spans: list[list[tuple[int, int]]]
                    ) -> tuple[np.ndarray, list[np.ndarray]]:
        if self.fail_after is not None and len(self.span_calls) >= self.fail_after:
            raise KeyboardInterrupt
        self.span_calls.append(len(texts))
        vectors, pooled = [], []
        for text, text_spans in zip(texts, spans, strict=True):
            tokens, offsets = self._tokens(text)
            mean = tokens.mean(axis=0)
            vectors.append(mean / np.linalg.norm(mean))
            pooled.append(pool_spans(tokens, offsets, text_spans))
        return np.array(vectors, dtype=np.float32), pooled


def test_pool_spans_averages_the_tokens_inside_each_span() -> None:
    vectors = np.array([[9, 9], [1, 0], [3, 2], [0, 4], [9, 9]], dtype=np.float32)
    offsets = np.array([[0, 0], [0, 3], [4, 8], [9, 12], [0, 0]])  # specials at (0, 0)
    pooled = pool_spans(vectors, offsets, [(0, 8), (9, 12), (13, 20), (2, 10)])
    assert pooled[0].tolist() == [2.0, 1.0]  # tokens 1 and 2, not the specials
    assert pooled[1].tolist() == [0.0, 4.0]
    assert pooled[2].tolist() == [0.0, 0.0]  # no token inside: zeros, embedded alone later
    assert pooled[3].tolist() == [3.0, 2.0]  # only whole tokens count
    assert pool_spans(vectors, offsets, []).shape == (0, 2)


def test_a_pooled_build_embeds_each_chunk_once_and_no_sentence(tiny_config) -> None:
    embedder = TokenFakeEmbedder()
    articles = load_articles(tiny_config.seeds_dir)
    c = tiny_config.indexing
    build_index(tiny_config.index_dir, articles, embedder, c.chunk_size, c.chunk_overlap)
    index = load_index(tiny_config.index_dir)
    assert can_pool(embedder) and index.meta["sentence_vectors"] == "pooled"
    assert sum(embedder.span_calls) == len(index.chunks) and embedder.calls == []
    alone = embedder.embed([index.sentence_text(i) for i in range(len(index.sent_sources))])
    assert np.allclose(index.sent_vectors, alone, atol=1e-5)
    chunks = embedder.embed([c.text for c in index.chunks])
    assert np.allclose(index.dense.reconstruct_n(0, index.dense.ntotal), chunks, atol=1e-5)
    # An index of sentences embedded alone is a different index: it is rebuilt, not reused.
    reason = stale_reason(index.meta, {**index.meta, "sentence_vectors": "embedded"})
    assert reason and "sentence_vectors" in reason


def test_an_interrupted_pooled_build_resumes_where_it_stopped(tiny_config) -> None:
    articles = load_articles(tiny_config.seeds_dir)
    sizes = (tiny_config.indexing.chunk_size, tiny_config.indexing.chunk_overlap)
    reference = tiny_config.index_dir.parent / "reference"
    full = TokenFakeEmbedder()
    build_index(reference, articles, full, *sizes, batch_size=1)
    assert len(full.span_calls) >= 3

    flaky = TokenFakeEmbedder(fail_after=2)
    with pytest.raises(KeyboardInterrupt):
        build_index(tiny_config.index_dir, articles, flaky, *sizes, batch_size=1)
    assert current_path(tiny_config.index_dir) is None
    rerun = TokenFakeEmbedder()
    build_index(tiny_config.index_dir, articles, rerun, *sizes, batch_size=1)
    assert sum(rerun.span_calls) == sum(full.span_calls) - 2
    resumed, whole = load_index(tiny_config.index_dir), load_index(reference)
    assert np.allclose(resumed.sent_vectors, whole.sent_vectors)
    assert not (tiny_config.index_dir / ".partial").exists()
