"""The chat server's front door: an ASGI middleware in front of Gradio's routes.

- A request a browser sends from a page of another origin (another port of this host too) is
  refused with 403 before anything else when it could act for the user: any method but GET and
  HEAD, sign-out, and any request naming that origin (a read through CORS) (``origins.py``).
- With sign-in on, a session ends after QA_SESSION_IDLE seconds without a request and
  QA_SESSION_LIFETIME seconds after sign-in, and at sign-out whichever cookie names it; its open
  streams end with it; its cookies are SameSite=Lax, and Secure over HTTPS (``sessions.py``).
- With sign-in on, every ``/gradio_api/`` route and ``/openapi.json`` answer 401 before sign-in
  (the login page needs none; Gradio leaves some open), but for the one call Gradio's launch() makes.
- Request bodies are capped before Gradio reads them: 256 KB for the API (a question and its
  history need a few), the upload limit for files; more gets 413 (``bodies.py``).
- A client (the signed-in user, else the address) holds at most STREAMS_PER_CLIENT ``/gradio_api/``
  GET requests open at once: event streams stay open, and no client may hold them without limit.
- Files reach Gradio's temporary folder (``/gradio_api/upload``) only from users who may upload,
  at most UPLOADS_PER_MINUTE a minute each; others get 403 and nothing is stored (``bodies.py``).
- Requests that would make Gradio log a traceback get a 4xx and one line a minute per client: every
  route that runs a function of the page is checked against the function Gradio will run
  (``calls.py``), and the others Gradio would fail on (``routes.py``).
- Each request's client address is noted for the sign-in throttle (``throttle.py``): the socket's,
  or the one a proxy named in QA_TRUSTED_PROXIES puts in X-Forwarded-For (``clients.py``; uvicorn's
  own reading of that header is turned off by launch(), so no other sender can choose its address).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

from qa.config import Config
from qa.surfaces.web.guard.bodies import UPLOADS_PER_MINUTE, Bodies, Message, Receive, Scope, Send, refuse
from qa.surfaces.web.guard.clients import API, Addresses, closed, forwarded_headers_off, who
from qa.surfaces.web.guard.origins import Origins
from qa.surfaces.web.guard.routes import unknown_stream
from qa.surfaces.web.guard.sessions import Sessions
from qa.surfaces.web.limits import Once
from qa.surfaces.web.throttle import CLIENT_ADDRESS, shown

__all__ = ["STREAMS_PER_CLIENT", "UPLOADS_PER_MINUTE", "Guard", "forwarded_headers_off", "who"]

log = logging.getLogger("qa.app")

# A page holds two event streams open (the heartbeat, the queue's data), so this is 16 tabs.
STREAMS_PER_CLIENT = 32
FOREIGN = ("Refused: this request came from another web page ({}), not from the chat's own page. Open "
           "the chat at its own address; a server reached at another one lists it in QA_ALLOWED_ORIGINS.")
SIGNED_OUT = "Not signed in, or the session has ended: sign in (POST /login, or reload the page)"


class Guard:
    """Origins, sessions, body caps, upload rights and rate, the client's address: every HTTP request."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], config: Config) -> None:
        self.app, self.config = app, config
        self.addresses = Addresses(config.team.trusted_proxies)
        self.origins = Origins(config.team.allowed_origins)
        self.sessions = Sessions(config.team.session_idle, config.team.session_lifetime)
        self.told = Once()
        self.bodies = Bodies(config, self.told)
        self.streams: dict[str, int] = {}  # open GET requests per client (none kept at 0)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        address, proxy = self.addresses.of(scope)
        noted = CLIENT_ADDRESS.set((address, proxy))
        try:
            await self._dispatch(scope, receive, send, shown(address, proxy), bool(proxy))
        finally:
            CLIENT_ADDRESS.reset(noted)

    async def _dispatch(self, scope: Scope, receive: Receive, send: Send, address: str,
                        proxied: bool) -> None:
        """Refuse what may not pass; hand the rest to Gradio, watched as its kind needs."""
        path, method = scope["path"], scope["method"]
        token, user = self.sessions.current(scope)
        client = f"user {user}" if user else f"address {address}"
        if (origin := self.origins.foreign(scope, proxied)) is not None:
            if self.told.first(f"origin {client}"):
                log.warning("request from another origin refused for %s: %s %s from %s (further ones in the "
                            "next minute are not logged)", client[:80], method, path[:80], origin)
            await refuse(send, 403, FOREIGN.format(origin))
        elif user is None and closed(scope):
            await refuse(send, 401, SIGNED_OUT)
        elif path.rstrip("/") == "/logout":
            if (out := self.sessions.sign_out(scope)) is not None:
                log.info("signed out: %r from %s (%d session%s ended)", out[0], address, out[1],
                         "" if out[1] == 1 else "s")
            await self.app(scope, receive, send)
        elif method == "GET" and (path == API or path.startswith(API + "/")):
            await self._stream(scope, receive, send, client, token)
        elif method == "POST":
            if (checked := await self.bodies.checked(scope, receive, send, user, client)) is not None:
                if path.rstrip("/") == "/login":
                    send = self.sessions.signing_in(scope, send)
                await self.app(scope, checked, send)
        else:
            await self.app(scope, receive, send)

    async def _stream(self, scope: Scope, receive: Receive, send: Send, client: str,
                      token: str | None) -> None:
        """A GET of Gradio's API (an event stream may stay open), within the client's open ones."""
        why = unknown_stream(scope.get("app"), scope["path"], scope.get("query_string", b""))
        if why is not None:
            if self.told.first(f"malformed {client}"):
                log.warning("malformed call refused for %s: %s (further ones in the next minute are not "
                            "logged)", client[:80], why)
            await refuse(send, 404, why)
            return
        if self.streams.get(client, 0) >= STREAMS_PER_CLIENT:
            if self.told.first(client):
                log.warning("open requests refused: %s holds %d open at once; refusals for the next minute "
                            "are not logged", client[:80], STREAMS_PER_CLIENT)
            await refuse(send, 429, f"Too many open requests: at most {STREAMS_PER_CLIENT} at once; "
                                    "close a tab or a client, then try again.")
            return
        self.streams[client] = self.streams.get(client, 0) + 1
        try:
            if token is None:
                await self.app(scope, receive, send)
            else:
                ending = self.sessions.receiving(token, receive)
                try:
                    await _finished(self.app, scope, ending, send)
                finally:
                    ending.close()
        finally:
            self.streams[client] -= 1
            if not self.streams[client]:
                del self.streams[client]


async def _finished(app: Callable[[Scope, Receive, Send], Awaitable[None]], scope: Scope, receive: Receive,
                    send: Send) -> None:
    """Run app; a response it began and left open (its stream stopped at the session's end) is ended."""
    state = {"started": False, "done": False}

    async def sending(message: Message) -> None:
        if message["type"] == "http.response.start":
            state["started"] = True
        await send(message)
        if message["type"] == "http.response.body" and not message.get("more_body", False):
            state["done"] = True

    await app(scope, receive, sending)
    if state["started"] and not state["done"]:
        await send({"type": "http.response.body", "body": b"", "more_body": False})
