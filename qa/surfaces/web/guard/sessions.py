"""Sign-in sessions, kept by the guard beside Gradio's tokens (``app.tokens``, which never expire):

- a session begins at a sign-in (``POST /login``): its cookies are HttpOnly and SameSite=Lax, and
  Secure when the browser reached the server over HTTPS (Gradio sets its second cookie without);
- it ends QA_SESSION_IDLE seconds after its last request and QA_SESSION_LIFETIME seconds after it
  began, and at sign-out (``/logout``), whichever of Gradio's two cookies named it;
- when it ends its token is gone from Gradio's too, and its open event streams end with it.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, MutableMapping
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import parse_qs

import anyio

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

log = logging.getLogger("qa.app")

monotonic = time.monotonic  # the sessions' clock (tests stand it still)
DISCONNECT: Message = {"type": "http.disconnect"}
# How FastAPI reads a false ?all_session= (Gradio's sign-out of this browser alone).
FALSE = {"false", "0", "off", "no", "f", "n"}


@dataclass
class Session:
    """One sign-in: whose, when it began, its last request, and Gradio's tokens it is kept in."""

    user: str
    began: float
    last: float
    tokens: dict[str, str]
    ended: anyio.Event = field(default_factory=anyio.Event)


class Sessions:
    """The open sessions by token, their lifetimes, and their ends."""

    def __init__(self, idle: float, lifetime: float) -> None:
        self.idle, self.lifetime = idle, lifetime
        self.open: dict[str, Session] = {}

    def current(self, scope: Scope) -> tuple[str | None, str | None]:
        """The request's session token and user, kept alive; (None, None) signed out or ended."""
        tokens, token = _tokens(scope), token_of(scope)
        if not token or token not in tokens:
            return None, None
        session, now = self.open.get(token), monotonic()
        if session is None:
            self.end(token, "it began before the guard saw it", tokens)
            return None, None
        if why := self._over(session, now):
            self.end(token, why)
            return None, None
        session.last = now
        return token, session.user

    def end(self, token: str, why: str, tokens: dict[str, str] | None = None) -> None:
        """End a session: its token gone from Gradio's, its streams told."""
        session = self.open.pop(token, None)
        user = (session.tokens if session else tokens or {}).pop(token, None)
        if session is not None:
            session.ended.set()
        if user is not None and why:
            log.info("session of %r ended: %s", user, why)

    def signing_in(self, scope: Scope, send: Send) -> Send:
        """send() for a sign-in's reply: the token it sets begins a session; its cookies hardened."""
        tokens = _tokens(scope)
        name = f"access-token-{getattr(scope.get('app'), 'cookie_id', '')}="
        secure = scope.get("scheme") == "https"

        async def sending(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = []
                for key, value in message.get("headers") or []:
                    if key.lower() == b"set-cookie":
                        cookie = value.decode("latin-1")
                        if cookie.startswith(name):
                            self._begin(tokens, cookie[len(name):].split(";")[0])
                        value = hardened(cookie, secure).encode("latin-1")
                    headers.append((key, value))
                message = {**message, "headers": headers}
            await send(message)

        return sending

    def sign_out(self, scope: Scope) -> tuple[str, int] | None:
        """End the request's session (all its user's unless ?all_session=false); who, and how many ended."""
        # Whichever cookie named it: Gradio's own sign-out of one session reads the Secure one only.
        tokens, token = _tokens(scope), token_of(scope)
        user = tokens.get(token) if token else None
        if token is None or user is None:
            return None
        asked = parse_qs(scope.get("query_string", b"").decode("latin-1")).get("all_session", ["true"])
        alone = asked[-1].strip().lower() in FALSE
        ending = [token] if alone else [t for t, u in list(tokens.items()) if u == user]
        for each in ending:
            self.end(each, "", tokens)
        return user, len(ending)

    def receiving(self, token: str, receive: Receive) -> Ending:
        """receive() for a session's open stream: the client's messages, a disconnect once it ends."""
        # At a disconnect Starlette stops the stream, as when the client goes away.
        return Ending(self._ending(token), receive)

    async def _ending(self, token: str) -> None:
        """Return once the session has ended: signed out, or past its idle time or lifetime."""
        while (session := self.open.get(token)) is not None:
            now = monotonic()
            if why := self._over(session, now):
                self.end(token, why)
                return
            left = min(session.began + self.lifetime, session.last + self.idle) - now
            with anyio.move_on_after(left):
                await session.ended.wait()

    def _begin(self, tokens: dict[str, str], token: str) -> None:
        """A session for a new token; ended ones are forgotten (Gradio's tokens with them)."""
        if (user := tokens.get(token)) is None:
            return
        now = monotonic()
        for other, session in list(self.open.items()):
            if why := self._over(session, now):
                self.end(other, why)
        self.open[token] = Session(user, now, now, tokens)

    def _over(self, session: Session, now: float) -> str:
        """Why a session is over at now ("" while it is not)."""
        if now - session.began >= self.lifetime:
            return f"signed in {span(self.lifetime)} ago (QA_SESSION_LIFETIME)"
        if now - session.last >= self.idle:
            return f"no request for {span(self.idle)} (QA_SESSION_IDLE)"
        return ""


class Ending:
    """A stream's receive(): the client's next message, or a disconnect once the session has ended."""

    # The client's receive() runs in a task of its own, kept until it gives a message: a caller that
    # gives up waiting (Starlette's is_disconnected() asks in a cancelled scope) loses nothing.

    def __init__(self, end: Awaitable[None], receive: Receive) -> None:
        self.receive = receive
        self.pending: asyncio.Future[Message] | None = None
        self.ended: asyncio.Future[None] = asyncio.ensure_future(end)

    async def __call__(self) -> Message:
        if self.pending is None and not self.ended.done():
            self.pending = asyncio.ensure_future(self.receive())
        if self.pending is not None:
            waits: list[asyncio.Future[Any]] = [self.pending, self.ended]
            await asyncio.wait(waits, return_when=asyncio.FIRST_COMPLETED)
            if self.pending.done():
                message, self.pending = self.pending.result(), None
                return message
        return DISCONNECT

    def close(self) -> None:
        """Stop waiting for the session's end and the client (the request is over)."""
        for task in (self.pending, self.ended):
            if task is not None:
                task.cancel()


def token_of(scope: Scope) -> str | None:
    """The session token a request carries, read as Gradio reads it: the Secure cookie, else the other."""
    from starlette.requests import cookie_parser

    raw = dict(scope.get("headers") or []).get(b"cookie", b"").decode("latin-1")
    cookies, name = cookie_parser(raw), f"access-token-{getattr(scope.get('app'), 'cookie_id', None)}"
    return cookies.get(name) or cookies.get(name.replace("token-", "token-unsecure-", 1)) or None


def hardened(cookie: str, secure: bool) -> str:
    """A Set-Cookie value made SameSite=Lax, and Secure over HTTPS; its other attributes kept."""
    # Lax: no other site's page sends it along. Secure: no plain-HTTP request carries it.
    name, *attributes = (part.strip() for part in cookie.split(";"))
    kept = [a for a in attributes if a.split("=")[0].strip().lower() not in ("samesite", "secure")]
    had = any(a.lower() == "secure" for a in attributes)
    return "; ".join([name, *kept, "SameSite=Lax", *(["Secure"] if secure or had else [])])


def span(seconds: float) -> str:
    """A duration in words: 45 seconds, 30 minutes, 8 hours."""
    for unit, size in (("hour", 3600), ("minute", 60)):
        if seconds >= 2 * size:
            return f"{seconds / size:g} {unit}s"
    return f"{seconds:g} seconds"


def _tokens(scope: Scope) -> dict[str, str]:
    """Gradio's sign-in tokens (token -> user), or an empty dict without sign-in."""
    tokens = getattr(scope.get("app"), "tokens", None)
    return tokens if isinstance(tokens, dict) else {}
