"""A per-client rate limit: at most N requests in any 60 seconds, checked before answering."""

from __future__ import annotations

import logging
import math
import threading
import time
from collections import deque
from collections.abc import Callable

log = logging.getLogger(__name__)

WINDOW = 60.0
# Clients remembered at most; beyond, the idlest are forgotten so memory stays bounded.
MAX_CLIENTS = 10_000


class RateLimited(Exception):
    """A client asked more often than the limit allows; the message says when to retry."""


class Once:
    """Which of a client's refusals to log: the first each minute, however many it is sent."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._clock = clock
        self._told: dict[str, float] = {}
        self._lock = threading.Lock()

    def first(self, client: str) -> bool:
        """True when client's refusal now is the one to log (none was in the last minute)."""
        now = self._clock()
        with self._lock:
            if now - self._told.get(client, -WINDOW) < WINDOW:
                return False
            self._told.pop(client, None)
            self._told[client] = now  # last: dict order is least recently told first
            while len(self._told) > MAX_CLIENTS:
                del self._told[next(iter(self._told))]
            return True


class RateLimiter:
    """A sliding one-minute window of request times per client (user name or address)."""

    def __init__(self, per_minute: int, clock: Callable[[], float] = time.monotonic, what: str = "questions",
                 setting: str = "QA_RATE") -> None:
        self.per_minute, self.what, self.setting = per_minute, what, setting
        self._clock = clock
        self._seen: dict[str, deque[float]] = {}
        self._told = Once(clock)
        self._lock = threading.Lock()

    def check(self, client: str) -> None:
        """Count one request by client, or raise RateLimited when it is over the limit."""
        if self.per_minute <= 0:
            return
        now = self._clock()
        with self._lock:
            times = self._seen.pop(client, None) or deque()
            while times and times[0] <= now - WINDOW:
                times.popleft()
            self._seen[client] = times  # re-inserted last: dict order is least recently seen first
            if len(times) >= self.per_minute:
                wait = max(1, math.ceil(times[0] + WINDOW - now))
                if self._told.first(client):
                    log.warning("rate limit: %s sent %d %s in a minute; refusals for the next minute "
                                "are not logged", client[:64], len(times), self.what)
                setting = f" ({self.setting})" if self.setting else ""
                raise RateLimited(f"Too many {self.what}: the limit is {self.per_minute} a minute{setting}; "
                                  f"try again in {wait} s.")
            times.append(now)
            while len(self._seen) > MAX_CLIENTS:
                del self._seen[next(iter(self._seen))]
