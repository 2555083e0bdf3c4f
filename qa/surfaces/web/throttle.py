"""Sign-in throttling: failed sign-ins per user name and per address, with a lockout that doubles.

Five failures for a name (twenty for an address, which a team behind one NAT shares) are free:
typos. Each further one locks that name or address for twice as long as the last (2 s, 4 s, ...
up to 15 minutes). While locked, a sign-in is refused at once, without checking the password
(so a flood costs no hashing), and does not count. A success clears the name's failures; 15
quiet minutes clear any. So that a stranger's failures cannot lock a user out where she signs
in, an address that signed in as a user in the last 30 days (kept in memory: a restart forgets)
is not held by that name's lock: its own failures for the name count, and lock, there alone.
Password checks run one at a time in a thread, never on the server's event loop, so a flood of
sign-ins cannot slow the answers.
"""

from __future__ import annotations

import asyncio
import contextvars
import logging
import math
import threading
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

log = logging.getLogger(__name__)

FREE = 5
FREE_ADDRESS = 20
MAX_LOCK = 900.0
FORGET = 900.0
# How long an address that signed in as a user stays exempt from that name's lock.
REMEMBER = 30 * 86400.0
# Names and addresses remembered at most; beyond, the least recently failed are forgotten.
MAX_KEYS = 10_000
# The client's address for the request being handled, and the trusted proxy that forwarded it
# ("" when it came straight from the client): set by qa/surfaces/web/guard/ for each request.
CLIENT_ADDRESS: contextvars.ContextVar[tuple[str, str]] = contextvars.ContextVar(
    "qa_client_address", default=("unknown", ""))


def shown(address: str, proxy: str) -> str:
    """An address as logged: the client's, and the proxy's beside it when one forwarded it."""
    return f"{address} via proxy {proxy}" if proxy else address


@dataclass
class _Failures:
    count: int = 0
    last: float = 0.0
    until: float = 0.0
    told: bool = False  # the lock's first refusal was logged: the rest of a flood is not


monotonic = time.monotonic


class Throttle:
    """Failed sign-ins per key (a user name, an address) and the lockouts they earn."""

    def __init__(self, clock: Callable[[], float] | None = None) -> None:
        # Read through the module (not bound at definition), so a test can hold the server's clock.
        self._clock = clock or (lambda: monotonic())
        self._keys: dict[str, _Failures] = {}
        # "'user' at address" -> when that address last signed in as that user.
        self._known: dict[str, float] = {}
        self._lock = threading.Lock()

    def locked(self, keys: tuple[str, ...], note: bool = True) -> tuple[float, bool]:
        """Seconds until all of keys may try again (0: none is locked), and whether this is the
        first refusal of the lock (the one to log; with note, later ones are not first)."""
        now, wait, first = self._clock(), 0.0, False
        with self._lock:
            for entry in (self._keys[k] for k in keys if k in self._keys):
                if entry.until > now:
                    wait = max(wait, entry.until - now)
                    first = first or not entry.told
                    entry.told = entry.told or note
        return wait, first

    def failed(self, keys: tuple[str, ...]) -> float:
        """Count a failure for each key; the lockout it starts, in seconds (0: none yet)."""
        now, lock = self._clock(), 0.0
        with self._lock:
            for key in keys:
                entry = self._keys.pop(key, None) or _Failures()
                if now - entry.last > FORGET:
                    entry = _Failures()
                entry.count, entry.last = entry.count + 1, now
                free = FREE if key.startswith("user ") else FREE_ADDRESS
                if entry.count > free:
                    seconds = min(MAX_LOCK, 2.0 ** (entry.count - free))
                    entry.until, entry.told = now + seconds, False
                    lock = max(lock, seconds)
                self._keys[key] = entry  # last: dict order is least recently failed first
            while len(self._keys) > MAX_KEYS:
                del self._keys[next(iter(self._keys))]
        return lock

    def succeeded(self, key: str) -> None:
        """Clear a key's failures (the user signed in)."""
        with self._lock:
            self._keys.pop(key, None)

    def remember(self, username: str, address: str) -> None:
        """Note that address signed in as username: that name's lock no longer holds it."""
        with self._lock:
            self._known.pop(f"{username!r} at {address}", None)
            self._known[f"{username!r} at {address}"] = self._clock()  # last: least recent first
            while len(self._known) > MAX_KEYS:
                del self._known[next(iter(self._known))]

    def keys(self, username: str, address: str) -> tuple[str, str]:
        """The keys a sign-in counts under: the name (only at this address, if it signed in as that
        user before), and the address."""
        with self._lock:
            when = self._known.get(f"{username!r} at {address}")
        known = when is not None and self._clock() - when <= REMEMBER
        return (f"user {username!r} at {address}" if known else f"user {username!r}", f"address {address}")


def throttled(check: Callable[[str, str], bool], throttle: Throttle | None = None
              ) -> Callable[[str, str], Awaitable[bool]]:
    """Gradio's sign-in check: check(username, password) behind the throttle, off the event loop."""
    throttle = throttle or Throttle()
    one_at_a_time = threading.Lock()

    def checked(username: str, password: str, keys: tuple[str, ...]) -> bool | None:
        """The check, one at a time (scrypt takes a core for ~50 ms); None if locked meanwhile."""
        with one_at_a_time:
            return None if throttle.locked(keys, note=False)[0] > 0 else check(username, password)

    async def sign_in(username: str, password: str) -> bool:
        username, (address, proxy) = str(username or "")[:64], CLIENT_ADDRESS.get()
        keys, where = throttle.keys(username, address), shown(address, proxy)
        wait, first = throttle.locked(keys)
        if wait > 0:
            if first:
                log.warning("sign-in refused without checking for user %r from %s: locked for %d s more "
                            "after failed sign-ins (further refusals while locked are not logged)",
                            username, where, math.ceil(wait))
            return False
        ok = await asyncio.to_thread(checked, username, str(password or ""), keys)
        if ok is None:  # a flood's attempt that waited its turn while the lock began
            return False
        if ok:
            throttle.succeeded(keys[0])
            throttle.remember(username, address)
            log.info("signed in: %r from %s", username, where)
        elif lock := throttle.failed(keys):
            log.warning("sign-in refused for user %r from %s; locked for %d s after repeated failures",
                        username, where, lock)
        else:
            log.warning("sign-in refused for user %r from %s", username, where)
        return ok

    return sign_in
