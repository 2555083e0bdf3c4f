"""Generative answers from a language model (the reader's own, or one at QA_LLM_URL), written
through the model's fair queue and shown only once verified."""

from __future__ import annotations

import dataclasses
import logging
import queue
import re
import time
from collections.abc import Callable, Iterator, Sequence

import numpy as np

from qa.answer import Answer
from qa.errors import QAError
from qa.generation.verify import MARKERS, Verified, verify
from qa.index.load import Index
from qa.llm.base import Messages, Runtime
from qa.llm.queue import FairQueue
from qa.passage import Passage
from qa.question.followup import turns
from qa.text.normalise import contains_span
from qa.text.sentences import split_sentences

log = logging.getLogger(__name__)

MAX_TOKENS = 160
HISTORY_TURNS = 3
POLL_SECONDS = 0.25
SYSTEM = (
    "You answer questions about news articles using only the numbered passages. "
    "Reply in one to three short sentences. End every sentence with the number of the passage "
    "it comes from in square brackets, like [1]. Copy names, numbers and dates exactly as the "
    "passages write them. Never add facts the passages do not state."
)
_BOUNDARY = re.compile(r"[.!?\]]")
Embed = Callable[[str], np.ndarray]


class NoReply(QAError):
    """The model did not write a complete reply: it failed, or the time ran out."""


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


def written(runtime: Runtime, fair: FairQueue, messages: Messages, timeout: float, user: str = ""
            ) -> Iterator[str]:
    """The model's reply as it is written, in its turn in the queue; NoReply when it fails or when
    ``timeout`` seconds pass before it is complete."""
    pieces: queue.Queue[str] = queue.Queue()
    ticket = fair.submit(user, lambda: runtime.complete(messages, max_tokens=MAX_TOKENS, on_text=pieces.put),
                         timeout)
    deadline = time.monotonic() + timeout
    while True:
        try:
            yield pieces.get(timeout=max(0.01, min(POLL_SECONDS, deadline - time.monotonic())))
            continue
        except queue.Empty:
            pass
        if ticket.done.is_set():
            while not pieces.empty():  # written before the job ended
                yield pieces.get_nowait()
            if ticket.error is not None:
                error = ticket.error
                raise NoReply(str(error).splitlines()[0] if str(error) else type(error).__name__)
            return
        if time.monotonic() > deadline:
            fair.cancel(ticket)  # a job under way stops at its next token
            raise NoReply(f"no complete reply within {timeout:g} s")


def generate(base: Answer, runtime: Runtime, fair: FairQueue, index: Index, embed: Embed, timeout: float,
             history: Sequence[object] | None = None, user: str = "", where: str = "in process"
             ) -> Iterator[Answer]:
    """Provisional answers made of the verified sentences so far, then the final answer (last).

    ``base`` is the extractive answer: a refusal is passed on without calling the model; a model
    that fails, a timeout or a reply with no verifiable sentence gives it back with a notice.
    """
    if not base.answered:
        yield base
        return
    began = time.perf_counter()
    messages = build_messages(base.query, base.passages, history)
    text, shown, ending = "", "", False
    try:
        for delta in written(runtime, fair, messages, timeout, user):
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
            partial = verify(text[: spans[-1][0]], base.passages, index, embed)
            if partial.text and partial.text != shown:
                shown = partial.text
                yield _generated(base, partial, began)
    except NoReply as exc:
        log.warning("language model %s failed: %s", where, exc)
        yield _fallback(base, began, f"The local model did not answer ({exc}); showing the extractive "
                                     "answer.")
        return
    result = verify(text, base.passages, index, embed)
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
