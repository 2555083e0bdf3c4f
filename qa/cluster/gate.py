"""`qa serve`'s bearer token (QA_SERVE_TOKEN): checked by each replica, and by Serve's proxy for
the routes it answers itself (``/-/routes``, ``/-/healthz``), before any replica sees a request.

The proxy loads ProxyGate through Ray Serve's proxy callback (RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH),
read from its environment: `qa serve` sets it, and the token's SHA-256, in the Serve controller's
environment, which the proxy it starts inherits. Nothing keeps the token itself.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
from typing import Any

UNAUTHORIZED = "no valid token: send Authorization: Bearer <QA_SERVE_TOKEN>"
CALLBACK = "RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH"
DIGEST = "QA_SERVE_TOKEN_SHA256"


def token_digest(token: str) -> str:
    """What replicas keep of the bearer token: its SHA-256, never the token itself."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest() if token else ""


def authorized(header: str | None, digest: str) -> bool:
    """True when no token is set, or the Authorization header carries it (constant-time compare)."""
    if not digest:
        return True
    scheme, _, token = (header or "").partition(" ")
    return hmac.compare_digest(token_digest(token.strip()) if scheme.lower() == "bearer" else "", digest)


class ProxyGate:
    """ASGI middleware in Serve's proxy: its own routes (/-/...) want the bearer token too."""

    def __init__(self, app: Any, digest: str) -> None:
        self.app, self.digest = app, digest

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http" and scope["path"].startswith("/-/"):
            header = dict(scope.get("headers") or []).get(b"authorization", b"").decode("latin-1")
            if not authorized(header, self.digest):
                body = json.dumps({"error": UNAUTHORIZED}).encode()
                await send({"type": "http.response.start", "status": 401, "headers": [
                    (b"content-type", b"application/json"), (b"www-authenticate", b"Bearer"),
                    (b"content-length", str(len(body)).encode())]})
                await send({"type": "http.response.body", "body": body})
                return
        await self.app(scope, receive, send)


def proxy_gate() -> list:
    """What Serve's proxy calls as it starts: the gate, when a token's digest is in its environment."""
    from starlette.middleware import Middleware

    digest = os.environ.get(DIGEST, "")
    return [Middleware(ProxyGate, digest=digest)] if digest else []


def proxy_settings(digest: str) -> dict[str, str]:
    """The Serve controller's environment variables that make its proxy load the gate."""
    return {CALLBACK: f"{__name__}:proxy_gate", DIGEST: digest} if digest else {}
