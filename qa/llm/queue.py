"""The fair queue for the language model: jobs run a few at a time, taken in turn across users."""

from __future__ import annotations

import atexit
import contextvars
import logging
import statistics
import threading
import time
import weakref
from collections import OrderedDict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Generic, TypeVar

from qa.llm.base import RuntimeFailed

T = TypeVar("T")
log = logging.getLogger(__name__)
PACE_READINGS = 8  # the pace is the median of the last readings; fewer than 3 say nothing yet
# Seconds a process waits at exit for the readings under way to stop. llama.cpp stops a given-up
# reading only between batches, and a prompt's one batch took over 50 s on a loaded 2-core machine;
# a thread still inside llama.cpp when the interpreter exits crashes the process (exit -11, seen
# after `qa ask --llm` gave up on its reply at QA_LLM_TIMEOUT with 30 s here).
EXIT_WAIT = 600.0


# The job this thread runs for the queue: a runtime stops writing once it is given up.
_running: contextvars.ContextVar[Ticket | None] = contextvars.ContextVar("qa_queued_job", default=None)


class TimedOut(RuntimeFailed):
    """The question waited in the queue, or was read, for longer than its deadline."""


class QueueTooLong(TimedOut):
    """The readings ahead of the question, at the pace of the last ones, end past its deadline."""

    def __init__(self, ahead: int, wait: float) -> None:
        super().__init__(f"{ahead} questions are ahead in line, about {wait:.0f} s of reading")
        self.ahead = ahead


def current_stop() -> Callable[[], bool] | None:
    """For a runtime called inside a queued job: a function that is true once the job is given up."""
    ticket = _running.get()
    return ticket.expired if ticket is not None else None


@dataclass(eq=False)
class Ticket(Generic[T]):
    """One question's place in the queue: where it stands, and its reading once done."""

    user: str
    work: Callable[[], T]
    deadline: float
    clock: Callable[[], float] = time.monotonic
    done: threading.Event = field(default_factory=threading.Event)
    started: bool = False
    cancelled: bool = False
    result: T | None = None
    error: BaseException | None = None

    def expired(self) -> bool:
        """True once the deadline passed or the ticket was given up (the reading should stop)."""
        return self.cancelled or self.clock() > self.deadline


