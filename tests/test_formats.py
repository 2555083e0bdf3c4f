"""Articles in every format, from real files the tests write: text and metadata, refusals, offsets,
the stored extractions, date filters and the most recent answer first (fake embedder)."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import article_files as files
import pytest
from conftest import FakeEmbedder

import qa
from qa.articles import load as article_load
from qa.articles.converters.plain import front_matter
from qa.articles.load import articles_from_bytes, load_articles
from qa.surfaces.web import render


def one(path: Path) -> list[qa.Article]:
    return articles_from_bytes(path.name, path.read_bytes())


def test_a_saved_page_keeps_the_article_and_drops_menus_ads_and_footer(tmp_path: Path) -> None:
    [article] = one(files.page(tmp_path))
    assert files.SENTENCE in article.text
    assert "Suhail Shaheen" in article.text and "1,500 prisoners" in article.text
    for noise in files.BOILERPLATE:
        assert noise not in article.text
    assert article.title == "Afghanistan to free Taliban prisoners"
    assert (article.date, article.author) == ("2020-03-11", "Jane Doe")
    assert article.url == "https://www.reuters.com/article/us-afghanistan-prisoners"


def test_a_word_file_gives_paragraphs_and_core_properties(tmp_path: Path) -> None:
    [article] = one(files.word(tmp_path))
    assert article.text.startswith("Briefing on the prisoner release\n\nOfficials in Kabul said 1,500")
    assert "\n\n\n" not in article.text  # the empty paragraph is dropped
    # The core properties' date is when the file was made: kept as the file's, not the article's.
    assert (article.title, article.author, article.date, article.file_date) == (
        "Prisoner release briefing", "Kabul desk", None, "2020-03-12")


def test_an_article_date_in_the_text_wins_over_the_files_own(tmp_path: Path) -> None:
    import docx

    from qa.articles.converters import text_date

    document = docx.Document(files.word(tmp_path))
    document.paragraphs[1].insert_paragraph_before("KABUL, April 16, 2020 - Officials spoke on Thursday.")
    document.save(tmp_path / "dated.docx")
    [article] = one(tmp_path / "dated.docx")
    assert (article.date, article.file_date) == ("2020-04-16", None)
    assert [text_date(t) for t in ("By Jane Doe, March 11, 2020", "Published 8 Apr. 2020 10:00",
                                   "Updated: 2020-04-16T08:00Z", "Sept 3 2019 -", "on 31 February 2020",
                                   "in 2020, 100 prisoners", "x " * 400 + "March 11, 2020")] == [
        "2020-03-11", "2020-04-08", "2020-04-16", "2019-09-03", None, None, None]


def test_a_file_date_is_shown_as_the_files_and_never_read_as_the_articles(fake_qa: qa.QA) -> None:
    import dataclasses

    fake_qa.build()
    name = next(iter(fake_qa.index.articles))
    article = fake_qa.index.articles[name]
    fake_qa.index.articles[name] = dataclasses.replace(article, date=None, file_date="2026-11-30")
    passage = fake_qa.index.passage(name, article.text[:10], 0, 10, 1.0)
    assert (passage.date, passage.file_date) == (None, "2026-11-30")
    assert "file dated 30 Nov 2026" in render.byline(passage)
    assert "file dated 30 Nov 2026" in render.articles_html(fake_qa)
    assert name not in (fake_qa.index.dated("2026-01-01", None) or set())


def test_a_word_file_without_core_properties_is_titled_from_its_text(tmp_path: Path) -> None:
    import zipfile

    source = files.word(tmp_path)
    bare = tmp_path / "bare.docx"
    with zipfile.ZipFile(source) as old, zipfile.ZipFile(bare, "w", zipfile.ZIP_DEFLATED) as new:
        for info in old.infolist():
            data = old.read(info.filename)
            if info.filename == "docProps/core.xml":
                continue
            if info.filename == "_rels/.rels":  # drop the relationship to the core properties too
                data = re.sub(rb'<Relationship [^>]*core-properties"[^>]*/>', b"", data)
            new.writestr(info, data)
    [article] = one(bare)
    assert article.title == "Briefing on the prisoner release"
    assert article.author is None and article.date is None


@pytest.mark.parametrize("make", [files.rss, files.atom])
def test_a_feed_gives_one_article_per_entry(tmp_path: Path, make) -> None:
    path = make(tmp_path)
    articles = one(path)
    assert [a.source for a in articles] == [f"{path.name}#{n}" for n in (1, 2, 3)]
    assert [a.title for a in articles] == [t for t, _, _, _ in files.ENTRIES]
    assert [a.date for a in articles] == [d for _, d, _, _ in files.ENTRIES]
    assert [a.url for a in articles] == [u for _, _, u, _ in files.ENTRIES]
    assert {a.author for a in articles} == {"Wire desk"}
    # HTML entries went through the page converter: no tags, no script.
    assert articles[0].text == "Delegations from Kabul and the Taliban met in Doha to open the talks.\n"
    assert "alert" not in articles[1].text and "<" not in "".join(a.text for a in articles)


def test_front_matter_is_read_and_left_out_of_the_text() -> None:
    fenced = "---\ntitle: Prisoners freed\ndate: 2020-03-14\nurl: https://example.org/a\n---\nBody.\n"
    assert front_matter(fenced) == ({"title": "Prisoners freed", "date": "2020-03-14",
                                     "url": "https://example.org/a"}, "Body.\n")
    plain = "Title: Prisoners freed\nDate: 2020-03-14\n\nBody.\n"
    assert front_matter(plain) == ({"title": "Prisoners freed", "date": "2020-03-14"}, "Body.\n")
    # A first paragraph that is not all front matter keys is article text.
    story = "Update: the talks resumed\nin Doha today.\n\nMore.\n"
    assert front_matter(story) == ({}, story)
    [article] = articles_from_bytes("a.md", fenced.encode())
    assert (article.title, article.date, article.url, article.text) == (
        "Prisoners freed", "2020-03-14", "https://example.org/a", "Body.\n")
    [bare] = articles_from_bytes("b.txt", b"Headline\n\nBody.\n")
    assert (bare.title, bare.date, bare.author, bare.url) == ("Headline", None, None, None)


def _refusal(fake_qa: qa.QA, path: Path) -> str:
    before = (set(fake_qa.index.articles), sorted(p.name for p in fake_qa.config.seeds_dir.iterdir()))
    with pytest.raises(qa.ArticleError) as err:
        fake_qa.add_article(path.name, path.read_bytes())
    message = str(err.value)
    assert "\n" not in message and message.startswith(path.name + ": ")
    assert (set(fake_qa.index.articles), sorted(p.name for p in fake_qa.config.seeds_dir.iterdir())) == before
    return message


@pytest.mark.slow  # every format through its worker process
def test_unreadable_files_are_refused_with_one_line_and_nothing_added(fake_qa: qa.QA, tmp_path: Path) -> None:
    pdf = tmp_path / "source.pdf"
    import pypdf

    writer = pypdf.PdfWriter()
    writer.add_blank_page(200, 200)
    with pdf.open("wb") as fh:
        writer.write(fh)
    assert "encrypted" in _refusal(fake_qa, files.encrypted_pdf(pdf, tmp_path))
    assert "no text layer" in _refusal(fake_qa, files.image_pdf(tmp_path))
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    assert "empty" in _refusal(fake_qa, empty)
    menus = tmp_path / "menus.html"
    menus.write_text("<html><body><nav><a href='/'>Home</a></nav><script>x()</script></body></html>")
    assert "no main text" in _refusal(fake_qa, menus)
    broken = tmp_path / "broken.docx"
    broken.write_bytes(b"PK\x03\x04 not really a zip")
    assert "not a readable Word file" in _refusal(fake_qa, broken)
    truncated = tmp_path / "truncated.pdf"
    truncated.write_bytes(pdf.read_bytes()[:40])
    assert "not a readable PDF" in _refusal(fake_qa, truncated)
    unknown = tmp_path / "sheet.xlsx"
    unknown.write_bytes(b"PK")
    assert "unknown format" in _refusal(fake_qa, unknown)


@pytest.mark.slow  # every format through its worker process
def test_offsets_are_exact_for_every_format(fake_qa: qa.QA, tmp_path: Path) -> None:
    for path in (files.page(tmp_path), files.word(tmp_path), files.rss(tmp_path), files.atom(tmp_path)):
        fake_qa.add_article(path.name, path.read_bytes())
    (tmp_path / "dated.md").write_text("---\ntitle: Dated\ndate: 2020-03-20\n---\nThe talks resumed in Doha.")
    fake_qa.add_article("dated.md", (tmp_path / "dated.md").read_bytes())
    index = fake_qa.index
    assert {"prisoners.html", "briefing.docx", "wire.rss#3", "wire.atom#1", "dated.md"} <= set(index.articles)
    for i in range(len(index.sent_sources)):
        start, end = index.sent_spans[i]
        assert index.sentence_text(i) == index.articles[index.sent_sources[i]].text[start:end]
    for question in ("How many Taliban prisoners a day?", "Who will check every name on the list?",
                     "Was the ceasefire extended?", "Where did the talks resume?"):
        answer = fake_qa.answer(question)
        for p in (*answer.citations, *answer.passages):
            article = index.articles[p.source]
            assert article.text[p.start:p.end] == p.text
            assert (p.date, p.author, p.url) == (article.date, article.author, article.url)
    assert fake_qa.retrieve("ceasefire extended", k=1)[0].url == "https://example.org/news/3"


def test_a_rebuild_does_not_extract_unchanged_files_again(tmp_path: Path, monkeypatch) -> None:
    seeds, cache = tmp_path / "seeds", tmp_path / "index" / "extracted"
    seeds.mkdir()
    files.page(seeds)
    files.rss(seeds)
    first = load_articles(seeds, cache)
    assert len(list(cache.glob("*.json"))) == 2

    def boom(name: str, data: bytes, *_: object) -> list[qa.Article]:
        raise AssertionError(f"{name} extracted again")

    monkeypatch.setattr(article_load, "articles_from_bytes", boom)
    assert load_articles(seeds, cache) == first
    files.word(seeds)
    with pytest.raises(AssertionError, match="briefing.docx extracted again"):
        load_articles(seeds, cache)
    monkeypatch.undo()
    (seeds / "wire.rss").unlink()
    load_articles(seeds, cache)
    assert len(list(cache.glob("*.json"))) == 2  # the removed feed's extraction is gone too


DATED = {
    "march.md": "---\ntitle: Prisoner releases begin\ndate: 2020-03-11\nauthor: Reuters\n"
                "url: https://example.org/march\n---\n"
                "Afghanistan releases 100 Taliban prisoners a day, officials said.\n",
    "april.md": "---\ntitle: Prisoner releases speed up\ndate: 2020-04-20\nauthor: AP\n"
                "url: javascript:alert(1)\n---\n"
                "Afghanistan releases 300 Taliban prisoners a day, officials said.\n",
}


@pytest.fixture
def dated_qa(tmp_path: Path, tiny_config: qa.Config) -> qa.QA:
    seeds = tmp_path / "dated"
    seeds.mkdir()
    for name, text in DATED.items():
        (seeds / name).write_text(text)
    for extra in sorted(tiny_config.seeds_dir.iterdir()):
        shutil.copy(extra, seeds / extra.name)
    return qa.QA(tiny_config.replace(seeds_dir=seeds, index_dir=tmp_path / "dated-index"),
                 embedder=FakeEmbedder())


def test_since_and_until_change_which_article_is_cited(dated_qa: qa.QA) -> None:
    question = "How many Taliban prisoners does Afghanistan release a day?"
    early = dated_qa.answer(question, until="2020-03-31")
    late = dated_qa.answer(question, since="2020-04-01")
    assert early.answered and late.answered
    assert {c.source for c in early.citations} == {"march.md"} and "100" in early.text
    assert {c.source for c in late.citations} == {"april.md"} and "300" in late.text
    assert {p.source for p in dated_qa.retrieve(question, since="2020-04-01")} == {"april.md"}
    # Undated articles are outside every date range.
    assert {p.source for p in dated_qa.retrieve(question, k=10, until="2030-01-01")} <= set(DATED)
    with pytest.raises(ValueError, match="not a date"):
        dated_qa.answer(question, since="last week")
    with pytest.raises(ValueError, match="wrong way round: 2020-04-01 is after 2020-03-01"):
        dated_qa.retrieve(question, since="2020-04-01", until="2020-03-01")


def test_when_dated_articles_disagree_the_most_recent_leads_with_its_date(dated_qa: qa.QA) -> None:
    answer = dated_qa.answer("How many Taliban prisoners does Afghanistan release a day?")
    assert answer.answered
    assert answer.citations[0].source == "april.md"
    assert answer.text.startswith("20 Apr 2020 (most recent): Afghanistan releases 300")
    assert "march.md" in {c.source for c in answer.citations} and "11 Mar 2020: " in answer.text


def test_links_are_http_only_and_open_in_a_new_tab(dated_qa: qa.QA) -> None:
    assert render.link("javascript:alert(1)") == ""
    assert render.link(" JavaScript:alert(1)") == ""
    assert render.link("data:text/html,<b>x</b>") == ""
    assert render.link("https://example.org/a b") == ""
    assert render.link("https://example.org/a?b=1&c=\"2\"") == (
        '<a href="https://example.org/a?b=1&amp;c=&quot;2&quot;" target="_blank" '
        'rel="noopener noreferrer">link</a>')
    answer = dated_qa.answer("How many Taliban prisoners does Afghanistan release a day?")
    html = render.chat_html(dated_qa, [("q", answer)])
    assert "javascript:" not in html
    assert "AP · 20 Apr 2020</div>" in html
    assert ('Reuters · 11 Mar 2020 · <a href="https://example.org/march" target="_blank" '
            'rel="noopener noreferrer">link</a>') in html
    assert "javascript:" not in render.articles_html(dated_qa)


def test_feed_summaries_of_a_line_are_kept_and_big_feeds_refused(tmp_path: Path) -> None:
    items = "".join(f"<item><title>Brief {n}</title><description>&lt;b&gt;Talks resumed.&lt;/b&gt;"
                    "&lt;script&gt;x()&lt;/script&gt;</description></item>" for n in range(3))
    feed = f'<?xml version="1.0"?><rss version="2.0"><channel><title>W</title>{items}</channel></rss>'
    articles = articles_from_bytes("briefs.xml", feed.encode())
    assert [(a.title, a.text, a.date) for a in articles] == [(f"Brief {n}", "Talks resumed.\n", None)
                                                             for n in range(3)]
    big = feed.replace(items, items.replace("Brief", "Item") * 67)
    with pytest.raises(qa.ArticleError, match=r"^big\.rss: 201 entries is over the 200 per feed limit"):
        articles_from_bytes("big.rss", big.encode())
    with pytest.raises(qa.ArticleError, match=r"^notes\.xml: not an RSS or Atom feed"):
        articles_from_bytes("notes.xml", b"<notes><note>hi</note></notes>")
