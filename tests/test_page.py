"""The chat page as served by app.py (its theme, sign-in and limits), in Chromium with a short window:
each new answer comes into view, bold text is one font, and the README's screenshot."""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from net import chat_page, serving
from playwright.sync_api import Page

import qa
from qa.llm.runtimes import configured_runtime
from qa.notices import NOTICES, say
from qa.readers.lm.prompt import default_prompt
from qa.surfaces.web.render import CSS, SCROLL_JS, chat_html, ordinal

pytestmark = [pytest.mark.browser, pytest.mark.slow]
ROOT = Path(__file__).resolve().parent.parent
# The README's screenshot and this run's may differ in the timings shown (a few words), not more.
MOST_CHANGED = 0.03
QUESTIONS = ["How many Taliban prisoners will be released each day?", "Who is the Taliban's spokesman?",
             "How many prisoners did Ashraf Ghani approve for release?"]
# Where the first element matching sel in the last reply is: [top, bottom] of its box, and the
# window's height.
PLACE = """sel => { const all = document.querySelectorAll('.qa-chat > .qa-a');
  const reply = all[all.length - 1]; const e = reply && reply.querySelector(sel);
  if (!e) return null; const r = e.getBoundingClientRect();
  return [r.top, r.bottom, window.innerHeight]; }"""