class FairQueue:
    """At most ``slots`` jobs on the model at once; waiting ones go in turn per user (round robin),
    so one user's burst does not hold everyone else back."""

    def __init__(self, slots: int = 1, clock: Callable[[], float] = time.monotonic) -> None:
        self.slots = slots
        self.clock = clock
        self._waiting: OrderedDict[str, deque[Ticket]] = OrderedDict()
        self._running = 0
        self._readers: set[tuple[threading.Thread, Ticket]] = set()
        self._took: deque[float] = deque(maxlen=PACE_READINGS)  # seconds, readings that finished
        self._lock = threading.Condition()
        _queues.add(self)

    def submit(self, user: str, work: Callable[[], T], timeout: float) -> Ticket[T]:
        """Queue work (a runtime it calls stops early once the ticket is given up); returns its ticket."""
        ticket: Ticket[T] = Ticket(user, work, self.clock() + timeout, self.clock)
        with self._lock:
            self._waiting.setdefault(user, deque()).append(ticket)
            self._dispatch()
        return ticket

    def ahead(self, ticket: Ticket) -> int:
        """How many questions are read before this one starts: those being read and those waiting
        before it (0 once it is being read)."""
        with self._lock:
            order = self._order()
            if ticket.started or ticket.done.is_set() or ticket not in order:
                return 0
            return self._running + order.index(ticket)

    def expected_wait(self, ticket: Ticket) -> float | None:
        """Seconds until this waiting ticket is read to the end, at the pace of the last readings:
        those waiting before it go in rounds of ``slots`` (the ones being read count as done, so
        this errs short). None while it is being read, or before three readings set a pace."""
        with self._lock:
            order = self._order()
            if ticket.started or ticket not in order or len(self._took) < 3:
                return None
            return (order.index(ticket) // self.slots + 1) * statistics.median(self._took)

    def poll(self, ticket: Ticket, seconds: float) -> bool:
        """Wait up to seconds; True once the reading is done. TimedOut past the deadline (a reading
        under way is told to stop); QueueTooLong at once when the queue cannot reach the ticket in
        time, so the question is not held until its deadline only to be answered without it."""
        wait = self.expected_wait(ticket)
        if wait is not None and self.clock() + wait > ticket.deadline:
            ahead = self.ahead(ticket)
            self.cancel(ticket)
            raise QueueTooLong(ahead, wait)
        if ticket.done.wait(max(0.0, min(seconds, ticket.deadline - self.clock()))):
            return True
        if self.clock() > ticket.deadline:
            self.cancel(ticket)
            raise TimedOut("the question waited too long for the language model")
        return False

    def result(self, ticket: Ticket[T]) -> T:
        """The reading of a done ticket; its error, or TimedOut when it was never read."""
        if ticket.error is not None:
            raise ticket.error
        if not ticket.started:
            raise TimedOut("the question waited too long for the language model")
        return ticket.result  # type: ignore[return-value]

    def cancel(self, ticket: Ticket) -> None:
        """Give the ticket up: taken out of the queue if it waits, told to stop if it is being read."""
        with self._lock:
            ticket.cancelled = True
            queue = self._waiting.get(ticket.user)
            if queue is not None and ticket in queue:
                queue.remove(ticket)
                if not queue:
                    del self._waiting[ticket.user]
                ticket.done.set()

    def _order(self) -> list[Ticket]:
        """Waiting tickets in the order they will be read: one per user in turn."""
        queues = [list(q) for q in self._waiting.values()]
        return [q[i] for i in range(max(map(len, queues), default=0)) for q in queues if i < len(q)]

    def _dispatch(self) -> None:
        while self._running < self.slots and self._waiting:
            user, queue = next(iter(self._waiting.items()))
            ticket = queue.popleft()
            # The user goes to the back of the turn order; others come first next time.
            del self._waiting[user]
            if queue:
                self._waiting[user] = queue
            if ticket.expired():
                ticket.done.set()
                continue
            ticket.started = True
            self._running += 1
            thread = threading.Thread(target=self._run, args=(ticket,), name="qa-read", daemon=True)
            self._readers.add((thread, ticket))
            thread.start()

    def _run(self, ticket: Ticket) -> None:
        began = self.clock()
        _running.set(ticket)
        try:
            ticket.result = ticket.work()
            if ticket.expired():
                raise TimedOut("the language model was stopped before it finished reading")
            with self._lock:
                self._took.append(self.clock() - began)
        except BaseException as exc:  # handed to the waiting caller
            ticket.error = exc
        finally:
            with self._lock:
                self._running -= 1
                self._readers = {r for r in self._readers if r[1] is not ticket}
                ticket.done.set()
                self._dispatch()

    def close(self, wait: float = EXIT_WAIT) -> None:
        """Give up every question in the queue and tell the readings under way to stop; wait for them
        (a thread still inside llama.cpp when the interpreter exits aborts the process)."""
        with self._lock:
            for queue in self._waiting.values():
                for ticket in queue:
                    ticket.cancelled = True
                    ticket.done.set()
            self._waiting.clear()
            readers = list(self._readers)
        deadline = time.monotonic() + wait
        for thread, ticket in readers:
            ticket.cancelled = True
            if thread.is_alive():
                log.info("waiting for the language model to stop reading before exiting")
            thread.join(max(0.0, deadline - time.monotonic()))


_queues: weakref.WeakSet[FairQueue] = weakref.WeakSet()


@atexit.register
def _close_queues() -> None:
    for queue in list(_queues):
        queue.close()
