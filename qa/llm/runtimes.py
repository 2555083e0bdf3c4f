"""Which runtime runs a model: llama.cpp in process for the reader's, an OpenAI-compatible server
for QA_LLM_URL; each loaded on first use."""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence

from qa.config import Config
from qa.errors import QAError
from qa.llm.base import Completion, Messages, Runtime
from qa.llm.llama import LlamaRuntime, shared_runtime
from qa.llm.model_file import model_path
from qa.llm.selected import use

log = logging.getLogger(__name__)


def configured_runtime(config: Config, prefix: Messages | None = None, shared: bool = True) -> Runtime:
    """The in-process runtime for config's reader model and settings, shared in the process (or,
    shared=False, loaded anew: its prompt cache holds only its own prompts), with prefix (the
    reader's fixed instruction) in its cache: restored from config.cache_dir/kv/."""
    path = model_path(config.cache_dir, config.reading.reader_model)
    log.info("the reader's runtime: %s", use(config.cache_dir))
    r = config.reading
    load = shared_runtime if shared else LlamaRuntime
    return load(path, r.reader_threads, r.reader_gpu_layers, r.reader_slots, r.reader_context,
                config.cache_dir / "kv", prefix)


def generation_runtime(config: Config, local: Runtime) -> Runtime:
    """What writes generative answers: the server at QA_LLM_URL, else the reader's own model."""
    if not config.generation.llm_url:
        return local
    from qa.llm.openai_compat import OpenAIRuntime

    g = config.generation
    return OpenAIRuntime(g.llm_url, g.llm_model or "default", g.llm_timeout)


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
                assert self._problem is not None
                raise self._problem
        return self._runtime

    @property
    def name(self) -> str:
        """The loaded model's name."""
        return self.get().name

    def complete(self, messages: Messages, max_tokens: int = 16, stop: Sequence[str] = (),
                 grammar: str | None = None, top_logprobs: int = 0,
                 on_text: Callable[[str], None] | None = None,
                 give_up: Callable[[], bool] | None = None) -> Completion:
        """The loaded runtime's reply."""
        return self.get().complete(messages, max_tokens, stop, grammar, top_logprobs, on_text, give_up)
