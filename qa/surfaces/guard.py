"""The chat server's front door: an ASGI middleware in front of Gradio's routes.

- Request bodies are capped before Gradio reads them: 256 KB for the API (a question and its
  history need a few), the upload limit for files; more gets 413.
- With sign-in on, every ``/gradio_api/`` route answers 401 before sign-in (the login page needs
  none; Gradio leaves some open), but for the one call Gradio's launch() makes, once.
- A client (the signed-in user, else the address) holds at most STREAMS_PER_CLIENT ``/gradio_api/``
  GET requests open at once: event streams stay open, and no client may hold them without limit.
- Files reach Gradio's temporary folder (``/gradio_api/upload``) only from users who may upload,
  at most UPLOADS_PER_MINUTE a minute each; others get 403 and nothing is stored.
- Calls that would make Gradio log a traceback (qa/surfaces/calls.py) get 422 and one line.
- Each request's client address is noted for the sign-in throttle (qa/surfaces/throttle.py): the
  socket's, or the one a proxy named in QA_TRUSTED_PROXIES puts in X-Forwarded-For (uvicorn's own
  reading of that header is turned off by launch(), so no other sender can choose its address).
"""

from __future__ import annotations

import contextlib
import ipaddress
import json
import logging
import os
from collections.abc import Awaitable, Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

from qa.articles.uploads import may_upload
from qa.config import Config
from qa.surfaces.calls import problem
from qa.surfaces.limits import Once, RateLimited, RateLimiter
from qa.surfaces.throttle import CLIENT_ADDRESS, shown

if TYPE_CHECKING:
    import gradio as gr

log = logging.getLogger("qa.app")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

API_BODY = 256 * 1024
# A file of Gradio's upload limit, with room for the multipart framing around it.
UPLOAD_BODY = 2 * 1024 * 1024 + 64 * 1024
UPLOADS_PER_MINUTE = 6
# A page holds two event streams open (the heartbeat, the queue's data), so this is 16 tabs.
STREAMS_PER_CLIENT = 32
API = "/gradio_api"
# The header that tells the chat's handlers which trusted proxy forwarded a request (a client's
# own is dropped): they log it beside the client's address.
VIA = b"x-qa-via-proxy"


class Guard:
    """Body caps, upload rights and rate, and the client's address, for every HTTP request."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], config: Config) -> None:
        self.app, self.config = app, config
        self.uploads = RateLimiter(UPLOADS_PER_MINUTE, what="uploads", setting="")
        self.proxies = [ipaddress.ip_network(p.strip(), strict=False)
                        for p in config.team.trusted_proxies.split(",") if p.strip()]
        self.streams: dict[str, int] = {}  # open GET requests per client (none kept at 0)
        self.told = Once()

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        address, proxy = self._address(scope)
        noted = CLIENT_ADDRESS.set((address, proxy))
        path, user = scope["path"], _user(scope)
        api = path == API or path.startswith(API + "/")
        client = f"user {user}" if user else f"address {shown(address, proxy)}"
        try:
            if api and user is None and _closed(scope):
                await _refuse(send, 401, "Not signed in: sign in first (POST /login)")
            elif api and scope["method"] == "GET":
                await self._stream(scope, receive, send, client)
            elif scope["method"] == "POST":
                if (checked := await self._checked(scope, receive, send, user, client)) is not None:
                    await self.app(scope, checked, send)
            else:
                await self.app(scope, receive, send)
        finally:
            CLIENT_ADDRESS.reset(noted)

    async def _stream(self, scope: Scope, receive: Receive, send: Send, client: str) -> None:
        """A GET of Gradio's API (an event stream may stay open), within the client's open ones."""
        if self.streams.get(client, 0) >= STREAMS_PER_CLIENT:
            if self.told.first(client):
                log.warning("open requests refused: %s holds %d open at once; refusals for the next minute "
                            "are not logged", client[:80], STREAMS_PER_CLIENT)
            await _refuse(send, 429, f"Too many open requests: at most {STREAMS_PER_CLIENT} at once; "
                                     "close a tab or a client, then try again.")
            return
        self.streams[client] = self.streams.get(client, 0) + 1
        try:
            await self.app(scope, receive, send)
        finally:
            self.streams[client] -= 1
            if not self.streams[client]:
                del self.streams[client]

    def _address(self, scope: Scope) -> tuple[str, str]:
        """The client's address and the trusted proxy that forwarded the request ("" for none);
        a forwarded request's scope names the client, as Gradio's handlers see it."""
        peer = (scope.get("client") or ("unknown", 0))[0]
        headers = [(k, v) for k, v in scope.get("headers") or [] if k != VIA]
        forwarded = [v.decode("latin-1") for k, v in headers if k == b"x-forwarded-for"]
        client = _client(forwarded, self._trusted) if forwarded and self._trusted(peer) else None
        if client is None:
            scope["headers"] = headers
            return peer, ""
        scope["client"], scope["headers"] = (client, 0), [*headers, (VIA, peer.encode("latin-1"))]
        proto = dict(headers).get(b"x-forwarded-proto", b"").decode("latin-1").strip()
        if proto in ("http", "https"):
            scope["scheme"] = proto  # a TLS proxy's https: Gradio's links and cookies follow it
        return client, peer

    def _trusted(self, host: str) -> bool:
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.proxies)

    async def _checked(self, scope: Scope, receive: Receive, send: Send, user: str | None,
                       who: str) -> Receive | None:
        """The request's body, read up to its cap and replayed; None when a refusal was sent."""
        upload = scope["path"].rstrip("/").endswith("/gradio_api/upload")
        if upload:
            if not may_upload(self.config, user):
                log.warning("file upload refused: %s may not upload", who)
                await _refuse(send, 403, "Uploads are off for you: the server allows them with QA_UPLOADS=1, "
                                         "or for the users in QA_UPLOADERS.")
                return None
            try:
                self.uploads.check(who)
            except RateLimited as exc:
                await _refuse(send, 429, str(exc))
                return None
        cap = UPLOAD_BODY if upload else API_BODY
        length = dict(scope.get("headers") or []).get(b"content-length", b"")
        if length.isdigit() and int(length) > cap:
            await _refuse(send, 413, f"the request body is over {cap // 1024:,} KB")
            return None
        chunks, size = [], 0
        while True:
            message = await receive()
            if message["type"] != "http.request":
                return None  # the client went away
            chunks.append(message.get("body", b""))
            size += len(chunks[-1])
            if size > cap:
                await _refuse(send, 413, f"the request body is over {cap // 1024:,} KB")
                return None
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        if (why := problem(scope.get("app"), scope["path"], body)) is not None:
            if self.told.first(f"malformed {who}"):
                log.warning("malformed call refused for %s: %s (further ones in the next minute are not "
                            "logged)", who, why)
            await _refuse(send, 422, why)
            return None
        return _replay(body, receive)


