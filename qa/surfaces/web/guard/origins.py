"""Which page a request comes from: a browser names it (``Origin``, or ``Sec-Fetch-Site`` where it
sends no Origin), and a page of another origin may not act for the user whose cookie the browser
adds. Ports of one host are one *site* to a browser (SameSite cookies go between them), so the
check is by origin: scheme, host and port, as the browser opened the chat, or one listed in
QA_ALLOWED_ORIGINS. Clients that are not browsers (scripts, gradio_client) send neither header and
hold no one else's cookie: they pass."""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

Scope = MutableMapping[str, Any]
# Methods a browser lets any page send without asking (a navigation, an image); they change nothing
# here but sign-out, which is checked like the rest.
SAFE = ("GET", "HEAD")
DEFAULT_PORTS = {"http": "80", "https": "443"}


def normal(origin: str) -> str:
    """An origin as compared: lower case, no trailing slash, no default port."""
    origin = origin.strip().lower().rstrip("/")
    scheme, sep, host = origin.partition("://")
    if sep and host.endswith(":" + DEFAULT_PORTS.get(scheme, "-")):
        host = host.rsplit(":", 1)[0]
    return f"{scheme}{sep}{host}"


class Origins:
    """The server's own origin and the allowed others; which requests come from elsewhere."""

    def __init__(self, allowed: str) -> None:
        self.allowed = {normal(o) for o in allowed.split(",") if o.strip()}

    def foreign(self, scope: Scope, proxied: bool) -> str | None:
        """The other page a browser says sent this request, when it may not act from there; else None."""
        headers = {k.lower(): v.decode("latin-1") for k, v in scope.get("headers") or []}
        origin = headers.get(b"origin")
        if origin is None:
            # No Origin: a navigation or an image, which may come from anywhere, but for sign-out
            # (an <img src=/logout> would end the session); a browser's POST always names its origin.
            site = headers.get(b"sec-fetch-site", "")
            acts = scope["method"] not in SAFE or scope["path"].rstrip("/") == "/logout"
            return f"a {site} page" if acts and site in ("cross-site", "same-site") else None
        origin = normal(origin)
        if origin in self.allowed or origin == own(scope, headers, proxied):
            return None
        return origin[:100]  # any method: a GET naming an origin is another page reading (CORS)


def own(scope: Scope, headers: dict[bytes, str], proxied: bool) -> str:
    """The origin the browser opened the chat at: its scheme and the Host it asked for."""
    # A trusted proxy's X-Forwarded-Proto is in scope already; its X-Forwarded-Host comes first.
    host = headers.get(b"host", "")
    if proxied and (forwarded := headers.get(b"x-forwarded-host", "").split(",")[0].strip()):
        host = forwarded
    return normal(f"{scope.get('scheme', 'http')}://{host}")
