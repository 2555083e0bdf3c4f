"""The run's shared replies of the real model (tests/subprocess_site/replayed.py): a prompt is read
once in a run, even when two readers ask it at the same moment."""

from __future__ import annotations

import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from types import SimpleNamespace

from subprocess_site.replayed import READINGS, replaying

from qa.llm.base import Completion


def test_a_prompt_asked_twice_at_once_is_read_once(tmp_path: Path) -> None:
    read: list[str] = []
    started = threading.Event()

    def real(runtime, messages, max_tokens, stop, grammar, top_logprobs, on_text, give_up) -> Completion:
        read.append(messages[-1]["content"])
        started.set()
        time.sleep(0.5)  # the second asks while this one reads
        return Completion(f"reply to {messages[-1]['content']}", ())

    complete = replaying(real, tmp_path)
    runtime = SimpleNamespace(name="model.gguf")

    def ask(question: str) -> str:
        if question == "late":
            started.wait(10)
            question = "same"
        return complete(runtime, [{"role": "user", "content": question}]).text

    with ThreadPoolExecutor(3) as pool:
        replies = list(pool.map(ask, ["same", "late", "other"]))
    assert replies == ["reply to same", "reply to same", "reply to other"]
    assert sorted(read) == ["other", "same"]  # "same" read once: the second waited, then replayed it
    how = sorted(line.split("\t")[0] for line in (tmp_path / READINGS).read_text().splitlines())
    assert how == ["read", "read", "replayed"]
