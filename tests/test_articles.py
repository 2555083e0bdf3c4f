"""Reading articles: encodings, line endings, titles, empty and bad files."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from qa.articles.load import article_from_bytes, load_articles, make_title
from qa.errors import ArticleError


def test_bom_and_crlf_are_normalised() -> None:
    article = article_from_bytes("a.txt", "\ufeffHeadline\r\n\r\nFirst line.\r\nSecond.".encode())
    assert article is not None
    assert article.text == "Headline\n\nFirst line.\nSecond."
    assert article.title == "Headline"


def test_curly_quotes_survive_unchanged() -> None:
    article = article_from_bytes("q.txt", "He said “no” and ‘yes’.".encode())
    assert article is not None and "“no”" in article.text


def test_title_is_shortened_first_sentence_when_no_headline() -> None:
    long_first = "A spokesperson for the group said on Wednesday that the decree was conditional " * 3
    title = make_title(long_first + ". More.")
    assert len(title) <= 91 and title.endswith("…")
    assert make_title("Short sentence here. And more text follows.") == "Short sentence here."


def test_empty_file_is_skipped_with_warning(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    (tmp_path / "empty.txt").write_text("   \n")
    (tmp_path / "ok.md").write_text("Something happened.")
    with caplog.at_level(logging.WARNING):
        articles = load_articles(tmp_path)
    assert [a.source for a in articles] == ["ok.md"]
    assert "empty.txt" in caplog.text


def test_undecodable_file_names_the_file(tmp_path: Path) -> None:
    (tmp_path / "bad.txt").write_bytes(b"ok \xff\xfe broken")
    with pytest.raises(ArticleError, match=r"bad\.txt.*UTF-8"):
        load_articles(tmp_path)


def test_missing_and_empty_folders_have_clear_messages(tmp_path: Path) -> None:
    with pytest.raises(ArticleError, match="does not exist"):
        load_articles(tmp_path / "nope")
    with pytest.raises(ArticleError, match=r"no articles \(\.txt, \.md, \.html"):
        load_articles(tmp_path)


def test_other_file_types_are_ignored(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("Text.")
    (tmp_path / "b.jpg").write_bytes(b"\xff\xd8\xff")
    (tmp_path / "c.json").write_text("{}")
    assert [a.source for a in load_articles(tmp_path)] == ["a.txt"]
