"""llama.cpp in this process (xllamacpp): the reader's model loaded once, shared by threads, its
fixed instruction restored from the cache (qa/llm/state.py) instead of read at every start."""

from __future__ import annotations

import logging
import os
import secrets
import threading
import time
from collections.abc import Callable, Sequence
from pathlib import Path

from qa.errors import ModelProblem, require
from qa.llm.base import Completion, Messages, Token, raise_for
from qa.llm.queue import current_stop
from qa.llm.state import build_id, discard, intact, seal, slot_action, state_name

log = logging.getLogger(__name__)

# llama.cpp's batch and micro-batch sizes and flash attention: its defaults, which `python -m eval
# bench` measured best or tied (docs/speed.md); flash attention "auto" turns it on for the CPU.
BATCH, UBATCH, FLASH = 2048, 512, "auto"
_FLASH = {"auto": "AUTO", "on": "ENABLED", "off": "DISABLED"}


class LlamaRuntime:
    """llama.cpp's server engine in process: thread-safe, with ``slots`` sequences decoded together;
    ``prefix`` (the reader's fixed instruction) is in its cache from the start."""

    def __init__(self, path: Path, threads: int, gpu_layers: int = -1, slots: int = 1, context: int = 2048,
                 state_dir: Path | None = None, prefix: Messages | None = None, batch: int = BATCH,
                 ubatch: int = UBATCH, flash: str = FLASH) -> None:
        xllamacpp = require("xllamacpp", "default")
        params = xllamacpp.CommonParams()  # type: ignore[attr-defined]
        params.model.path = str(path)
        params.n_parallel = slots
        params.n_ctx = context * slots  # each slot gets `context` tokens
        params.n_batch, params.n_ubatch = batch, ubatch
        params.flash_attn_type = getattr(xllamacpp.llama_flash_attn_type,  # type: ignore[attr-defined]
                                         f"LLAMA_FLASH_ATTN_TYPE_{_FLASH[flash]}")
        params.cpuparams.n_threads = threads
        params.cpuparams_batch.n_threads = threads
        params.n_gpu_layers = gpu_layers
        params.verbosity = -1  # llama.cpp logs every load step and request to stderr otherwise
        # No empty decode at load (seconds of a cold start): the instruction's restore, or the
        # first reading, warms the model anyway.
        params.warmup = False
        if state_dir is not None:
            params.slot_save_path = f"{state_dir}/"  # llama.cpp appends the file name as it is
        # The engine also answers HTTP on a loopback port; a random key keeps others off it.
        self._key = secrets.token_hex(16)
        params.api_keys = [self._key]
        began = time.perf_counter()
        try:
            self._server = xllamacpp.Server(params)  # type: ignore[attr-defined]
        except RuntimeError as exc:
            raise ModelProblem(f"llama.cpp could not load the reader's model {path} (truncated, or not "
                               "a model it knows?): reinstall it, or set QA_READER_MODEL to a GGUF file"
                               ) from exc
        self.name = path.stem
        self.load_seconds = time.perf_counter() - began
        self.slots = slots
        self.primed, self.prime_seconds = "", 0.0  # how the prefix got into the cache, and how long
        if prefix:
            began = time.perf_counter()
            settings = {"context": context, "flash": flash, "gpu_layers": gpu_layers}
            self.primed = self._prime(list(prefix), path, state_dir, build_id(xllamacpp), settings)
            self.prime_seconds = time.perf_counter() - began
        log.info("loaded the reader's model %s in %.1f s (%d threads, %d slots); its instruction %s in "
                 "%.2f s", path.name, self.load_seconds, threads, slots, self.primed or "not primed",
                 self.prime_seconds)

    def _prime(self, prefix: Messages, model: Path, state_dir: Path | None, build: str,
               settings: dict[str, object]) -> str:
        """Put prefix in the cache: restored from its state file when one is intact, else read and
        saved for the next start; a missing, stale or damaged file is never fatal. With more than
        one slot llama.cpp reuses no restored slot (measured), so the prefix is read."""
        if state_dir is None or self.slots > 1:
            self.complete(prefix, max_tokens=1)
            return "read"
        address = self._server.listening_address
        name = state_name(model, build, settings, prefix)
        saved = state_dir / name
        if intact(saved):
            if not (problem := slot_action(address, self._key, 0, "restore", name)):
                return "restored"
            log.warning("the reader's saved instruction %s did not restore (%s): reading it again", saved,
                        problem)
        elif saved.exists():
            log.warning("the reader's saved instruction %s is damaged: reading it again", saved)
        self.complete(prefix, max_tokens=1)
        try:
            state_dir.mkdir(parents=True, exist_ok=True)
            discard(saved)
            part = f"{name}.{os.getpid()}.part"  # renamed once whole: another process never reads half
            if problem := slot_action(address, self._key, 0, "save", part):
                (state_dir / part).unlink(missing_ok=True)
                log.warning("could not save the reader's instruction into %s: %s", state_dir, problem)
                return "read"
            os.replace(state_dir / part, saved)
            seal(saved)
        except OSError as exc:
            log.warning("could not save the reader's instruction into %s: %s", state_dir, exc)
            return "read"
        return "read and saved"

    def complete(self, messages: Messages, max_tokens: int = 16, stop: Sequence[str] = (),
                 grammar: str | None = None, top_logprobs: int = 0,
                 on_text: Callable[[str], None] | None = None,
                 give_up: Callable[[], bool] | None = None) -> Completion:
        """The reply at temperature 0; ``on_text`` hears each piece as it is written, and writing
        stops at the next token once ``give_up()`` is true (the reply is then cut short)."""
        give_up = give_up or current_stop()
        request: dict[str, object] = {"messages": messages, "max_tokens": max_tokens, "temperature": 0,
                                      "cache_prompt": True, "logprobs": True,
                                      "top_logprobs": max(1, top_logprobs)}
        if stop:
            request["stop"] = list(stop)
        if grammar:
            request["grammar"] = grammar
        began = time.perf_counter()
        if on_text is None and give_up is None:
            reply = self._server.handle_chat_completions(request)
            raise_for(reply)
            choice = reply["choices"][0]
            text = choice["message"].get("content") or ""
            tokens = tuple(_token(t) for t in ((choice.get("logprobs") or {}).get("content") or []))
            usage = reply.get("usage") or {}
        else:
            text, tokens, usage = self._stream(request, on_text or (lambda _: None),
                                               give_up or (lambda: False))
        cached = (usage.get("prompt_tokens_details") or {}).get("cached_tokens") or 0
        return Completion(text, tokens, int(usage.get("prompt_tokens") or 0), int(cached),
                          (time.perf_counter() - began) * 1000)

    def _stream(self, request: dict[str, object], on_text: Callable[[str], None],
                give_up: Callable[[], bool]) -> tuple[str, tuple[Token, ...], dict]:
        pieces: list[str] = []
        tokens: list[Token] = []
        usage: dict = {}
        errors: list[dict] = []

        def chunk(event: dict) -> bool:
            if "error" in event:
                errors.append(event)
                return True
            if timings := event.get("timings"):  # the last event: what was read, and from the cache
                usage.update(prompt_tokens=timings.get("cache_n", 0) + timings.get("prompt_n", 0),
                             prompt_tokens_details={"cached_tokens": timings.get("cache_n", 0)})
            for choice in event.get("choices") or []:
                piece = (choice.get("delta") or {}).get("content")
                tokens.extend(_token(t) for t in ((choice.get("logprobs") or {}).get("content") or []))
                if piece:
                    pieces.append(piece)
                    on_text(piece)
            return give_up()  # True stops the engine writing

        result = self._server.handle_chat_completions({**request, "stream": True}, chunk)
        for problem in [*errors, result if isinstance(result, dict) else {}]:
            raise_for(problem)
        return "".join(pieces), tuple(tokens), usage


def _token(item: dict) -> Token:
    top = tuple((t.get("token", ""), float(t.get("logprob", -100.0))) for t in item.get("top_logprobs") or [])
    return Token(item.get("token", ""), float(item.get("logprob", -100.0)), top)


_runtimes: dict[tuple, LlamaRuntime] = {}
_runtimes_lock = threading.Lock()


def shared_runtime(path: Path, threads: int, gpu_layers: int, slots: int, context: int,
                   state_dir: Path | None = None, prefix: Messages | None = None) -> LlamaRuntime:
    """One runtime per model and settings in this process: the model's weights are loaded once."""
    key = (str(path), threads, gpu_layers, slots, context, str(state_dir), repr(prefix))
    with _runtimes_lock:
        if key not in _runtimes:
            _runtimes[key] = LlamaRuntime(path, threads, gpu_layers, slots, context, state_dir, prefix)
        return _runtimes[key]
