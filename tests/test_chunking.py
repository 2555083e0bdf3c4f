"""Sentences and chunks keep exact offsets and never cut inside a sentence."""

from __future__ import annotations

from pathlib import Path

import pytest

from qa.articles.load import article_from_bytes, load_articles
from qa.text.chunk import chunk_article
from qa.text.sentences import split_sentences

SEEDS = Path(__file__).parent.parent / "seeds"


@pytest.fixture(scope="module")
def seeds():
    return load_articles(SEEDS)


def test_sentence_broken_across_lines_is_one_sentence(seeds) -> None:
    article = next(a for a in seeds if a.source.startswith("002_"))
    texts = [article.text[a:b] for a, b in split_sentences(article.text)]
    joined = [t for t in texts if "or\nthose whose sentences have expired" in t]
    assert len(joined) == 1
    assert joined[0].startswith("But he accused") or "accused" in joined[0]


def test_abbreviations_do_not_split(seeds) -> None:
    article = next(a for a in seeds if a.source.startswith("001_"))
    texts = [article.text[a:b] for a, b in split_sentences(article.text)]
    assert any(t.startswith("The Feb. 29 pact") and "U.S.-led" in t for t in texts)


@pytest.mark.parametrize("size,overlap", [(600, 120), (300, 0), (1000, 300)])
def test_chunk_offsets_are_exact_and_on_sentence_boundaries(seeds, size, overlap) -> None:
    for article in seeds:
        starts = {a for a, _ in split_sentences(article.text)}
        ends = {b for _, b in split_sentences(article.text)}
        chunks = chunk_article(article, size, overlap)
        assert chunks
        for chunk in chunks:
            assert article.text[chunk.start : chunk.end] == chunk.text
            assert len(chunk.text) <= size
            assert chunk.start in starts and chunk.end in ends
        covered = set()
        for chunk in chunks:
            covered.update(range(chunk.start, chunk.end))
        for a, b in split_sentences(article.text):
            assert set(range(a, b)) <= covered


def test_overlap_repeats_trailing_sentences(seeds) -> None:
    article = next(a for a in seeds if a.source.startswith("001_"))
    chunks = chunk_article(article, 600, 200)
    assert any(b.start < a.end for a, b in zip(chunks, chunks[1:], strict=False))


def test_overlong_sentence_is_split_inside(tmp_path) -> None:
    text = "word " * 300 + "end."
    article = article_from_bytes("long.txt", text.encode())
    chunks = chunk_article(article, 200, 20)
    assert len(chunks) > 1
    for chunk in chunks:
        assert article.text[chunk.start : chunk.end] == chunk.text and len(chunk.text) <= 200


def test_bad_chunk_settings_are_refused(seeds) -> None:
    with pytest.raises(ValueError, match="chunk_overlap"):
        chunk_article(seeds[0], 100, 100)


def test_split_long_sentence_merges_exactly_with_its_neighbours() -> None:
    # Scraped text often lacks the space after a full stop, making one huge "sentence".
    text = ("Intro here. " + "word " * 50 + "end.Next part runs on " + "more " * 30
            + "stop. Tail one. Tail two.")
    article = article_from_bytes("scraped.txt", text.encode())
    for size in (60, 100, 150):
        chunks = chunk_article(article, size, 0)
        assert len(chunks) > 2
        for chunk in chunks:
            assert article.text[chunk.start : chunk.end] == chunk.text and len(chunk.text) <= size


@pytest.mark.parametrize("text, first", [
    ("Sen. Jane Roe, D-Ore., said the bill would pass easily. Others disagreed.",
     "Sen. Jane Roe, D-Ore., said the bill would pass easily."),
    ("The launch is set for 7:30 p.m. ET on Friday. Crews are ready.",
     "The launch is set for 7:30 p.m. ET on Friday."),
    ("The fair opens at 9 a.m. Monday at the town hall. Entry is free.",
     "The fair opens at 9 a.m. Monday at the town hall."),
    ("PORTLAND, Ore. — Rain fell all day on the city. Roads flooded.",
     "PORTLAND, Ore. — Rain fell all day on the city."),
    ("No. of strikers: 2,400", "No. of strikers: 2,400"),
])
def test_a_piece_cut_after_an_abbreviation_goes_back_on_its_sentence(text: str, first: str) -> None:
    texts = [text[a:b] for a, b in split_sentences(text)]
    assert texts[0] == first
    assert len(texts) == (1 if first == text else 2)


@pytest.mark.parametrize("text", [
    "The shop closed at 5 p.m. The staff went home early.",  # a new sentence after a time
    "The game ended in a tie on a late goal. — Jane Roe",  # a byline, not the sentence's dateline
    "The final ended in a draw. — Jane Roe and Tom Lee of the Sun",
    "The storm hit the coast on Tuesday. https://example.com/storm-report",  # a web address
])
def test_a_sentence_after_an_abbreviation_stays_its_own(text: str) -> None:
    assert len(split_sentences(text)) == 2


def test_an_index_split_otherwise_is_out_of_date() -> None:
    """An index whose sentences were split another way is rebuilt: how they are split is in its settings."""
    from qa.index.load import index_settings, stale_reason
    from qa.text.sentences import SPLITTING

    settings = index_settings("m", "E", 500, 50, True, "nlp")
    assert settings["sentences"] == SPLITTING
    older = {k: v for k, v in settings.items() if k != "sentences"}  # an index built before the setting
    assert "sentences" in (stale_reason(older, settings) or "")
    assert stale_reason(settings, settings) is None
