"""Large-corpus builds with the fake embedder: resuming after an interruption, the switch to an IVF index."""

from __future__ import annotations

import json

import numpy as np
import pytest
from conftest import FakeEmbedder

from qa import QA
from qa.articles.load import load_articles
from qa.index.build import build_index
from qa.index.load import current_path, load_index


class Interrupted(Exception):
    """Stands in for Ctrl-C in the middle of a build."""


class FlakyEmbedder(FakeEmbedder):
    """Embeds like FakeEmbedder, but raises once it has embedded `fail_after` batches."""

    def __init__(self, fail_after: int | None) -> None:
        super().__init__()
        self.fail_after = fail_after

    def embed(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        if self.fail_after is not None and len(self.calls) >= self.fail_after:
            raise Interrupted
        return super().embed(texts, show_progress)


def test_rerun_after_interruption_embeds_only_unfinished_batches(tiny_config) -> None:
    articles = load_articles(tiny_config.seeds_dir)
    args = (tiny_config.index_dir, articles)
    sizes = (tiny_config.indexing.chunk_size, tiny_config.indexing.chunk_overlap)
    full = FakeEmbedder()
    build_index(tiny_config.index_dir.parent / "reference", articles, full, *sizes, batch_size=2)
    assert len(full.calls) > 4  # enough batches to interrupt midway

    flaky = FlakyEmbedder(fail_after=3)
    with pytest.raises(Interrupted):
        build_index(*args, flaky, *sizes, batch_size=2)
    assert current_path(tiny_config.index_dir) is None  # nothing half-built was swapped in
    done = flaky.embedded

    rerun = FlakyEmbedder(fail_after=None)
    build_index(*args, rerun, *sizes, batch_size=2)
    assert 0 < done < full.embedded and rerun.embedded == full.embedded - done
    assert not (tiny_config.index_dir / ".partial").exists()  # the cache goes once it is built
    resumed = load_index(tiny_config.index_dir)
    reference = load_index(tiny_config.index_dir.parent / "reference")
    assert np.allclose(resumed.sent_vectors, reference.sent_vectors)
    assert np.allclose(resumed.dense.reconstruct_n(0, resumed.dense.ntotal),
                       reference.dense.reconstruct_n(0, reference.dense.ntotal))


def test_over_the_threshold_the_index_is_ivf_and_retrieves(fake_qa: QA, fake_embedder) -> None:
    config = fake_qa.config.replace(ann_threshold=5)  # the tiny articles make 5 chunks
    engine = QA(config, embedder=fake_embedder)
    engine.build()
    index = load_index(config.index_dir)
    meta = json.loads((index.path / "meta.json").read_text())
    assert len(index.chunks) >= 5
    assert meta["dense"]["type"] == "ivf" and "IVF" in type(index.dense).__name__
    assert index.dense.nprobe == meta["dense"]["nprobe"] and index.dense.nlist == meta["dense"]["nlist"]
    # Every chunk finds itself first, as exact search would.
    vectors = index.dense.reconstruct_n(0, index.dense.ntotal)
    _, ids = index.dense.search(vectors, 1)
    assert (ids[:, 0] == np.arange(len(vectors))).mean() >= 0.95
    top = engine.retrieve("How many cars cross the bridge every day?", k=1, mode="dense")[0]
    assert "cars cross" in top.text
    # The incremental path reads vectors back out of the IVF index.
    (config.seeds_dir / "beta.txt").write_text("Council approves new museum\n\nThe museum opens in May.\n")
    report = engine.build()
    assert report.unchanged == ["alpha.txt", "gamma.md"]
    assert engine.answer("When does the museum open?").answered


def test_below_the_threshold_the_index_is_exact(fake_qa: QA) -> None:
    fake_qa.build()
    meta = json.loads((current_path(fake_qa.config.index_dir) / "meta.json").read_text())
    assert meta["dense"] == {"type": "flat"}


def test_each_distinct_text_is_embedded_once_and_rows_keep_their_order(tmp_path) -> None:
    from qa.index.vectors import embed_resumable

    texts = ["a much longer text about the harbour bridge", "short", "bridge", "short", "a"]
    embedder = FakeEmbedder()
    vectors = embed_resumable(texts, embedder, tmp_path / "partial", batch_size=2)
    assert embedder.embedded == 4  # "short" once
    assert np.allclose(vectors, FakeEmbedder().embed(texts))


def test_ivf_finds_what_exact_search_finds() -> None:
    from qa.index.dense import ivf_nlist, make_dense

    rng = np.random.default_rng(1)
    centres = rng.standard_normal((50, 32)).astype(np.float32)
    vectors = centres[rng.integers(0, 50, 5000)] + 0.3 * rng.standard_normal((5000, 32)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    ivf, info = make_dense(vectors, ann_threshold=1000)
    exact, _ = make_dense(vectors, ann_threshold=10_000)
    assert info["type"] == "ivf" and info["nlist"] == ivf_nlist(5000) > 1 and info["nprobe"] < info["nlist"]
    queries = vectors[:100] + 0.05 * rng.standard_normal((100, 32)).astype(np.float32)
    _, want = exact.search(queries, 10)
    _, got = ivf.search(queries, 10)
    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(got, want, strict=True)])
    assert recall >= 0.9


def test_length_batches_group_similar_lengths_within_the_budget() -> None:
    from qa.embedding.base import length_batches

    texts = ["x" * n for n in (300, 5, 10, 290, 7, 100)]
    batches = length_batches(texts, max_texts=3, max_chars=600)
    assert sorted(i for b in batches for i in b) == list(range(len(texts)))
    assert batches[0] == [1, 4, 2]  # the shortest first, at most max_texts
    for batch in batches:
        assert len(batch) == 1 or len(batch) * max(len(texts[i]) for i in batch) <= 600
