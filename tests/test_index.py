"""Index building with the fake embedder: incremental updates, atomic swap, corruption."""

from __future__ import annotations

import json

import pytest

from qa import QA, IndexProblem
from qa.index.build import build_index
from qa.index.lexical import BM25Index
from qa.index.load import current_path, load_index


def test_build_writes_readable_meta(fake_qa: QA) -> None:
    report = fake_qa.build()
    assert sorted(report.added) == ["alpha.txt", "beta.txt", "gamma.md"]
    meta = json.loads((current_path(fake_qa.config.index_dir) / "meta.json").read_text())
    assert meta["model"] == "fake-hash" and meta["dim"] == 64
    assert meta["chunk_size"] == 200 and meta["chunk_overlap"] == 40
    assert set(meta["articles"]) == {"alpha.txt", "beta.txt", "gamma.md"}
    assert "dense.faiss" in meta["files"] and "sentence_vectors.npy" in meta["files"]
    assert meta["versions"]["faiss-cpu"]


def test_incremental_build_embeds_only_the_changed_file(fake_qa: QA, fake_embedder) -> None:
    fake_qa.build()
    seeds = fake_qa.config.seeds_dir
    (seeds / "beta.txt").write_text("Council approves new museum\n\nThe museum opens in May.\n")
    before = fake_embedder.embedded
    report = fake_qa.build()
    assert report.changed == ["beta.txt"] and report.unchanged == ["alpha.txt", "gamma.md"]
    index = load_index(fake_qa.config.index_dir)
    beta_chunks = [c for c in index.chunks if c.source == "beta.txt"]
    beta_sentences = [s for s in index.sent_sources if s == "beta.txt"]
    assert report.embedded_chunks == len(beta_chunks)
    assert report.embedded_sentences == len(beta_sentences) == 1  # the headline is its title, no sentence
    assert fake_embedder.embedded - before == len(beta_chunks) + len(beta_sentences)
    # Reused vectors are the ones the old index held, in the right rows.
    fresh = fake_embedder.embed([c.text for c in index.chunks])
    stored = index.dense.reconstruct_n(0, index.dense.ntotal)
    assert abs(fresh - stored).max() < 1e-6


def test_deleted_article_is_dropped_and_noop_build_embeds_nothing(fake_qa: QA, fake_embedder) -> None:
    fake_qa.build()
    (fake_qa.config.seeds_dir / "gamma.md").unlink()
    report = fake_qa.build()
    assert report.removed == ["gamma.md"] and report.embedded_chunks == 0
    assert "gamma.md" not in load_index(fake_qa.config.index_dir).articles
    before = fake_embedder.embedded
    assert fake_qa.build().up_to_date and fake_embedder.embedded == before


def test_corrupt_file_is_refused_with_the_fix(fake_qa: QA) -> None:
    fake_qa.build()
    path = current_path(fake_qa.config.index_dir) / "dense.faiss"
    path.write_bytes(path.read_bytes()[:-10])
    with pytest.raises(IndexProblem, match=r"dense\.faiss.*qa build --force"):
        load_index(fake_qa.config.index_dir)


def test_engine_rebuilds_a_corrupt_index(fake_qa: QA, fake_embedder, caplog) -> None:
    fake_qa.build()
    (current_path(fake_qa.config.index_dir) / "sentences.json").write_text("{not json")
    engine = QA(fake_qa.config, embedder=fake_embedder)
    with caplog.at_level("WARNING", logger="qa.engine.library"):
        assert engine.retrieve("harbour bridge repairs")[0].source == "alpha.txt"
    # It says what it found and that it is fixing it, not to run what it already runs.
    assert [r.getMessage() for r in caplog.records] == [
        "index file sentences.json is missing or corrupt; rebuilding it now"]


def test_missing_index_message(tmp_path) -> None:
    with pytest.raises(IndexProblem, match="run `qa build`"):
        load_index(tmp_path / "index")


def test_crash_mid_build_leaves_old_index_intact(fake_qa: QA, monkeypatch) -> None:
    fake_qa.build()
    old = current_path(fake_qa.config.index_dir)
    (fake_qa.config.seeds_dir / "alpha.txt").write_text("Changed text about ferries.\n")

    def boom(texts):
        raise RuntimeError("disk full")

    monkeypatch.setattr(BM25Index, "build", staticmethod(boom))
    with pytest.raises(RuntimeError):
        fake_qa.build()
    assert current_path(fake_qa.config.index_dir) == old
    index = load_index(fake_qa.config.index_dir)
    assert "harbour" in index.articles["alpha.txt"].text


def test_other_model_or_chunking_is_a_full_rebuild(fake_qa: QA, fake_embedder) -> None:
    from qa.articles.load import load_articles

    fake_qa.build()
    articles = load_articles(fake_qa.config.seeds_dir)
    report = build_index(fake_qa.config.index_dir, articles, fake_embedder, 300, 40)
    assert sorted(report.added) == ["alpha.txt", "beta.txt", "gamma.md"]
    assert load_index(fake_qa.config.index_dir).meta["chunk_size"] == 300


def test_stale_index_is_updated_on_open(fake_qa: QA, fake_embedder) -> None:
    fake_qa.build()
    (fake_qa.config.seeds_dir / "delta.txt").write_text("Volcano erupts near the village of Lumo.\n")
    engine = QA(fake_qa.config, embedder=fake_embedder)
    assert engine.retrieve("volcano Lumo", k=1)[0].source == "delta.txt"


def test_a_headline_titles_its_article_and_is_never_a_sentence(fake_qa: QA) -> None:
    fake_qa.build()
    index = fake_qa.index
    alpha = index.articles["alpha.txt"]
    assert alpha.title == "Harbour Bridge Reopens After Repairs"
    texts = [index.sentence_text(i) for i, s in enumerate(index.sent_sources) if s == "alpha.txt"]
    assert texts and not any("Reopens" in t for t in texts)
    assert texts[0].startswith("The city council said on Monday")
    # Still searchable: the first chunk holds it.
    assert any("Reopens After Repairs" in c.text for c in index.chunks if c.source == "alpha.txt")


@pytest.mark.parametrize(("text", "found"), [
    ("Harbour Bridge Reopens\n\nThe bridge opened.\n", "Harbour Bridge Reopens"),
    ("# Harbour Notes\nThe harbour handled 73 ferries.\n", "# Harbour Notes"),
    ("The bridge opened on Monday.\nIt carries cars.\n", None),  # a sentence, not a headline
    ("The bridge that opened\non Monday carries cars.\n", None),  # one sentence broken across lines
    ("Harbour Bridge Reopens\n", None),  # the only line is the article
])
def test_what_is_a_headline(text: str, found: str | None) -> None:
    from qa.articles.load import headline

    span = headline(text)
    assert (text[span[0]:span[1]] if span else None) == found
