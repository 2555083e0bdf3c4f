"""Readers behind the model's fair queue: each waits its turn, gives up past its deadline, and says why."""

from __future__ import annotations

import contextvars
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import numpy as np

from qa.errors import ModelProblem, QAError
from qa.llm.queue import FairQueue, QueueTooLong, TimedOut
from qa.question.record import Question
from qa.readers.base import Reader, ReaderUnavailable, Reading, Sentences, Waiting
from qa.readers.lm.choice import MultipleChoice

log = logging.getLogger(__name__)
T = TypeVar("T")
POLL_SECONDS = 0.25  # how often a waiting question looks at its place in the queue
# Set by a caller whose user may stop waiting (the chat's Stop): once the event is set, the question
# leaves the queue, or its reading stops, and the model is free for the next one.
GIVE_UP: contextvars.ContextVar[threading.Event | None] = contextvars.ContextVar("qa_give_up", default=None)


def unavailable(exc: QAError, timeout: float) -> ReaderUnavailable:
    """Why the language model did not read: the line was too long, the wait ran out, or it could not
    read at all; the log says which, in detail."""
    # A missing model was said once, when it was first loaded; anything else is said each time.
    log.log(logging.INFO if isinstance(exc, ModelProblem) else logging.WARNING,
            "the language model did not read: %s", str(exc)[:300])
    if isinstance(exc, QueueTooLong):
        return ReaderUnavailable("model_busy", str(exc))
    if isinstance(exc, TimedOut):
        return ReaderUnavailable("model_slow", f"{timeout:g}")
    return ReaderUnavailable("model_missing" if isinstance(exc, ModelProblem) else "model_failed", str(exc))


def queued(queue: FairQueue, timeout: float, user: str, work: Callable[[], T]) -> Iterator[Waiting | T]:
    """Run work in turn: how many are ahead, at once and whenever it changes, then its result;
    ReaderUnavailable with the notice when it cannot be had in time."""
    ticket = queue.submit(user, work, timeout)
    ahead, give_up = queue.ahead(ticket), GIVE_UP.get()
    yield Waiting(ahead)
    try:
        while not queue.poll(ticket, POLL_SECONDS):
            if give_up is not None and give_up.is_set():
                break
            if (now := queue.ahead(ticket)) != ahead:
                ahead = now
                yield Waiting(ahead)
        else:
            yield queue.result(ticket)
            return
    except QAError as exc:
        raise unavailable(exc, timeout) from exc
    queue.cancel(ticket)  # its user stopped waiting: the model is free for the next question
    log.info("a question was given up by its user, %d questions ahead of it", ahead)
    raise ReaderUnavailable("stopped")


class QueuedReader:
    """Any reader, read in turn across users through ``queue``, within ``timeout`` seconds."""

    def __init__(self, reader: Reader, queue: FairQueue, timeout: float) -> None:
        self.reader = reader
        self.name = reader.name
        self.queue = queue
        self.timeout = timeout

    def warm(self) -> None:
        """Warm the reader; ReaderUnavailable (with its notice) when it cannot be loaded."""
        try:
            self.reader.warm()
        except QAError as exc:
            raise unavailable(exc, self.timeout) from exc

    def read(self, question: Question, sentences: Sentences) -> Reading:
        """The reading, once its turn came and it was read."""
        *_, reading = self.stream(question, sentences)
        assert isinstance(reading, Reading)
        return reading

    def stream(self, question: Question, sentences: Sentences, user: str = "") -> Iterator[Waiting | Reading]:
        """How many are ahead, at once and whenever it changes, then the reading."""
        yield from queued(self.queue, self.timeout, user, lambda: self.reader.read(question, sentences))


class QueuedChoice:
    """Multiple choice through the same queue, deadline and notices as the readings."""

    def __init__(self, chooser: MultipleChoice, queue: FairQueue, timeout: float) -> None:
        self.chooser = chooser
        self.queue = queue
        self.timeout = timeout

    def choose(self, question: Question, sentences: Sentences, options: Sequence[str], user: str = ""
               ) -> np.ndarray:
        """The probability of each option; ReaderUnavailable when the model cannot weigh them in time."""
        *_, probs = queued(self.queue, self.timeout, user,
                           lambda: self.chooser.choose(question, sentences, options))
        assert isinstance(probs, np.ndarray)
        return probs
