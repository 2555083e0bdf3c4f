"""The browser chat: HTML rendering, a real server driven through Chromium, and the gradio_client API."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import gradio as gr
import pytest
from chatting import asked, events
from conftest import REAL_READ_TIMEOUT
from net import chat_page, launched
from playwright.sync_api import Page
from reading import no_fallback, read_by_model

import app
import qa
from qa.surfaces.web import chat, render
from qa.surfaces.web.line import Line

ROOT = Path(__file__).parent.parent
EVIL = ('<img src=x onerror="window.__pwned=1"> <script>window.__pwned=1</script> '
        "[link](javascript:window.__pwned=1)")


# ---- Without a server -------------------------------------------------------------------------

@pytest.mark.slow  # a fresh interpreter importing app.py
def test_import_does_not_load_the_model() -> None:
    code = "import sys, app; print('sentence_transformers' in sys.modules, 'torch' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False False"


def test_build_demo_without_engine_is_lazy(monkeypatch: pytest.MonkeyPatch) -> None:
    def boom(*args: object, **kwargs: object) -> None:
        raise AssertionError("the engine must not be created while building the interface")

    monkeypatch.setattr(app.qa, "QA", boom)
    assert isinstance(chat.build_demo(), gr.Blocks)


def test_build_demo_with_engine_starts_no_server(fake_qa: qa.QA) -> None:
    listening = _listening()
    demo = chat.build_demo(fake_qa)
    assert isinstance(demo, gr.Blocks)
    assert demo.is_running is False and demo.local_url is None  # Gradio's own: launch() sets them
    assert _listening() == listening  # no new socket listens in this process
    assert "/ask" in {f"/{fn.api_name}" for fn in demo.fns.values()}


def _listening() -> set[str]:
    """The TCP ports this process's sockets listen on (from /proc: its socket inodes, LISTEN rows)."""
    import os

    inodes = set()
    for fd in os.listdir("/proc/self/fd"):
        try:
            target = os.readlink(f"/proc/self/fd/{fd}")
        except OSError:
            continue
        if target.startswith("socket:["):
            inodes.add(target[8:-1])
    ports = set()
    for table in ("/proc/self/net/tcp", "/proc/self/net/tcp6"):
        for row in Path(table).read_text().splitlines()[1:]:
            cols = row.split()
            if cols[3] == "0A" and cols[9] in inodes:  # 0A: LISTEN
                ports.add(cols[1].rsplit(":", 1)[1])
    return ports


def test_answer_html_escapes_and_marks(fake_qa: qa.QA) -> None:
    citation = next(iter(fake_qa.index.articles.values()))
    start = 0
    end = citation.text.index(".") + 1
    passage = qa.Passage(citation.source, citation.title, citation.text[start:end], start, end, 1.0)
    answer = qa.Answer("<b>q</b>", f"{EVIL} [1]", True, (passage,), short="<i>x</i>",
                       passages=(passage,), timings={"retrieve_ms": 3.2, "answer_ms": 41.0})
    html = render.chat_html(fake_qa, [("<script>q()</script> [x](javascript:alert(1))", answer)])
    assert "<script>" not in html and "<img" not in html and "<i>" not in html
    assert "&lt;script&gt;" in html and "](javascript" not in html
    assert '<span class="qa-cite">[1]</span>' in html and "<mark>" in html
    assert "retrieval 3.2 ms" in html and "answer 41 ms" in html
    pending = render.chat_html(fake_qa, [], pending="<b>hi</b>")
    assert "qa-pending" in pending and "&lt;b&gt;hi" in pending


def test_not_covered_html_is_distinct(fake_qa: qa.QA) -> None:
    passage = fake_qa.retrieve("alpha", 1)[0]
    answer = qa.Answer("?", qa.NOT_COVERED, False, passages=(passage,))
    html = render.answer_html(fake_qa, answer)
    assert "qa-not-covered" in html and "Closest articles (1)</summary>" in html and passage.title in html
    assert '<details class="qa-closest">' in html and passage.text not in html  # titles, folded


# ---- A real server, a real model, a real browser --------------------------------------------

@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory, onnx_cache: Path) -> qa.QA:
    """The real model over a private copy of seeds/ (uploads land in the copy, never the repo)."""
    root = tmp_path_factory.mktemp("chat")
    shutil.copytree(ROOT / "seeds", root / "seeds")
    eng = qa.QA(qa.Config.from_env(seeds_dir=root / "seeds", index_dir=root / "index", cache_dir=onnx_cache,
                                   uploads=True, rate=0, reader="lm", read_timeout=REAL_READ_TIMEOUT))
    eng.build()
    return eng


