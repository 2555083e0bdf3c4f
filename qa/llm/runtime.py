"""The language-model runtime: llama.cpp in this process (xllamacpp), loaded once, shared by threads."""

from __future__ import annotations

import logging
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from qa.config import Config
from qa.errors import ModelProblem, QAError, require
from qa.llm.model_file import model_path

log = logging.getLogger(__name__)

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Token:
    """One written token: its text, log-probability, and the runtime's best alternatives."""

    text: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Completion:
    """What the model wrote, token by token, and what it read to write it."""

    text: str
    tokens: tuple[Token, ...] = ()
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens taken from the cache (the fixed instruction)
    ms: float = 0.0

    @property
    def completion_tokens(self) -> int:
        return len(self.tokens)


class Runtime(Protocol):
    """Runs chat messages through a model and returns the reply with its token log-probabilities."""

    name: str

    def complete(self, messages: Messages, max_tokens: int = 16, stop: Sequence[str] = (),
                 grammar: str | None = None, top_logprobs: int = 0,
                 on_text: Callable[[str], None] | None = None) -> Completion: ...


class LlamaRuntime:
    """llama.cpp's server engine in process: thread-safe, with ``slots`` sequences decoded together."""

    def __init__(self, path: Path, threads: int, gpu_layers: int = -1, slots: int = 1,
                 context: int = 1024) -> None:
        xllamacpp = require("xllamacpp", "default")
        params = xllamacpp.CommonParams()  # type: ignore[attr-defined]
        params.model.path = str(path)
        params.n_parallel = slots
        params.n_ctx = context * slots  # each slot gets `context` tokens
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.n_gpu_layers = gpu_layers
        params.verbosity = -1  # llama.cpp logs every load step and request to stderr otherwise
        # The engine also answers HTTP on a loopback port; a random key keeps others off it.
        params.api_keys = [secrets.token_hex(16)]
        began = time.perf_counter()
        try:
            self._server = xllamacpp.Server(params)  # type: ignore[attr-defined]
        except RuntimeError as exc:
            raise ModelProblem(f"llama.cpp could not load the reader's model {path} (truncated, or not "
                               "a model it knows?): reinstall it, or set QA_READER_MODEL to a GGUF file"
                               ) from exc
        self.name = path.stem
        self.load_seconds = time.perf_counter() - began
        log.info("loaded the reader's model %s in %.1f s (%d threads, %d slots)", path.name,
                 self.load_seconds, threads, slots)

    def complete(self, messages: Messages, max_tokens: int = 16, stop: Sequence[str] = (),
                 grammar: str | None = None, top_logprobs: int = 0,
                 on_text: Callable[[str], None] | None = None) -> Completion:
        """The reply at temperature 0; ``on_text`` hears each piece as it is written."""
        request: dict[str, object] = {"messages": messages, "max_tokens": max_tokens, "temperature": 0,
                                      "cache_prompt": True, "logprobs": True,
                                      "top_logprobs": max(1, top_logprobs)}
        if stop:
            request["stop"] = list(stop)
        if grammar:
            request["grammar"] = grammar
        began = time.perf_counter()
        if on_text is None:
            reply = self._server.handle_chat_completions(request)
            _raise_for(reply)
            choice = reply["choices"][0]
            text = choice["message"].get("content") or ""
            tokens = tuple(_token(t) for t in ((choice.get("logprobs") or {}).get("content") or []))
            usage = reply.get("usage") or {}
        else:
            text, tokens, usage = self._stream(request, on_text)
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return Completion(text, tokens, int(usage.get("prompt_tokens") or 0), int(cached),
                          (time.perf_counter() - began) * 1000)

    def _stream(self, request: dict[str, object], on_text: Callable[[str], None]
                ) -> tuple[str, tuple[Token, ...], dict]:
        pieces: list[str] = []
        tokens: list[Token] = []
        usage: dict = {}
        errors: list[dict] = []

        def chunk(event: dict) -> None:
            if "error" in event:
                errors.append(event)
                return
            usage.update(event.get("usage") or {})
            for choice in event.get("choices") or []:
                piece = (choice.get("delta") or {}).get("content")
                tokens.extend(_token(t) for t in ((choice.get("logprobs") or {}).get("content") or []))
                if piece:
                    pieces.append(piece)
                    on_text(piece)

        result = self._server.handle_chat_completions({**request, "stream": True}, chunk)
        for problem in [*errors, result if isinstance(result, dict) else {}]:
            _raise_for(problem)
        return "".join(pieces), tuple(tokens), usage


def _token(item: dict) -> Token:
    top = tuple((t.get("token", ""), float(t.get("logprob", -100.0))) for t in item.get("top_logprobs") or [])
    return Token(item.get("token", ""), float(item.get("logprob", -100.0)), top)


class RuntimeFailed(Exception):
    """The runtime refused or failed one request (too long a prompt, an internal error)."""


def _raise_for(reply: object) -> None:
    if isinstance(reply, dict) and "error" in reply:
        error = reply["error"]
        message = error.get("message") if isinstance(error, dict) else str(error)
        raise RuntimeFailed(str(message))


_runtimes: dict[tuple, LlamaRuntime] = {}
_runtimes_lock = threading.Lock()


def shared_runtime(path: Path, threads: int, gpu_layers: int, slots: int, context: int) -> LlamaRuntime:
    """One runtime per model and settings in this process: the model's weights are loaded once."""
    key = (str(path), threads, gpu_layers, slots, context)
    with _runtimes_lock:
        if key not in _runtimes:
            _runtimes[key] = LlamaRuntime(path, threads, gpu_layers, slots, context)
        return _runtimes[key]


def configured_runtime(config: Config) -> LlamaRuntime:
    """The runtime for config's reader model and settings, shared in the process."""
    path = model_path(config.cache_dir, config.reader_model)
    return shared_runtime(path, config.reader_threads, config.reader_gpu_layers, config.reader_slots, 1024)


class LazyRuntime:
    """A runtime loaded on first use; a problem loading it is raised on each use, logged once."""

    def __init__(self, load: Callable[[], Runtime]) -> None:
        self._load = load
        self._runtime: Runtime | None = None
        self._problem: QAError | None = None
        self._lock = threading.Lock()

    def get(self) -> Runtime:
        """The loaded runtime; ModelProblem when it cannot be loaded."""
        if self._runtime is None:
            with self._lock:
                if self._runtime is None and self._problem is None:
                    try:
                        self._runtime = self._load()
                    except QAError as exc:
                        self._problem = exc
                        log.warning("%s; the span reader answers meanwhile", exc)
            if self._runtime is None:
                raise self._problem  # type: ignore[misc]
        return self._runtime

    @property
    def name(self) -> str:
        return self.get().name

    def complete(self, messages: Messages, max_tokens: int = 16, stop: Sequence[str] = (),
                 grammar: str | None = None, top_logprobs: int = 0,
                 on_text: Callable[[str], None] | None = None) -> Completion:
        return self.get().complete(messages, max_tokens, stop, grammar, top_logprobs, on_text)
