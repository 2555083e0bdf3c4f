"""Generative answers from a local OpenAI-compatible server, shown only once verified."""

from __future__ import annotations

import dataclasses
import logging
import queue
import re
import threading
import time
from collections.abc import Iterator, Sequence
from typing import Protocol

from qa.answer import Answer, contains_span
from qa.config import Config
from qa.errors import QAError
from qa.generation.verify import MARKERS, Verified, verify
from qa.index.load import Index
from qa.llm.runtime import Runtime
from qa.passage import Passage
from qa.reading.compose import Answerer
from qa.retrieval.followup import turns
from qa.text.sentences import split_sentences

log = logging.getLogger(__name__)

MAX_TOKENS = 160
HISTORY_TURNS = 3
SYSTEM = (
    "You answer questions about news articles using only the numbered passages. "
    "Reply in one to three short sentences. End every sentence with the number of the passage "
    "it comes from in square brackets, like [1]. Copy names, numbers and dates exactly as the "
    "passages write them. Never add facts the passages do not state."
)
_BOUNDARY = re.compile(r"[.!?\]]")


class Answering(Protocol):
    """What generation needs from the engine (qa.engine.QA): settings, index, extractive answers."""

    config: Config
    index: Index
    answerer: Answerer
    runtime: Runtime

    def answer(self, question: str, history: Sequence[object] | None = None, mode: str = "hybrid",
               since: object = None, until: object = None) -> Answer: ...


class LLMUnavailable(Exception):
    """The server could not be reached, failed, or took longer than the timeout."""


def build_messages(query: str, passages: Sequence[Passage],
                   history: Sequence[object] | None = None) -> list[dict[str, str]]:
    """Chat messages: the instructions, recent turns, then the numbered passages and the question."""
    messages = [{"role": "system", "content": SYSTEM}]
    for question, answer in turns(history)[-HISTORY_TURNS:]:
        text = getattr(answer, "text", answer)
        if isinstance(text, str):
            # Old markers point at old citations; they would only confuse the new numbering.
            messages += [{"role": "user", "content": str(question)},
                         {"role": "assistant", "content": MARKERS.sub("", text).strip()}]
    numbered = "\n\n".join(f"[{n}] {' '.join(p.text.split())}" for n, p in enumerate(passages, 1))
    # The format rule is repeated last: small models follow the nearest instruction best.
    messages.append({"role": "user", "content": f"Passages:\n{numbered}\n\nQuestion: {query}\n\n"
                                                "Answer briefly; end each sentence with its passage "
                                                "number in brackets, like [2]."})
    return messages


def stream_text(config: Config, messages: list[dict[str, str]], runtime: Runtime | None = None
                ) -> Iterator[str]:
    """The model's reply as text deltas, from QA_LLM_URL's server, else from the reader's model;
    LLMUnavailable on any failure or past the timeout."""
    if not config.llm_url:
        if runtime is None:
            raise QAError("no language model: set QA_LLM_URL, or install the reader's model (`make setup`)")
        yield from _stream_runtime(runtime, messages, config.llm_timeout)
        return
    try:
        import httpx
        from openai import OpenAI, OpenAIError
    except ImportError as exc:
        raise QAError("generative answers need the openai package: pip install -e '.[llm]'") from exc
    client = OpenAI(base_url=config.llm_url, api_key="local", max_retries=0,
                    timeout=httpx.Timeout(config.llm_timeout, connect=min(config.llm_timeout, 5.0)))
    # The client's timeout bounds each read; the deadline bounds a server that trickles forever.
    deadline = time.monotonic() + config.llm_timeout
    try:
        stream = client.chat.completions.create(
            model=config.llm_model or "default", messages=messages,  # type: ignore[arg-type]
            stream=True, temperature=0, max_tokens=MAX_TOKENS)
        with stream:
            for chunk in stream:
                if time.monotonic() > deadline:
                    raise LLMUnavailable(f"no complete reply within {config.llm_timeout:g} s")
                if chunk.choices and chunk.choices[0].delta.content:
                    yield chunk.choices[0].delta.content
    except OpenAIError as exc:
        raise LLMUnavailable(f"{type(exc).__name__}: {exc}") from exc
    except (httpx.HTTPError, ValueError) as exc:  # a read timeout mid-stream, or a malformed event
        raise LLMUnavailable(f"{type(exc).__name__}: {exc}") from exc
    finally:
        client.close()