@pytest.fixture(scope="module")
def server(engine: qa.QA) -> Iterator[str]:
    demo = chat.build_demo(engine)
    port = launched(lambda p: demo.launch(prevent_thread_lock=True, server_name="127.0.0.1", server_port=p,
                                          quiet=True))
    yield f"http://127.0.0.1:{port}/"
    demo.close()


@pytest.fixture(scope="module")
def page(server: str) -> Iterator[Page]:
    with chat_page(server) as pg:
        yield pg


def ask(page: Page, question: str) -> str:
    """Type a question, press Ask, wait for the reply; return the last reply's text."""
    replies = page.locator(".qa-a:not(.qa-pending)")
    before = replies.count()
    page.fill("#qa-question textarea", question)
    page.click("#qa-ask")
    page.wait_for_function(
        "n => document.querySelectorAll('.qa-a:not(.qa-pending)').length > n"
        " && !document.querySelector('.qa-pending, .qa-still-reading')", arg=before, timeout=120_000)
    return replies.last.inner_text()


def upload(page: Page, path: Path) -> str:
    """Upload a file with the page's button; return the status line once it names the file."""
    with page.expect_file_chooser() as chooser:
        page.click("#qa-upload")
    chooser.value.set_files(str(path))
    page.wait_for_function("name => document.querySelector('#qa-status').innerText.includes(name)",
                           arg=path.name, timeout=60_000)
    return page.inner_text("#qa-status")


def new_chat(page: Page) -> None:
    page.click("#qa-new-chat")
    page.wait_for_selector(".qa-empty")


@pytest.mark.browser
@pytest.mark.slow
def test_answer_with_highlighted_source(page: Page, shots: Path) -> None:
    new_chat(page)  # no earlier question to be read as context, whichever test ran before
    reply = ask(page, "How many Taliban prisoners will be released each day?")
    assert "100" in reply
    last = page.locator(".qa-a").last
    assert last.locator("strong", has_text="100").count() >= 1
    sources = last.locator(".qa-source")
    assert sources.count() >= 1
    assert any(f in sources.first.inner_text() for f in ("001_", "002_"))
    mark = sources.first.locator(".qa-snippet mark")
    assert "100" in mark.inner_text()
    # The short answer's own span is highlighted inside the cited sentence, in citation [1].
    assert mark.locator("strong.qa-span").inner_text() == "100"
    assert last.locator(".qa-short strong").inner_text() == "100"
    assert "read by the language model" in last.locator(".qa-timing").inner_text()
    # The whole article opens with the cited sentence scrolled into view.
    sources.first.locator("summary").click()
    full_mark = sources.first.locator(".qa-article mark")
    full_mark.wait_for(state="visible")
    # Waits for the box to scroll (the page's toggle handler does it); times out if it never does.
    page.wait_for_function(
        "([box, mark]) => { const b = box.getBoundingClientRect(), m = mark.getBoundingClientRect();"
        " return b.height > 0 && b.top <= m.top && m.bottom <= b.bottom; }",
        arg=[sources.first.locator(".qa-article").element_handle(), full_mark.element_handle()],
        timeout=10_000)
    page.screenshot(path=str(shots / "chat-1-answer.png"), full_page=True)


# Records the first state of the chat that shows the reader still reading: its text and how many
# sources it cited then (a MutationObserver, so that a short reading is not missed).
SEEN_READING = """() => { window.__reading = null;
  const look = () => { const r = document.querySelector('.qa-still-reading .qa-reading');
    if (r && !window.__reading) window.__reading = {text: r.innerText,
      sources: document.querySelectorAll('.qa-still-reading .qa-source').length}; };
  new MutationObserver(look).observe(document.body,
                                     {subtree: true, childList: true, characterData: true}); }"""


def read_on_page(page: Page) -> None:
    """The last reply was read by the language model (a fallback's says the span reader's)."""
    assert "read by the language model" in page.locator(".qa-a").last.locator(".qa-timing").inner_text()


def cited(page: Page) -> list[str]:
    """The cited sentences of the last answer, as its sources show them."""
    return page.locator(".qa-a").last.locator(".qa-source .qa-snippet").all_inner_texts()


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.real_reading  # what the reply shows while the model reads
def test_the_short_answer_follows_the_cited_sentences(page: Page) -> None:
    new_chat(page)
    # What the reply showed while the model read, however briefly: recorded as the page changes.
    page.evaluate(SEEN_READING)
    page.fill("#qa-question textarea", "Which agency did Suhail Shaheen speak to by phone?")
    page.click("#qa-ask")
    page.wait_for_selector(".qa-answered:not(.qa-still-reading) .qa-short", timeout=120_000)
    seen = page.evaluate("window.__reading")
    assert seen and "Reading" in seen["text"], seen
    assert seen["sources"] >= 1  # the sentences were cited already, while the model read
    assert "Reuters" in page.locator(".qa-short").last.inner_text()
    assert page.locator(".qa-reading").count() == 0
    assert "read by the language model" in page.locator(".qa-timing").last.inner_text()