def who(request: gr.Request | None) -> str:
    """Who is asking, for the chat's rate limits and logs: the signed-in user, else the address
    (and the trusted proxy that forwarded it)."""
    if request is None:
        return "local"
    if request.username:
        return f"user {request.username}"
    via = request.headers.get(VIA.decode())  # set by the guard alone, for a trusted proxy's request
    return f"address {shown(request.client.host, via or '')}" if request.client else "unknown"


@contextlib.contextmanager
def forwarded_headers_off() -> Iterator[None]:
    """While Gradio starts uvicorn: uvicorn trusts no X-Forwarded-For (by default it trusts any
    local process's); the guard reads the header, from QA_TRUSTED_PROXIES only."""
    saved = os.environ.get("FORWARDED_ALLOW_IPS")
    os.environ["FORWARDED_ALLOW_IPS"] = ""  # read by uvicorn.Config, which Gradio makes in launch()
    try:
        yield
    finally:
        if saved is None:
            os.environ.pop("FORWARDED_ALLOW_IPS", None)
        else:
            os.environ["FORWARDED_ALLOW_IPS"] = saved


def _client(forwarded: list[str], trusted: Callable[[str], bool]) -> str | None:
    """The client X-Forwarded-For names: the nearest hop that is not a trusted proxy (each proxy
    appends the address it was reached from). None when a hop is not an address: trust none of it."""
    hops = [hop.strip() for value in forwarded for hop in value.split(",")]
    for hop in reversed(hops):
        try:
            host = str(ipaddress.ip_address(hop))
        except ValueError:
            return None
        if not trusted(host):
            return host
    return hops[0] if hops and hops[0] else None


def _closed(scope: Scope) -> bool:
    """True when sign-in is on and the route is not the one Gradio's start-up calls (once, when
    launch() starts the server: open until then, like a port that is not yet listening)."""
    app = scope.get("app")
    if getattr(app, "auth", None) is None:
        return False
    started = getattr(app, "startup_events_triggered", True)
    return started or scope["path"].rstrip("/") != API + "/startup-events"


def _user(scope: Scope) -> str | None:
    """The signed-in user of a request, from Gradio's session cookie (None: not signed in)."""
    from starlette.requests import cookie_parser

    app = scope.get("app")
    raw = dict(scope.get("headers") or []).get(b"cookie", b"").decode("latin-1")
    cookies, cookie_id = cookie_parser(raw), getattr(app, "cookie_id", None)
    token = cookies.get(f"access-token-{cookie_id}") or cookies.get(f"access-token-unsecure-{cookie_id}")
    return getattr(app, "tokens", {}).get(token) if token else None


def _replay(body: bytes, receive: Receive) -> Receive:
    """A receive() that gives the body already read, then waits on the client as before."""
    sent = False

    async def replay() -> Message:
        nonlocal sent
        if sent:
            return await receive()
        sent = True
        return {"type": "http.request", "body": body, "more_body": False}

    return replay


async def _refuse(send: Send, status: int, message: str) -> None:
    """Answer with status and {"detail": message}, as Gradio's own refusals look."""
    body = json.dumps({"detail": message}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
