"""Every format with the real model: a page and its Chromium-printed PDF give the same cited sentence;
`qa add`, `qa ask --since/--until` and the chat's date filter, source cards and feed upload."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import article_files as files
import net
import pytest
from click.testing import CliRunner
from net import needs_chromium, serving
from playwright.sync_api import Page
from reading import read_by_model

import qa
from qa.surfaces.cli import main

pytestmark = pytest.mark.slow
ROOT = Path(__file__).parent.parent
QUESTION = "How many Taliban prisoners will Afghanistan release a day?"
DATED = {
    "march.md": "---\ntitle: Prisoner releases begin\ndate: 2020-03-11\nauthor: Reuters\n"
                "url: https://example.org/march\n---\n"
                "Kandahar officials release 100 Zarghun prisoners a day, the governor said.\n",
    "april.md": "---\ntitle: Prisoner releases speed up\ndate: 2020-04-20\nauthor: AP\n"
                "url: javascript:alert(1)\n---\n"
                "Kandahar officials release 300 Zarghun prisoners a day, the governor said.\n",
}
DATED_QUESTION = "How many Zarghun prisoners do Kandahar officials release a day?"


def engine_over(real_qa: qa.QA, root: Path, *paths: Path) -> qa.QA:
    """A real engine over the given files only, in its own folders (sharing the model cache)."""
    seeds = root / "seeds"
    seeds.mkdir(parents=True)
    for path in paths:
        shutil.copy(path, seeds / path.name)
    engine = qa.QA(real_qa.config.replace(seeds_dir=seeds, index_dir=root / "index"))
    engine.build()
    return engine


@pytest.mark.browser  # Chromium prints the page to PDF
def test_a_page_and_its_printed_pdf_cite_the_same_sentence(real_qa: qa.QA, tmp_path: Path) -> None:
    needs_chromium()
    made = tmp_path / "made"
    made.mkdir()
    cited = {}
    for path in (files.page(made), files.printed_pdf(made)):
        engine = engine_over(real_qa, tmp_path / path.suffix[1:], path)
        answer = engine.answer(QUESTION)
        read_by_model(answer)
        assert answer.answered and answer.short == "100", (path.name, answer.text)
        first = answer.citations[0]
        assert engine.index.articles[first.source].text[first.start:first.end] == first.text
        cited[path.suffix] = " ".join(first.text.split())
        # Printed today, the PDF is dated by its text's byline, as the page is by its metadata.
        article = engine.index.articles[path.name]
        assert (article.date, article.file_date) == ("2020-03-11", None), path.name
    assert files.SENTENCE in cited[".html"]
    assert cited[".pdf"] == cited[".html"]


LEFT_TURN = {
    "vote.md": "---\ntitle: Colombia votes\ndate: 2022-06-17\n---\nGustavo Petro will become Colombia's "
               "first leftist leader, after winning the country's presidential race on Sunday.\n",
    "region.md": "---\ntitle: A leftist wave\ndate: 2022-06-20\n---\nChile, Peru and Honduras elected "
                 "leftist leaders in presidential races in 2021, and in Brazil former President Lula is "
                 "leading the polls.\n",
}


def test_the_models_answer_keeps_the_lead_against_a_newer_article_on_something_else(
        real_qa: qa.QA, tmp_path: Path) -> None:
    made = tmp_path / "made"
    made.mkdir()
    for name, text in LEFT_TURN.items():
        (made / name).write_text(text)
    engine = engine_over(real_qa, tmp_path / "left", *(made / name for name in LEFT_TURN))
    answer = engine.answer("Which country elected its first-ever leftist leader this week?")
    read_by_model(answer)
    # The newer sentence names three countries that elected leftists, none of them this week's: it
    # used to lead, and the span reader's "Chile" was shown from it.
    assert answer.short == "Colombia", answer.text
    assert answer.citations[0].source == "vote.md" and "most recent" not in answer.text


def _cli(engine: qa.QA, *args: str):
    cfg = engine.config
    return CliRunner().invoke(main, ["--seeds", str(cfg.seeds_dir), "--index", str(cfg.index_dir), *args])


def test_cli_add_ask_since_until_and_json(real_qa: qa.QA, tmp_path: Path, model_cache: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QA_READER", "spans")  # as in the chat test below: the dates, not the reader
    made = tmp_path / "made"
    made.mkdir()
    for name, text in DATED.items():
        (made / name).write_text(text)
    engine = engine_over(real_qa, tmp_path / "cli", ROOT / "seeds" / "000_c7bb87f1c58ab5e6.txt")
    locked = files.encrypted_pdf(files.typeset_pdf(made), made)
    result = _cli(engine, "add", str(made / "march.md"), str(made / "april.md"), str(files.word(made)),
                  str(locked), str(files.rss(made)))
    assert result.exit_code == 2, result.output
    refused = [line for line in result.output.splitlines() if line.startswith("Refused")]
    assert refused == ["Refused: locked.pdf: the PDF is encrypted; save an unprotected copy and add that"]
    assert "Added 6 article(s) from 4 file(s); 1 refused." in result.output
    assert not (engine.config.seeds_dir / "locked.pdf").exists()

    def cited(*dates: str) -> dict:
        out = _cli(engine, "ask", DATED_QUESTION, "--json", *dates)
        assert out.exit_code == 0, out.output
        return json.loads(out.output)

    newest = cited()
    assert newest["citations"][0]["source"] == "april.md"
    assert newest["text"].startswith("20 Apr 2020 (most recent): ")
    assert newest["citations"][0]["date"] == "2020-04-20" and newest["citations"][0]["author"] == "AP"
    early = cited("--until", "2020-03-31")
    assert {c["source"] for c in early["citations"]} == {"march.md"} and early["short"] == "100"
    late = cited("--since", "2020-04-01")
    assert {c["source"] for c in late["citations"]} == {"april.md"} and late["short"] == "300"
    bad = _cli(engine, "ask", DATED_QUESTION, "--since", "March")
    assert bad.exit_code == 2 and bad.output.strip().startswith("Error: 'March' is not a date")
    search = _cli(engine, "search", "ceasefire extended", "-k", "1", "--json")
    [hit] = json.loads(search.output)
    assert (hit["source"], hit["date"], hit["url"]) == ("wire.rss#3", "2020-03-16", "https://example.org/news/3")
    text = _cli(engine, "search", "ceasefire extended", "-k", "1")
    assert "Ceasefire extended · 16 Mar 2020 · Wire desk · https://example.org/news/3" in text.output


# ---- The chat in Chromium ---------------------------------------------------------------------

@pytest.fixture(scope="module")
def chat_page(tmp_path_factory: pytest.TempPathFactory, onnx_cache: Path) -> Iterator[tuple[Page, qa.QA]]:
    needs_chromium()
    root = tmp_path_factory.mktemp("formats-chat")
    shutil.copytree(ROOT / "seeds", root / "seeds")
    for name, text in DATED.items():
        (root / "seeds" / name).write_text(text)
    engine = qa.QA(qa.Config.from_env(seeds_dir=root / "seeds", index_dir=root / "index",
                                      cache_dir=onnx_cache, uploads=True, rate=0,
                                      # Dates and their order, read by the span reader: the language
                                      # model is unsure between 100 and 300 (0.36), and an unsure
                                      # reader's short answer does not lead (test_lm_real.py).
                                      reader="spans"))
    engine.build()
    with serving(engine) as url, net.chat_page(url) as page:
        yield page, engine


def ask(page: Page, question: str, since: str = "", until: str = "") -> None:
    page.click("#qa-new-chat")
    page.wait_for_selector(".qa-empty")
    page.fill("#qa-since input, #qa-since textarea", since)
    page.fill("#qa-until input, #qa-until textarea", until)
    page.fill("#qa-question textarea", question)
    page.click("#qa-ask")
    # The answer is whole once nothing is pending and the reader has read (its short answer shown).
    page.wait_for_function("() => document.querySelector('.qa-a')"
                           " && !document.querySelector('.qa-pending, .qa-still-reading')", timeout=60_000)


@pytest.mark.browser
def test_chat_source_cards_date_filter_and_feed_upload(chat_page: tuple[Page, qa.QA], tmp_path: Path,
                                                       shots: Path) -> None:
    page, engine = chat_page
    ask(page, DATED_QUESTION)
    answer = page.locator(".qa-a").last
    assert answer.inner_text().startswith("Short answer: 300\n\n20 Apr 2020 (most recent): ")
    bylines = answer.locator(".qa-source .qa-byline")
    assert bylines.first.inner_text() == "AP · 20 Apr 2020"  # javascript: URL: no link
    assert answer.locator("a[href^='javascript']").count() == 0
    link = answer.locator(".qa-source", has_text="march.md").locator(".qa-byline a").first
    assert link.inner_text() == "link" and link.get_attribute("href") == "https://example.org/march"
    assert link.get_attribute("target") == "_blank" and link.get_attribute("rel") == "noopener noreferrer"
    assert "Reuters · 11 Mar 2020 · link" in answer.inner_text()

    ask(page, DATED_QUESTION, until="2020-03-31")
    cards = page.locator(".qa-a").last.locator(".qa-source .qa-file").all_inner_texts()
    assert cards == ["march.md"]
    ask(page, DATED_QUESTION, since="2020-04-01")
    assert page.locator(".qa-a").last.locator(".qa-source .qa-file").all_inner_texts() == ["april.md"]
    page.screenshot(path=str(shots / "chat-7-dates.png"), full_page=True)

    feed = files.atom(tmp_path)
    with page.expect_file_chooser() as chooser:
        page.click("#qa-upload")
    chooser.value.set_files(str(feed))
    # The status shows the upload's progress first, then the outcome.
    page.wait_for_function("() => /added/i.test(document.querySelector('#qa-status').innerText)",
                           timeout=60_000)
    assert "Added wire.atom (3 articles)" in page.inner_text("#qa-status")
    assert {"wire.atom#1", "wire.atom#2", "wire.atom#3"} <= set(engine.index.articles)
    listed = page.inner_text("#qa-articles")
    assert "Ceasefire extended\t16 Mar 2020\twire.atom#3" in listed
    ask(page, "Was the partial ceasefire extended?")
    assert "wire.atom#3" in page.locator(".qa-a").last.inner_text()