@pytest.mark.browser
@pytest.mark.slow
def test_follow_up_uses_the_conversation(page: Page, shots: Path) -> None:
    new_chat(page)
    page.click("text=Who is the Taliban's spokesman?")  # an example button asks at once
    # The follow-up is asked once the first answer is whole (read), as a person would.
    page.wait_for_function("() => document.querySelector('.qa-answered')"
                           " && !document.querySelector('.qa-pending, .qa-still-reading')", timeout=120_000)
    read_on_page(page)
    ask(page, "Which agency did he speak to?")
    assert page.locator(".qa-q").count() == 2
    read_on_page(page)
    follow = cited(page)
    # "he" is the spokesman the chat just named: a sentence where Shaheen talks to an agency is cited.
    assert any("Shaheen" in s and re.search(r"Reuters|AFP", s) for s in follow), follow
    page.screenshot(path=str(shots / "chat-2-follow-up.png"), full_page=True)
    new_chat(page)
    ask(page, "Which agency did he speak to?")  # the same words with no conversation before them
    assert cited(page) != follow


@pytest.mark.browser
@pytest.mark.slow
def test_tell_me_more_goes_on_in_the_chat(page: Page) -> None:
    new_chat(page)
    ask(page, "What is this news about?")
    first = cited(page)
    reply = ask(page, "Tell me more.")
    more = cited(page)
    # The story goes on: other sentences, cited, in an overview, none of those shown above.
    assert more and not set(more) & set(first), (first, more)
    assert "overview" in page.locator(".qa-a").last.inner_text(), reply


@pytest.mark.browser
@pytest.mark.slow
def test_near_miss_says_what_is_missing(page: Page) -> None:
    new_chat(page)  # no earlier question to be read as context, whichever test ran before
    reply = ask(page, "How many prisoners did Iran free in 2019?")
    assert "don't cover" in reply and "Iran" in reply
    last = page.locator(".qa-a").last
    assert "qa-not-covered" in (last.get_attribute("class") or "")
    assert last.locator(".qa-short").count() == 0


@pytest.mark.browser
@pytest.mark.slow
def test_off_topic_is_not_covered(page: Page, shots: Path) -> None:
    new_chat(page)
    reply = ask(page, "What is the capital of France?")
    assert qa.NOT_COVERED in reply and "Closest articles" in reply
    closest = page.locator(".qa-not-covered details.qa-closest").last
    assert closest.count() == 1 and closest.get_attribute("open") is None  # folded: titles only
    assert page.locator(".qa-not-covered").count() == 1
    page.screenshot(path=str(shots / "chat-3-not-covered.png"), full_page=True)


@pytest.mark.browser
@pytest.mark.slow
def test_upload_then_ask(page: Page, tmp_path: Path, shots: Path) -> None:
    new_chat(page)
    article = tmp_path / "quillfeather_bakery.txt"
    article.write_text("Quillfeather Bakery Opens In Marrowdale\n\nThe Quillfeather bakery in Marrowdale "
                       "sells 240 loaves of rye bread every morning. Its owner, Hester Quill, trained "
                       "in Vienna for six years before opening the shop.\n")
    assert "Added quillfeather_bakery.txt" in upload(page, article)
    assert "quillfeather_bakery.txt" in page.inner_text("#qa-articles")
    reply = ask(page, "How many loaves does the Quillfeather bakery sell every morning?")
    assert "240" in reply and "quillfeather_bakery.txt" in reply
    read_on_page(page)
    page.screenshot(path=str(shots / "chat-4-upload.png"), full_page=True)


