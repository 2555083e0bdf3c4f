"""A runtime that replays the model's recorded replies: a request made before is answered from the
record, any other by the real model (and recorded). A rule that acts after the model, or changes no
prompt, is measured without reading anything again."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from qa.llm.base import Completion, Messages, Runtime, Token


def request_key(messages: Messages, max_tokens: int, stop: Sequence[str], grammar: str | None,
                top_logprobs: int) -> str:
    """What identifies a request: the same key, the same reply at temperature 0."""
    raw = json.dumps([messages, max_tokens, list(stop), grammar, top_logprobs], ensure_ascii=False)
    return hashlib.sha256(raw.encode("utf-8")).hexdigest()


def _completion(data: dict) -> Completion:
    tokens = tuple(Token(t["text"], t["logprob"], tuple(tuple(x) for x in t["top"])) for t in data["tokens"])
    return Completion(data["text"], tokens, data["prompt_tokens"], data["cached_tokens"], data["ms"])


class ReplayRuntime:
    """Replays recorded replies (``path``, JSON lines); asks ``real`` (made on the first miss) otherwise."""

    def __init__(self, real: Callable[[], Runtime], path: Path, name: str = "") -> None:
        self._make, self._real = real, None
        self.path = path
        self.replies: dict[str, Completion] = {}
        if path.is_file():
            for line in path.read_text("utf-8").splitlines():
                row = json.loads(line)
                self.replies[row["key"]] = _completion(row["reply"])
                name = name or row.get("model", "")
        self._name = name
        self.hits = self.misses = 0
        self._lock = threading.Lock()

    @property
    def name(self) -> str:
        """The model's name, as answers report it."""
        return self._name or self.real.name

    @property
    def real(self) -> Runtime:
        """The real model, loaded on first use."""
        if self._real is None:
            self._real = self._make()
        return self._real

    def complete(self, messages: Messages, max_tokens: int = 16, stop: Sequence[str] = (),
                 grammar: str | None = None, top_logprobs: int = 0,
                 on_text: Callable[[str], None] | None = None,
                 give_up: Callable[[], bool] | None = None) -> Completion:
        """The recorded reply to this request, or the real model's (then recorded)."""
        key = request_key(messages, max_tokens, stop, grammar, top_logprobs)
        with self._lock:
            found = self.replies.get(key)
            self.hits += found is not None
        if found is not None:
            return found
        reply = self.real.complete(messages, max_tokens, stop, grammar, top_logprobs, on_text, give_up)
        with self._lock:
            self.misses += 1
            self.replies[key] = reply
            self._name = self._name or self.real.name
            self.path.parent.mkdir(parents=True, exist_ok=True)
            with self.path.open("a", encoding="utf-8") as fh:
                fh.write(json.dumps({"key": key, "model": self._name, "reply": dataclasses.asdict(reply)},
                                    ensure_ascii=False) + "\n")
        return reply
