"""A cluster build's rows, checked without a cluster: optional fields may be missing on any row
(pandas' NA as Ray Data gives them), and a bad row is one line naming its number, id and field."""

from __future__ import annotations

from pathlib import Path

import pytest

pd = pytest.importorskip("pandas")
pytest.importorskip("pyarrow")

from qa.cluster.corpus import _bad_line, corpus_from_rows, prepare_rows  # noqa: E402
from qa.errors import ArticleError  # noqa: E402


def _rows(records: list[dict]) -> list[dict]:
    """The rows as Ray Data hands them to prepare_rows: pyarrow-backed columns, missing cells NA."""
    frame = pd.DataFrame(records).convert_dtypes(dtype_backend="pyarrow")
    return prepare_rows(frame).to_dict("records")


def test_optional_fields_missing_on_some_rows() -> None:
    rows = _rows([{"id": "a", "title": "A", "text": "The harbour handled 70 ferries.", "url": "https://x/a"},
                  {"id": "b", "text": "The harbour handled 71 ferries."},
                  {"id": "c", "text": "The harbour handled 72 ferries.", "date": "2020-03-11T08:00:00Z"}])
    articles = corpus_from_rows(rows, Path("articles.jsonl")).articles
    assert [(a.source, a.title, a.date, a.url) for a in articles] == [
        ("a", "A", None, "https://x/a"), ("b", "The harbour handled 71 ferries.", None, None),
        ("c", "The harbour handled 72 ferries.", "2020-03-11", None)]


@pytest.mark.parametrize("records, message", [
    ([{"id": "a", "text": "x y"}, {"id": "b", "text": "x", "date": "March"}],
     "corpus articles.jsonl, row 2 (id 'b'): date 'March' is not a date (YYYY-MM-DD; it is optional)"),
    ([{"id": "a", "text": "x", "url": "www.x.org"}],
     "corpus articles.jsonl, row 1 (id 'a'): url 'www.x.org' is not an http(s) address (it is optional)"),
    ([{"id": "a", "text": "x"}, {"id": "", "text": "y"}], "corpus articles.jsonl, row 2: id is empty"),
    ([{"id": "a", "text": "x"}, {"id": "a", "text": "y"}],
     "corpus articles.jsonl, row 2 (id 'a'): the id appears twice; ids must be unique"),
    ([{"id": "a", "text": "x"}, {"id": "b"}], "corpus articles.jsonl, row 2 (id 'b'): text is missing"),
    ([{"id": "a", "title": "no text"}],
     "corpus articles.jsonl, row 1 (id 'a'): no text column (rows are id, text[, title, date, url])"),
])
def test_a_bad_row_names_its_number_id_and_field(records: list[dict], message: str) -> None:
    with pytest.raises(ArticleError) as error:
        corpus_from_rows(_rows(records), Path("articles.jsonl"))
    assert str(error.value) == message


def test_a_line_that_is_not_a_row_is_named(tmp_path: Path) -> None:
    path = tmp_path / "rows.jsonl"
    for body, said in [('{"id": "a", "text": "x"}\n{"id": "b" "text": "y"}\n',
                        "line 2 is not JSON (Expecting ',' delimiter, column 12)"),
                       ('{"id": "a", "text": "x"}\n\n{"id": "b", "text": 5}\n',
                        "line 3: text is 5, not a string"),
                       ('["a", "x"]\n', "line 1 is not an object of id, text[, title, date, url]"),
                       ('{"id": "a", "text": "x"}\n', None)]:
        path.write_text(body)
        assert _bad_line(path) == said


def _index_of(folder: Path, articles: list[str], corpus: Path | None) -> Path:
    """An index folder whose current index holds these article names (only its meta.json)."""
    import json

    (folder / "v1").mkdir(parents=True)
    meta = {"articles": {name: "0" * 64 for name in articles}, **({"corpus": str(corpus)} if corpus else {})}
    (folder / "v1" / "meta.json").write_text(json.dumps(meta))
    (folder / "CURRENT").symlink_to("v1")
    return folder


def test_another_corpus_replaces_an_index_only_when_asked(tmp_path: Path, monkeypatch) -> None:
    from qa.articles.load import Article
    from qa.cluster.corpus import Corpus
    from qa.cluster.replace import refuse_replacing
    from qa.config import Config
    from qa.errors import IndexProblem

    monkeypatch.chdir(tmp_path)
    seeds, rows = tmp_path / "seeds", tmp_path / "articles.jsonl"
    corpus = Corpus([Article("a1", "A", "text", "1" * 64)])
    chat = Config.of(seeds_dir=seeds, index_dir=_index_of(tmp_path / "index", ["000.txt", "001.txt"], None))
    with pytest.raises(IndexProblem) as refused:  # `qa build` made it from seeds/: no corpus recorded
        refuse_replacing(chat, rows.resolve(), corpus)
    assert str(refused.value) == (
        "index/ holds the index of seeds (2 articles), and building articles.jsonl into it would remove "
        "2 of them: give this corpus its own folder (qa --index articles-index build …), or add --replace")
    refuse_replacing(chat, seeds.resolve(), corpus)  # the seeds again, on the cluster: an update
    own = Config.of(seeds_dir=seeds, index_dir=_index_of(tmp_path / "own", ["a1", "a2"], rows.resolve()))
    refuse_replacing(own, rows.resolve(), corpus)  # the same corpus, a row removed: an update
    grown = Config.of(seeds_dir=seeds,
                      index_dir=_index_of(tmp_path / "grown", ["a1"], tmp_path / "old.jsonl"))
    refuse_replacing(grown, rows.resolve(), corpus)  # another corpus that removes nothing
    refuse_replacing(Config.of(seeds_dir=seeds, index_dir=tmp_path / "empty"), rows.resolve(), corpus)