@pytest.mark.browser
@pytest.mark.slow
@pytest.mark.real_reading  # the second question is asked while the model reads the first
def test_questions_asked_during_an_upload_are_answered(page: Page, tmp_path: Path) -> None:
    new_chat(page)
    article = tmp_path / "saltmere_ferry.txt"
    article.write_text("Ferry Service Resumes In Saltmere\n\nThe Saltmere harbour ferry carries 310 "
                       "passengers on each crossing."
                       " It was repaired over the winter by the town's boatyard.\n")
    with page.expect_file_chooser() as chooser:
        page.click("#qa-upload")
    chooser.value.set_files(str(article))
    # At once, while the article is being added, one question and then another: both are in the chat.
    asked = ["How many Taliban prisoners will be released each day?", "Who is the Taliban's spokesman?"]
    for n, question in enumerate(asked, 1):
        page.fill("#qa-question textarea", question)
        page.locator("#qa-question textarea").press("Enter")
        # In the chat before the next is typed: the page reads the box a moment after Enter, and a
        # box filled again before that can send the second question alone (in CI the chat once
        # held fewer than two after 5 s; under the whole suite on 2 cores the first took over 5 s
        # to show while the upload was read).
        page.wait_for_function("n => document.querySelectorAll('.qa-chat > .qa-q').length === n", arg=n,
                               timeout=20_000)
    # The page empties the box once the server has taken the question (a moment after it is shown).
    page.wait_for_function("() => document.querySelector('#qa-question textarea').value === ''",
                           timeout=20_000)
    page.wait_for_function("() => document.querySelector('#qa-status').innerText.includes('saltmere_ferry')",
                           timeout=60_000)
    page.wait_for_function("() => document.querySelectorAll('.qa-chat > .qa-a.qa-answered').length === 2"
                           " && !document.querySelector('.qa-pending, .qa-still-reading')", timeout=300_000)
    first, second = page.locator(".qa-chat > .qa-a").all_inner_texts()
    assert "100" in first and "Shaheen" in second
    # The article added meanwhile answers the next question.
    assert "310" in ask(page, "How many passengers does the Saltmere harbour ferry carry on each crossing?")


@pytest.mark.browser
@pytest.mark.slow
def test_untrusted_text_stays_literal(page: Page, tmp_path: Path, shots: Path) -> None:
    new_chat(page)
    article = tmp_path / "zorblax.md"
    article.write_text(f"Zorblax Festival <script>window.__pwned=1</script> Report\n\n"
                       f"The Zorblax festival in Glimmerton drew 4,321 visitors this year. {EVIL}\n"
                       f"Organisers of the Zorblax festival said [click here](javascript:window.__pwned=1) "
                       f"for tickets.\n")
    assert "Added zorblax.md" in upload(page, article)
    reply = ask(page, "How many visitors did the Zorblax festival in Glimmerton draw?")
    assert "4,321" in reply
    read_on_page(page)
    ask(page, f"{EVIL} what about <b>Zorblax</b> [x](javascript:window.__pwned=1)?")
    page.locator(".qa-source summary").first.click()
    page.locator(".qa-source .qa-article").first.wait_for(state="visible")
    text = page.inner_text("body")
    assert "<script>window.__pwned=1</script>" in text
    assert "[link](javascript:window.__pwned=1)" in text
    assert '<img src=x onerror="window.__pwned=1">' in text
    assert page.evaluate("typeof window.__pwned") == "undefined"
    assert page.locator('a[href^="javascript:"]').count() == 0
    assert page.locator("#qa-chat img, #qa-articles img, #qa-chat script").count() == 0
    page.screenshot(path=str(shots / "chat-5-untrusted.png"), full_page=True)


@pytest.mark.browser
@pytest.mark.slow
def test_bad_uploads_leave_the_index_working(page, tmp_path: Path, engine: qa.QA, shots: Path) -> None:
    new_chat(page)
    before = set(engine.index.articles)
    pdf = tmp_path / "report.pdf"
    pdf.write_bytes(b"%PDF-1.4 not an article")
    empty = tmp_path / "empty.txt"
    empty.write_bytes(b"")
    huge = tmp_path / "huge.txt"
    huge.write_bytes(b"word " * 220_000)
    assert "report.pdf: not a readable PDF" in upload(page, pdf)
    assert "empty" in upload(page, empty)
    assert "over the 1 MB limit" in upload(page, huge)
    assert page.locator(".qa-status-error").count() == 1
    page.screenshot(path=str(shots / "chat-6-bad-upload.png"), full_page=True)
    assert set(engine.index.articles) == before
    assert not (engine.config.seeds_dir / "huge.txt").exists()
    assert "100" in ask(page, "How many Taliban prisoners will be released each day?")
    read_on_page(page)


