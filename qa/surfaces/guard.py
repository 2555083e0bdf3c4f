"""The chat server's front door: an ASGI middleware in front of Gradio's routes.

- Request bodies are capped before Gradio reads them: 256 KB for the API (a question and its
  history need a few), the upload limit for files; more gets 413.
- Files reach Gradio's temporary folder (``/gradio_api/upload``) only from users who may upload,
  at most UPLOADS_PER_MINUTE a minute each; others get 403 and nothing is stored.
- Each request's client address is noted for the sign-in throttle (qa/surfaces/throttle.py).
"""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from qa.articles.uploads import may_upload
from qa.config import Config
from qa.surfaces.limits import RateLimited, RateLimiter
from qa.surfaces.throttle import CLIENT_ADDRESS

log = logging.getLogger("qa.app")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

API_BODY = 256 * 1024
# A file of Gradio's upload limit, with room for the multipart framing around it.
UPLOAD_BODY = 2 * 1024 * 1024 + 64 * 1024
UPLOADS_PER_MINUTE = 6


class Guard:
    """Body caps, upload rights and rate, and the client's address, for every HTTP request."""

    def __init__(self, app: Callable[[Scope, Receive, Send], Awaitable[None]], config: Config) -> None:
        self.app, self.config = app, config
        self.uploads = RateLimiter(UPLOADS_PER_MINUTE, what="uploads", setting="")

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        address = (scope.get("client") or ("unknown",))[0]
        noted = CLIENT_ADDRESS.set(address)
        try:
            if scope["method"] == "POST":
                receive = await self._checked(scope, receive, send, address)
                if receive is None:
                    return
            await self.app(scope, receive, send)
        finally:
            CLIENT_ADDRESS.reset(noted)

    async def _checked(self, scope: Scope, receive: Receive, send: Send, address: str) -> Receive | None:
        """The request's body, read up to its cap and replayed; None when a refusal was sent."""
        upload = scope["path"].rstrip("/").endswith("/gradio_api/upload")
        if upload:
            user = _user(scope)
            who = f"user {user}" if user else f"address {address}"
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
        return _replay(b"".join(chunks), receive)


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