@pytest.fixture(scope="module")
def served(real_qa: qa.QA, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The real model and reader over a copy of the seeds, served as app.py serves it. Its model is
    loaded anew (shared=False): its prompt cache holds none of the prompts this process's other
    tests read, so each question here is read in full, seconds long, and the page shows it being
    read. In the process's shared runtime a prompt read before takes 0.2 s, too short for the page
    to be seen in that state on a loaded machine."""
    root = tmp_path_factory.mktemp("page")
    shutil.copytree(ROOT / "seeds", root / "seeds")
    engine = qa.QA(real_qa.config.replace(seeds_dir=root / "seeds", index_dir=root / "index", rate=0),
                   runtime=configured_runtime(real_qa.config, default_prompt().warm_messages(), shared=False))
    engine.build()
    with serving(engine) as url:
        yield url


@pytest.fixture(scope="module")
def page(served: str) -> Iterator[Page]:
    with chat_page(served, height=720) as tab:
        yield tab


def _in_view(page: Page, selector: str) -> None:
    """Wait (up to 10 s) until the element is in the window: the page scrolls in the next frames."""
    seen = "sel => { const p = (" + PLACE + ")(sel); return p && 0 <= p[0] && p[1] <= p[2]; }"
    try:
        page.wait_for_function(seen, arg=selector, timeout=10_000)
    except Exception:  # Playwright's TimeoutError: say where it stayed
        place = page.evaluate(PLACE, selector)
        assert place is not None, f"no {selector}"
        top, bottom, height = place
        pytest.fail(f"{selector} at {top:.0f}-{bottom:.0f} of a {height}-px window")


@pytest.mark.real_reading  # the cited sentences are in view while the model reads
def test_each_new_answer_comes_into_view(page: Page) -> None:
    # From an empty chat in the short window, whichever of this module's tests ran before.
    page.set_viewport_size({"width": 1280, "height": 720})
    page.click("#qa-new-chat")
    page.wait_for_selector(".qa-empty")
    for n, question in enumerate(QUESTIONS, 1):
        page.fill("#qa-question textarea", question)
        page.click("#qa-ask")
        # The cited sentences first, while the language model reads: they are in view.
        page.wait_for_function("n => document.querySelectorAll('.qa-chat > .qa-q').length === n && "
                               "document.querySelector('.qa-chat > .qa-a:last-child.qa-still-reading')",
                               arg=n, timeout=60_000)
        _in_view(page, ".qa-reading")
        _in_view(page, ".qa-source .qa-snippet mark")
        # Then the model's answer replaces it: its short answer and first cited sentence are in view.
        page.wait_for_selector(".qa-chat > .qa-a:last-child.qa-answered:not(.qa-still-reading)",
                               timeout=90_000)
        if page.locator(".qa-chat > .qa-a:last-child .qa-short").count():
            _in_view(page, ".qa-short")
        _in_view(page, ".qa-source .qa-snippet mark")
    assert page.evaluate("window.scrollY") > 0  # three answers do not fit: the page did scroll
    assert page.locator(".qa-chat > .qa-q").count() == len(QUESTIONS)


def _fonts(page: Page, selector: str) -> list[dict]:
    """The font files Chromium drew an element's text with (DevTools' platform fonts)."""
    cdp = page.context.new_cdp_session(page)
    cdp.send("DOM.enable")
    cdp.send("CSS.enable")
    root = cdp.send("DOM.getDocument", {"depth": -1})["root"]["nodeId"]
    node = cdp.send("DOM.querySelector", {"nodeId": root, "selector": selector})["nodeId"]
    return cdp.send("CSS.getPlatformFontsForNode", {"nodeId": node})["fonts"]


def test_bold_text_is_drawn_in_one_font(page: Page) -> None:
    if not page.locator(".qa-short strong").count():
        page.fill("#qa-question textarea", QUESTIONS[0])
        page.click("#qa-ask")
        page.wait_for_selector(".qa-short strong", timeout=90_000)
    for selector in (".qa-short strong", ".qa-src-title", "#qa-ask", ".qa-q"):
        fonts = _fonts(page, selector)
        assert len(fonts) == 1 and fonts[0]["isCustomFont"], (selector, fonts)  # no letter fell back
        bold = selector != ".qa-q"
        assert fonts[0]["postScriptName"].endswith("-Bold" if bold else "-Regular"), (selector, fonts)


def test_the_readmes_screenshot(page: Page, shots: Path) -> None:
    """docs/chat.png is this picture: an answer read by the language model, its dated sources."""
    from PIL import Image, ImageChops

    page.click("#qa-new-chat")
    page.wait_for_selector(".qa-empty")
    page.fill("#qa-question textarea", QUESTIONS[0])
    page.click("#qa-ask")
    page.wait_for_selector(".qa-answered:not(.qa-still-reading) .qa-short", timeout=90_000)
    assert "read by the language model" in page.locator(".qa-timing").last.inner_text()
    assert "11 Mar 2020" in page.locator(".qa-byline").first.inner_text()
    page.evaluate("window.scrollTo(0, 0)")
    page.set_viewport_size({"width": 1280, "height": 900})
    page.screenshot(path=str(shots / "chat.png"))
    shown = Image.open(ROOT / "docs" / "chat.png").convert("RGB")
    now = Image.open(shots / "chat.png").convert("RGB")
    assert shown.size == now.size
    # Pixels that changed by more than a shade: the timings' digits, nothing of the layout or text.
    changed = ImageChops.difference(shown, now).convert("L").point(lambda v: 255 if v > 48 else 0)
    share = changed.histogram()[255] / (now.size[0] * now.size[1])
    assert share <= MOST_CHANGED, (f"{share:.1%} of docs/chat.png differs from the page: if the page is "
                                   f"right, copy {shots / 'chat.png'} to docs/chat.png")


# ---- A chat that never loses a question ------------------------------------------------------

# Each question a person might type while the one before it is answered, and a word of its answer.
IN_TURN = [(QUESTIONS[0], "100"), (QUESTIONS[1], "Shaheen"), (QUESTIONS[2], "1,500")]
# True once every question in the chat has its whole reply (none waiting, searching or still read).
ALL_ANSWERED = ("n => document.querySelectorAll('.qa-chat > .qa-q').length === n && "
                "document.querySelectorAll('.qa-chat > .qa-a').length === n && "
                "!document.querySelector('.qa-chat .qa-pending, .qa-chat .qa-still-reading')")
# Once the chat shows n questions, each reply's state: "answered", "answering" (searched or read), or
# its waiting line ("Waiting: 2nd in line").
STATES = ("n => document.querySelectorAll('.qa-chat > .qa-q').length === n && "
          "[...document.querySelectorAll('.qa-chat > .qa-a')].map(a => a.classList.contains('qa-waiting') ? "
          "a.innerText : a.matches('.qa-answered:not(.qa-still-reading)') ? 'answered' : 'answering')")


def _type(page: Page, text: str, enter: bool = True) -> None:
    """Put text in the question box, pressing Enter when asked."""
    box = page.locator("#qa-question textarea")
    box.fill(text)
    if enter:
        box.press("Enter")


def _fresh(page: Page) -> None:
    """An empty chat and an empty question box."""
    page.set_viewport_size({"width": 1280, "height": 720})
    page.click("#qa-new-chat")
    page.wait_for_selector(".qa-empty")
    page.fill("#qa-question textarea", "")


@pytest.mark.real_reading  # the later questions are typed while the model reads the first
def test_questions_typed_back_to_back_are_each_answered_in_order(page: Page) -> None:
    _fresh(page)
    for n, (question, _) in enumerate(IN_TURN, 1):  # each sent while the answers before it are on their way
        _type(page, question)
        # In the conversation at once; the next is put in the box once the page has sent this one
        # (Playwright fills a box in no time; the page reads it a moment after Enter).
        shown = page.wait_for_function(STATES, arg=n, timeout=5_000).json_value()
        # Those answered meanwhile, then the one being answered, then the rest with their place in
        # line (how many are answered by then depends on the machine's speed).
        done = shown.count("answered")
        places = [f"Waiting: {ordinal(k)} in line" for k in range(2, n - done + 1)]
        assert shown == ["answered"] * done + ["answering"] * (done < n) + places, shown
    assert page.locator(".qa-chat > .qa-q").all_inner_texts() == [q for q, _ in IN_TURN]
    # The box empty: each question left it, and only it.
    page.wait_for_function("() => document.querySelector('#qa-question textarea').value === ''",
                           timeout=5_000)
    page.wait_for_function(ALL_ANSWERED, arg=len(IN_TURN), timeout=300_000)
    replies = page.locator(".qa-chat > .qa-a").all_inner_texts()
    for (question, word), reply in zip(IN_TURN, replies, strict=True):
        assert word in reply, (question, reply)  # each its own answer, in the order asked
    # Nothing to stop once all are answered: the button goes with the update after the last answer.
    page.locator("#qa-stop").wait_for(state="hidden", timeout=5_000)


@pytest.mark.real_reading  # the box is watched while the model reads
def test_the_box_keeps_what_is_typed_while_an_answer_is_read(page: Page) -> None:
    _fresh(page)
    _type(page, "How many prisoners will be freed under the decree?")
    page.wait_for_selector(".qa-chat > .qa-a.qa-pending, .qa-chat > .qa-a.qa-still-reading")
    page.wait_for_timeout(1_000)  # a second later, as the issue tried it, the next question is typed
    page.locator("#qa-question textarea").press_sequentially("Where does the staggered release start?")
    page.wait_for_function(ALL_ANSWERED, arg=1, timeout=300_000)
    page.wait_for_timeout(500)  # any late update of the page has come
    assert page.input_value("#qa-question textarea") == "Where does the staggered release start?"
    page.locator("#qa-question textarea").press("Enter")
    page.wait_for_function(ALL_ANSWERED, arg=2, timeout=300_000)
    assert page.input_value("#qa-question textarea") == ""
    assert page.locator(".qa-chat > .qa-q").last.inner_text() == "Where does the staggered release start?"


@pytest.mark.real_reading  # stopped while the model reads
def test_stop_gives_the_cited_sentences_and_the_next_question_is_answered(page: Page) -> None:
    _fresh(page)
    _type(page, "How many Taliban prisoners will be freed on the first day?")
    page.locator("#qa-stop").wait_for(state="visible", timeout=10_000)
    _type(page, "Who is the Taliban's spokesman?")
    page.click("#qa-stop")  # the first reply is still on its way: read by the model for seconds
    page.wait_for_function(ALL_ANSWERED, arg=2, timeout=300_000)
    stopped, after = page.locator(".qa-chat > .qa-a").all()
    assert stopped.locator(".qa-notice").inner_text() == say("stopped")
    assert stopped.locator(".qa-source .qa-snippet mark").count() >= 1  # the cited sentences found
    assert stopped.locator(".qa-short").count() == 0
    assert "Shaheen" in after.inner_text() and after.locator(".qa-notice").count() == 0


@pytest.mark.parametrize("code", sorted(NOTICES))
def test_each_notice_is_shown_in_chromium(page: Page, real_qa: qa.QA, code: str) -> None:
    """The page's HTML for an answer with each notice, drawn by Chromium: the notice's words are seen."""
    from test_notices import BLANKS, answer_with

    article = next(iter(real_qa.index.articles.values()))
    end = article.text.index(".") + 1
    cited = qa.Passage(article.source, article.title, article.text[:end], 0, end, 1.0)
    tab = page.context.new_page()
    try:
        turn = ("A question?", answer_with(NOTICES[code], cited))
        tab.set_content(f"<style>{CSS}</style>{chat_html(real_qa, [turn])}")
        assert say(code, **BLANKS) in tab.inner_text("body")
    finally:
        tab.close()


def test_a_reply_on_its_way_counts_its_seconds(page: Page, real_qa: qa.QA) -> None:
    """The page counts on from the seconds the server sent (data-s) while no update comes."""
    tab = page.context.new_page()
    try:
        tab.set_content(f'<div id="chat">{chat_html(real_qa, [], pending="A question?", seconds=5)}</div>')
        assert tab.inner_text(".qa-pending") == "Searching the articles… 5 s"
        tab.evaluate("element => {" + SCROLL_JS + "}", tab.locator("#chat").element_handle())
        clock = "() => ['6 s', '7 s'].includes(document.querySelector('.qa-clock').textContent)"
        tab.wait_for_function(clock, timeout=5_000)
    finally:
        tab.close()
