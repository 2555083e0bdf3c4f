"""Request bodies before Gradio reads them: capped, uploads only from who may upload and at a
bounded rate, and requests that would make Gradio log a traceback refused (``routes.py``)."""

from __future__ import annotations

import json
import logging
from collections.abc import Awaitable, Callable, MutableMapping
from typing import Any

from qa.articles.uploads import may_upload
from qa.config import Config
from qa.surfaces.web.guard.routes import problem
from qa.surfaces.web.limits import Once, RateLimited, RateLimiter

log = logging.getLogger("qa.app")

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]

API_BODY = 256 * 1024
# A file of Gradio's upload limit, with room for the multipart framing around it.
UPLOAD_BODY = 2 * 1024 * 1024 + 64 * 1024
UPLOADS_PER_MINUTE = 6


class Bodies:
    """Reads a POST's body up to its cap, checks it, and replays it to Gradio."""

    def __init__(self, config: Config, told: Once) -> None:
        self.config = config
        self.uploads = RateLimiter(UPLOADS_PER_MINUTE, what="uploads", setting="")
        self.told = told

    async def checked(self, scope: Scope, receive: Receive, send: Send, user: str | None,
                      who: str) -> Receive | None:
        """The request's body, read up to its cap and replayed; None when a refusal was sent."""
        upload = scope["path"].rstrip("/").endswith("/gradio_api/upload")
        if upload and not await self._may_upload(send, user, who):
            return None
        cap = UPLOAD_BODY if upload else API_BODY
        body = await _read(scope, receive, send, cap)
        if body is None:
            return None
        if (why := problem(scope.get("app"), scope["path"], body)) is not None:
            if self.told.first(f"malformed {who}"):
                log.warning("malformed call refused for %s: %s (further ones in the next minute are not "
                            "logged)", who, why)
            await refuse(send, 422, why)
            return None
        return _replay(body, receive)

    async def _may_upload(self, send: Send, user: str | None, who: str) -> bool:
        """Whether this client may store a file now; a refusal sent when not."""
        if not may_upload(self.config, user):
            log.warning("file upload refused: %s may not upload", who)
            await refuse(send, 403, "Uploads are off for you: the server allows them with QA_UPLOADS=1, "
                                    "or for the users in QA_UPLOADERS.")
            return False
        try:
            self.uploads.check(who)
        except RateLimited as exc:
            await refuse(send, 429, str(exc))
            return False
        return True


async def _read(scope: Scope, receive: Receive, send: Send, cap: int) -> bytes | None:
    """The whole body, or None when it is over cap (413 sent) or the client went away."""
    length = dict(scope.get("headers") or []).get(b"content-length", b"")
    if length.isdigit() and int(length) > cap:
        await refuse(send, 413, f"the request body is over {cap // 1024:,} KB")
        return None
    chunks, size = [], 0
    while True:
        message = await receive()
        if message["type"] != "http.request":
            return None  # the client went away
        chunks.append(message.get("body", b""))
        size += len(chunks[-1])
        if size > cap:
            await refuse(send, 413, f"the request body is over {cap // 1024:,} KB")
            return None
        if not message.get("more_body"):
            return b"".join(chunks)


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


async def refuse(send: Send, status: int, message: str) -> None:
    """Answer with status and {"detail": message}, as Gradio's own refusals look."""
    body = json.dumps({"detail": message}).encode("utf-8")
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": body})