@pytest.mark.slow
def test_gradio_client_returns_structured_citations(server: str, engine: qa.QA) -> None:
    from gradio_client import Client

    client = Client(server, verbose=False)
    result = client.predict("How many Taliban prisoners will be released each day?", api_name="/ask")
    read_by_model(result)
    assert result["answered"] is True and result["short"] == "100" and "[1]" in result["text"]
    for key in ("question", "query", "evidence", "passages", "timings"):
        assert key in result
    for cite in result["citations"]:
        assert set(cite) == {"source", "title", "text", "start", "end", "score", "date", "author", "url",
                             "file_date"}
        assert engine.index.articles[cite["source"]].text[cite["start"]:cite["end"]] == cite["text"]
    off = client.predict("What is the capital of France?", api_name="/ask")
    no_fallback(off)
    assert off["answered"] is False and off["text"] == qa.NOT_COVERED and off["passages"]


@pytest.mark.slow
def test_gradio_client_follow_ups_use_the_history(server: str) -> None:
    from gradio_client import Client

    client = Client(server, verbose=False)
    earlier = ["Who is the Taliban's spokesman?"]
    question = "Which agency did he speak to?"
    follow = client.predict(question, earlier, api_name="/ask")
    alone = client.predict(question, api_name="/ask")
    read_by_model(follow)
    assert "Shaheen" in follow["query"] and alone["query"] == question
    assert any("Shaheen" in c["text"] and re.search(r"Reuters|AFP", c["text"]) for c in follow["citations"])
    assert [c["text"] for c in follow["citations"]] != [c["text"] for c in alone["citations"]]
    # Two men tweeted: after the question about the spokesman, his tweet is cited first and the other
    # man's never (what the answer goes on with names the spokesman, or no one).
    tweet = client.predict("What did he tweet?", earlier, api_name="/ask")
    read_by_model(tweet)
    cited = [c["text"] for c in tweet["citations"]]
    assert tweet["answered"] and "Shaheen" in cited[0] and not any("Seddiqi" in c for c in cited), cited
    # Without the history, "he" is either man: the president's spokesman's tweet is retrieved first.
    # Which tweet the model then picks is its call (it differs between runtime builds), so it is not asserted.
    assert "Seddiqi" in client.predict("What did he tweet?", api_name="/ask")["passages"][0]["text"]


def test_reply_shows_a_pending_state_first(fake_qa: qa.QA) -> None:
    demo = chat.build_demo(fake_qa)
    line = Line()
    shown, taken, _ = events(demo)["respond"]("What is alpha?", line)
    assert "qa-pending" in shown and "Searching the articles" in shown and taken == "What is alpha?"
    steps = [html for html, _ in events(demo)["serve"](line) if isinstance(html, str)]
    assert "qa-pending" in steps[0]
    assert "qa-pending" not in steps[-1] and len(line.turns) == 1 and isinstance(line.turns[0][1], qa.Answer)
    empty = Line()
    assert events(demo)["respond"]("   ", empty) == (gr.skip(),) * 3  # nothing taken: the box keeps it
    assert empty.waiting == [] and empty.turns == []


def test_ask_api_follows_only_the_last_10_history_questions(fake_qa: qa.QA,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    demo = chat.build_demo(fake_qa)
    ask_api = next(f.fn for f in demo.fns.values() if f.name == "ask_api")
    asked: list[tuple[str, list[str]]] = []
    answer = qa.QA.answer

    def spy(self: qa.QA, question: str, history: object = None, *args: object, **kwargs: object) -> qa.Answer:
        asked.append((question, [q for q, _ in history or []]))
        return answer(self, question, history, *args, **kwargs)

    monkeypatch.setattr(qa.QA, "answer", spy)
    history = [f"Question number {n} about the bridge?" for n in range(12)]
    reply = ask_api("How many cars cross it every day?", history)
    # The first two are dropped; each kept one is answered after those before it, then the question.
    kept = history[2:]
    assert [q for q, _ in asked] == [*kept, "How many cars cross it every day?"]
    assert [h for _, h in asked] == [kept[:n] for n in range(len(kept) + 1)]
    assert reply["question"] == "How many cars cross it every day?" and kept[-1] in reply["query"]
    with pytest.raises(gr.Error, match="history must be a list of the earlier questions"):
        ask_api("Who?", [{"question": "not text"}])


def test_reply_cites_first_then_shows_the_readers_short_answer(tiny_config: qa.Config, fake_embedder) -> None:
    from fake_runtime import FakeRuntime

    engine = qa.QA(tiny_config.replace(reader="lm"), embedder=fake_embedder, runtime=FakeRuntime("40,000"))
    steps, _ = asked(chat.build_demo(engine), "How many cars cross the bridge every day?")
    reading = [html for html in steps if "qa-reading" in html]
    assert len(reading) == 1 and "About 40,000 cars" in reading[0] and "qa-short" not in reading[0]
    assert "qa-reading" not in steps[-1] and "Short answer: <strong>40,000</strong>" in steps[-1]