def _stream_runtime(runtime: Runtime, messages: list[dict[str, str]], timeout: float) -> Iterator[str]:
    """The in-process model's reply as it is written (it writes in a thread; we wait at most timeout)."""
    pieces: queue.Queue[object] = queue.Queue()

    def write() -> None:
        try:
            runtime.complete(messages, max_tokens=MAX_TOKENS, on_text=pieces.put)
            pieces.put(None)
        except Exception as exc:  # noqa: BLE001 - a model that cannot be loaded or fails mid-way
            pieces.put(exc)

    threading.Thread(target=write, name="qa-generate", daemon=True).start()
    deadline = time.monotonic() + timeout
    while True:
        try:
            piece = pieces.get(timeout=max(0.01, deadline - time.monotonic()))
        except queue.Empty:
            raise LLMUnavailable(f"no complete reply within {timeout:g} s") from None
        if piece is None:
            return
        if isinstance(piece, Exception):
            raise LLMUnavailable(str(piece).splitlines()[0] if str(piece) else type(piece).__name__)
        yield str(piece)


def stream_answer(engine: Answering, question: str, history: Sequence[object] | None = None,
                  since: object = None, until: object = None) -> Iterator[Answer]:
    """Provisional answers made of the verified sentences so far, then the final answer (last).

    Off-topic questions are refused by the extractive evidence threshold before any LLM call;
    a server failure, a timeout or a reply with no verifiable sentence gives the extractive
    answer with a notice.
    """
    config = engine.config
    base = engine.answer(question, history, since=since, until=until)
    if not base.answered:
        yield base
        return
    began = time.perf_counter()
    messages = build_messages(base.query, base.passages, history)
    embed = engine.answerer.retriever.embed_query
    text, shown, ending = "", "", False
    try:
        for delta in stream_text(config, messages, None if config.llm_url else engine.runtime):
            text += delta
            # A sentence is known complete once the next one starts: words after a full stop.
            ending = ending or bool(_BOUNDARY.search(delta))
            if not ending or not any(c.isalnum() for c in delta):
                continue
            spans = split_sentences(text)
            if len(spans) < 2:
                continue
            ending = bool(_BOUNDARY.search(text[spans[-1][0]:]))
            # Every sentence but the last is complete; verify those and show what passes.
            partial = verify(text[: spans[-1][0]], base.passages, engine.index, embed)
            if partial.text and partial.text != shown:
                shown = partial.text
                yield _generated(base, partial, began)
    except LLMUnavailable as exc:
        log.warning("language model %s failed: %s", config.llm_url or "in process", exc)
        yield _fallback(base, began, f"The local model did not answer ({exc}); showing the extractive "
                                     "answer.")
        return
    result = verify(text, base.passages, engine.index, embed)
    if result.dropped:
        # Not the sentences nor the reasons: they quote the answer, and answers are never logged.
        log.info("dropped %d generated sentence(s) unsupported by their citations", len(result.dropped))
    if not result.text:
        yield _fallback(base, began, "No sentence of the local model's answer could be verified against "
                                     "the articles; showing the extractive answer.", result.dropped)
        return
    yield _generated(base, result, began)


def _generated(base: Answer, result: Verified, began: float) -> Answer:
    """The generative Answer built from verified text, keeping the extractive retrieval fields."""
    short = base.short if base.short and contains_span(result.text, base.short) else None
    timings = {**base.timings, "llm_ms": (time.perf_counter() - began) * 1000}
    return dataclasses.replace(base, text=result.text, citations=result.citations, short=short,
                               short_span=base.short_span if short else None,
                               timings=timings, method="llm", dropped=result.dropped, notice=None)


def _fallback(base: Answer, began: float, notice: str, dropped: tuple[str, ...] = ()) -> Answer:
    """The extractive answer, saying why the generated one is not shown."""
    timings = {**base.timings, "llm_ms": (time.perf_counter() - began) * 1000}
    return dataclasses.replace(base, timings=timings, dropped=dropped, notice=notice)
