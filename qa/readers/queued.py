"""Readers behind the model's fair queue: each waits its turn, gives up past its deadline, and says why."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import numpy as np

from qa.errors import QAError
from qa.llm.queue import FairQueue, QueueTooLong, TimedOut
from qa.question.parse import Asked
from qa.readers.base import Earlier, Reader, ReaderUnavailable, Reading, Sentences, Waiting
from qa.readers.lm.choice import MultipleChoice

T = TypeVar("T")
POLL_SECONDS = 0.25  # how often a waiting question looks at its place in the queue


def notice(exc: QAError, timeout: float) -> str:
    """Why the short answer is the span reader's: the queue was too long, the wait ran out, or the
    language model could not read."""
    if isinstance(exc, QueueTooLong):
        return (f"The language model is busy: {exc}, more than QA_READ_TIMEOUT "
                f"({timeout:g} s) allows; the short answer is from the span reader.")
    if isinstance(exc, TimedOut):
        return (f"The language model did not read this within {timeout:g} s "
                "(QA_READ_TIMEOUT; it is busy); the short answer is from the span reader.")
    return (f"The language-model reader is unavailable ({str(exc).rstrip('.')}); the short answer "
            "is from the span reader.")


def queued(queue: FairQueue, timeout: float, user: str, work: Callable[[], T]) -> Iterator[Waiting | T]:
    """Run work in turn: how many are ahead, at once and whenever it changes, then its result;
    ReaderUnavailable with the notice when it cannot be had in time."""
    ticket = queue.submit(user, work, timeout)
    ahead = queue.ahead(ticket)
    yield Waiting(ahead)
    try:
        while not queue.poll(ticket, POLL_SECONDS):
            if (now := queue.ahead(ticket)) != ahead:
                ahead = now
                yield Waiting(ahead)
        yield queue.result(ticket)
    except QAError as exc:
        raise ReaderUnavailable(notice(exc, timeout)) from exc


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
            raise ReaderUnavailable(notice(exc, self.timeout)) from exc

    def read(self, asked: Asked, sentences: Sentences, earlier: Earlier | None = None) -> Reading:
        """The reading, once its turn came and it was read."""
        *_, reading = self.stream(asked, sentences, earlier)
        assert isinstance(reading, Reading)
        return reading

    def stream(self, asked: Asked, sentences: Sentences, earlier: Earlier | None = None,
               user: str = "") -> Iterator[Waiting | Reading]:
        """How many are ahead, at once and whenever it changes, then the reading."""
        yield from queued(self.queue, self.timeout, user, lambda: self.reader.read(asked, sentences, earlier))


class QueuedChoice:
    """Multiple choice through the same queue, deadline and notices as the readings."""

    def __init__(self, chooser: MultipleChoice, queue: FairQueue, timeout: float) -> None:
        self.chooser = chooser
        self.queue = queue
        self.timeout = timeout

    def choose(self, asked: Asked, sentences: Sentences, options: Sequence[str], user: str = ""
               ) -> np.ndarray:
        """The probability of each option; ReaderUnavailable when the model cannot weigh them in time."""
        *_, probs = queued(self.queue, self.timeout, user,
                           lambda: self.chooser.choose(asked, sentences, options))
        assert isinstance(probs, np.ndarray)
        return probs
