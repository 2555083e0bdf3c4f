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
    """The real model and reader over a copy of the seeds, served as app.py serves it."""
    root = tmp_path_factory.mktemp("page")
    shutil.copytree(ROOT / "seeds", root / "seeds")
    engine = qa.QA(real_qa.config.replace(seeds_dir=root / "seeds", index_dir=root / "index", rate=0),
                   runtime=real_qa.runtime)
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
