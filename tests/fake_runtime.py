"""A deterministic stand-in for the language model: canned replies with token log-probabilities."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

from qa.llm.base import Completion, Messages, Token
from qa.llm.queue import current_stop


class FakeRuntime:
    """Replies with ``reply(messages)`` (a phrase, or "not in the articles"), each word one token
    of probability ``p``; records every request; ``delay`` seconds per call, and with ``hold`` each
    call waits for a release of it (``reading`` is set once a call is under way); ``fail`` raises."""

    name = "fake-lm"

    def __init__(self, reply: str | Callable[[Messages], str] = "not in the articles", p: float = 0.9,
                 delay: float = 0.0, fail: Exception | None = None,
                 hold: threading.Semaphore | None = None) -> None:
        self.reply, self.p, self.delay, self.fail, self.hold = reply, p, delay, fail, hold
        self.reading = threading.Event()
        self.requests: list[dict] = []
        self._lock = threading.Lock()

    def complete(self, messages: Messages, max_tokens: int = 16, stop: Sequence[str] = (),
                 grammar: str | None = None, top_logprobs: int = 0,
                 on_text: Callable[[str], None] | None = None,
                 give_up: Callable[[], bool] | None = None) -> Completion:
        import math

        # As the real runtime does: a reading whose question was given up (or whose queue closed
        # at exit) stops, rather than holding the interpreter's exit for the queue's whole wait.
        give_up = give_up or current_stop()
        with self._lock:
            self.requests.append({"messages": messages, "max_tokens": max_tokens, "grammar": grammar})
        self.reading.set()
        while self.hold is not None and not self.hold.acquire(timeout=0.01) and not (give_up and give_up()):
            pass
        # A slow model, stopped when given up; its delay by the clock (a loaded machine's sleeps of
        # 10 ms each take longer: counting them made a 0.4 s reading take 0.8).
        until = time.monotonic() + self.delay
        while (left := until - time.monotonic()) > 0 and not (give_up and give_up()):
            time.sleep(min(0.01, left))
        if self.fail is not None:
            raise self.fail
        text = self.reply(messages) if callable(self.reply) else self.reply
        if grammar:  # multiple choice: the first letter the grammar allows
            text = grammar.split('"')[1]
        lp = math.log(self.p)
        words = text.split(" ")
        other = "not" if not text.startswith("not") else "The"
        pieces = [(" " if i else "") + w for i, w in enumerate(words)]
        tokens = [Token(t, lp, ((t, lp), (other, math.log(1 - self.p)))) for t in pieces]
        if on_text is not None:
            for t in tokens:
                on_text(t.text)
        return Completion(text, tuple(tokens), prompt_tokens=200, cached_tokens=100, ms=self.delay * 1000)
