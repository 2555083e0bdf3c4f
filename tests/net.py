"""The tests' real servers and browser: a free loopback port, the chat app served on it, and
Debian's Chromium opened on it."""

from __future__ import annotations

import contextlib
import os
import socket
from collections.abc import Iterator
from typing import TYPE_CHECKING

import qa
from qa.surfaces import chat

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(engine: qa.QA) -> Iterator[str]:
    """The chat app over engine, launched as `app.py` does (sign-in, limits), on loopback."""
    demo = chat.build_demo(engine)
    port = free_port()
    chat.launch(demo, engine.config, "127.0.0.1", port, prevent_thread_lock=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


def needs_chromium() -> None:
    """Skip the calling test when Debian's Chromium is not installed."""
    import pytest

    if not os.path.exists(CHROMIUM):
        pytest.skip("Debian's chromium is missing: run `make browser`")


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless, driven by Playwright (the test skips without it)."""
    from playwright.sync_api import sync_playwright

    needs_chromium()
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=CHROMIUM, headless=True, args=CHROMIUM_ARGS)
        try:
            yield browser
        finally:
            browser.close()


def open_chat(browser: Browser, url: str, width: int = 1280, height: int = 900) -> Page:
    """A new tab (its own cookies) on the chat at url, once it says how many articles it has."""
    page = browser.new_context(viewport={"width": width, "height": height}).new_page()
    page.goto(url)
    page.wait_for_selector("text=articles indexed", timeout=60_000)
    return page


@contextlib.contextmanager
def chat_page(url: str, width: int = 1280, height: int = 900) -> Iterator[Page]:
    """The chat at url in a fresh headless Chromium."""
    with chromium() as browser:
        yield open_chat(browser, url, width, height)
