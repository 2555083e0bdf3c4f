"""The tests' real servers and browser: a free loopback port, the chat app served on it (signed-in
over the tiny articles, or over any engine), and Debian's Chromium opened on it (a test that needs
it fails without it, saying how to install it)."""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import qa
from qa.surfaces.web import chat
from qa.surfaces.web.launch import launch

if TYPE_CHECKING:
    from playwright.sync_api import Browser, Page


def free_port() -> int:
    """A TCP port on 127.0.0.1 that the OS chose and nothing listens on right now (a server
    given it may still lose it to another process: ``launched`` tries again)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


TRIES = 5  # ports tried before a server is said not to start


def launched(start: Callable[[int], None]) -> int:
    """The port start(port) began listening on: a port from the OS, another if it was taken meanwhile."""
    for attempt in range(TRIES):
        port = free_port()
        try:
            start(port)
            return port
        except OSError:
            if attempt == TRIES - 1:
                raise
    raise AssertionError("unreachable")


USERS = {"alice": "alice-pass-1", "bob": "bob-pass-2"}


@contextlib.contextmanager
def signed_server(tmp: Path, users: dict[str, str] | None = None, **settings: object) -> Iterator[str]:
    """A signed-in chat server of its own over the tiny articles (its sign-in throttle, sessions and
    log limits start empty): by default alice may upload, bob may not, and no rate limit."""
    from conftest import DATA, FakeEmbedder

    shutil.copytree(DATA, tmp / "seeds")
    users = users or USERS
    settings = {"uploaders": "alice", "rate": 0, "auth": ",".join(f"{u}:{p}" for u, p in users.items()),
                **settings}
    config = qa.Config.of(seeds_dir=tmp / "seeds", index_dir=tmp / "index", chunk_size=200, chunk_overlap=40,
                          min_evidence=0.3, reader="spans", **settings)
    engine = qa.QA(config, embedder=FakeEmbedder())
    engine.build()
    with serving(engine) as url:
        yield url


@contextlib.contextmanager
def serving(engine: qa.QA) -> Iterator[str]:
    """The chat app over engine, launched as `app.py` does (sign-in, limits), on loopback."""
    demo = chat.build_demo(engine)
    port = launched(lambda p: launch(demo, engine.config, "127.0.0.1", p, prevent_thread_lock=True))
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()


CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync", "--no-first-run"]


MISSING = "Debian's chromium is not at {}: install it with `make browser` (apt-get install chromium)"


def needs_chromium() -> None:
    """Fail the calling test, in one line saying how to install it, when Debian's Chromium is missing:
    a browser test that skipped would hide what it checks."""
    import pytest

    if not os.access(CHROMIUM, os.X_OK):
        pytest.fail(MISSING.format(CHROMIUM), pytrace=False)


@contextlib.contextmanager
def chromium() -> Iterator[Browser]:
    """Debian's Chromium, headless, driven by Playwright (the test fails without it)."""
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
