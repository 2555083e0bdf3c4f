"""A model behind an OpenAI-compatible HTTP server (llama.cpp's, Ollama, vLLM), streamed."""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from qa.errors import MissingDependency
from qa.llm.base import Completion, Messages, RuntimeFailed, Token
from qa.llm.queue import current_stop


class OpenAIRuntime:
    """Chat completions from ``url`` (a base URL such as http://127.0.0.1:11434/v1), each reply
    bounded by ``timeout`` seconds in all, however slowly the server trickles it."""

    def __init__(self, url: str, model: str, timeout: float) -> None:
        self.url = url
        self.name = model
        self.timeout = timeout

    def complete(self, messages: Messages, max_tokens: int = 16, stop: Sequence[str] = (),
                 grammar: str | None = None, top_logprobs: int = 0,
                 on_text: Callable[[str], None] | None = None,
                 give_up: Callable[[], bool] | None = None) -> Completion:
        """The server's reply at temperature 0, streamed into on_text; RuntimeFailed on any failure."""
        try:
            from openai import OpenAI, OpenAIError, Timeout
        except ImportError as exc:
            raise MissingDependency("a model server at QA_LLM_URL needs the openai package: "
                                    "run `pip install -e '.[llm]'`") from exc
        give_up = give_up or current_stop() or (lambda: False)
        client = OpenAI(base_url=self.url, api_key="local", max_retries=0,
                        timeout=Timeout(self.timeout, connect=min(self.timeout, 5.0)))
        extra: dict[str, object] = {"grammar": grammar} if grammar else {}
        options: dict[str, object] = {"logprobs": True, "top_logprobs": top_logprobs} if top_logprobs else {}
        # A read cut mid-stream, a connection refused, a malformed event.
        broken: tuple[type[Exception], ...] = (*_transport_errors(), OSError, ValueError)
        began = time.perf_counter()
        deadline = time.monotonic() + self.timeout
        pieces: list[str] = []
        tokens: list[Token] = []
        try:
            stream = client.chat.completions.create(
                model=self.name, messages=messages,
                stream=True, temperature=0, max_tokens=max_tokens, stop=list(stop) or None,
                extra_body=extra or None, **options)
            with stream:
                for chunk in stream:
                    if time.monotonic() > deadline:
                        raise RuntimeFailed(f"no complete reply from {self.url} within {self.timeout:g} s")
                    choice = chunk.choices[0] if chunk.choices else None
                    if choice is not None and choice.delta.content:
                        pieces.append(choice.delta.content)
                        if on_text is not None:
                            on_text(choice.delta.content)
                    if choice is not None and choice.logprobs is not None:
                        tokens.extend(Token(t.token, t.logprob, tuple((a.token, a.logprob)
                                                                      for a in t.top_logprobs))
                                      for t in choice.logprobs.content or [])
                    if give_up():
                        break
        except OpenAIError as exc:
            raise RuntimeFailed(f"{self.url}: {type(exc).__name__}: {exc}") from exc
        except broken as exc:
            raise RuntimeFailed(f"{self.url}: {type(exc).__name__}: {exc}") from exc
        finally:
            client.close()
        return Completion("".join(pieces), tuple(tokens), ms=(time.perf_counter() - began) * 1000)


def _transport_errors() -> tuple[type[Exception], ...]:
    """The HTTP library's error class the client raises mid-stream (httpx, or httpx2 in openai 3)."""
    import importlib

    found = []
    for name in ("httpx2", "httpx"):
        try:
            found.append(importlib.import_module(name).HTTPError)
        except ImportError:
            continue
    return tuple(found)
