"""Who a request comes from: the client's address (a trusted proxy's X-Forwarded-For, or the
socket's), and who is asking, for logs and limits; which routes need sign-in."""

from __future__ import annotations

import contextlib
import ipaddress
import os
from collections.abc import Callable, Iterator, MutableMapping
from typing import TYPE_CHECKING, Any

from qa.surfaces.web.throttle import shown

if TYPE_CHECKING:
    import gradio as gr

Scope = MutableMapping[str, Any]
API = "/gradio_api"
SCHEMA = "/openapi.json"  # FastAPI's description of every route, Gradio's included
# The header that tells the chat's handlers which trusted proxy forwarded a request (a client's
# own is dropped): they log it beside the client's address.
VIA = b"x-qa-via-proxy"


class Addresses:
    """The client's address of each request: the socket's, or the one a trusted proxy names."""

    def __init__(self, trusted_proxies: str) -> None:
        self.proxies = [ipaddress.ip_network(p.strip(), strict=False)
                        for p in trusted_proxies.split(",") if p.strip()]

    def of(self, scope: Scope) -> tuple[str, str]:
        """The client's address and the trusted proxy that forwarded the request ("" for none);
        a forwarded request's scope names the client, as Gradio's handlers see it."""
        peer = (scope.get("client") or ("unknown", 0))[0]
        headers = [(k, v) for k, v in scope.get("headers") or [] if k != VIA]
        forwarded = [v.decode("latin-1") for k, v in headers if k == b"x-forwarded-for"]
        client = _client(forwarded, self.trusted) if forwarded and self.trusted(peer) else None
        if client is None:
            scope["headers"] = headers
            return peer, ""
        scope["client"], scope["headers"] = (client, 0), [*headers, (VIA, peer.encode("latin-1"))]
        proto = dict(headers).get(b"x-forwarded-proto", b"").decode("latin-1").strip()
        if proto in ("http", "https"):
            scope["scheme"] = proto  # a TLS proxy's https: Gradio's links and cookies follow it
        return client, peer

    def trusted(self, host: str) -> bool:
        """Whether an address is one of the trusted proxies."""
        try:
            address = ipaddress.ip_address(host)
        except ValueError:
            return False
        return any(address in network for network in self.proxies)


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


def closed(scope: Scope) -> bool:
    """True for a route that needs sign-in, when it is on: Gradio's API and FastAPI's /openapi.json."""
    # But for the one call Gradio's start-up makes (once, when launch() starts the server: open
    # until then, like a port that is not yet listening).
    app, path = scope.get("app"), scope["path"].rstrip("/")
    if getattr(app, "auth", None) is None or not (path in (API, SCHEMA) or path.startswith(API + "/")):
        return False
    return getattr(app, "startup_events_triggered", True) or path != API + "/startup-events"
