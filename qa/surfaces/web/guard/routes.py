"""Requests to Gradio's API that Gradio would answer with a traceback, found before it reads them:

- a JSON body holding a lone surrogate (``"\\ud800"``): Gradio reads it, then cannot write it back
  (``TypeError: … surrogates not allowed``) and cuts the event stream;
- a call of a function of the page that cannot run (``calls.py``);
- ``component_server`` naming no component function (the page has none), and ``stream/``, which
  feeds a running event new inputs past the checks (no input of the page streams);
- an event stream (``queue/data``, ``call/<name>/<event>``) of a session or event the queue
  does not hold: Gradio answers 200, then raises its 404 inside the stream.
"""

from __future__ import annotations

import json
import re
from typing import Any
from urllib.parse import parse_qs

from qa.surfaces.web.guard.calls import call_problem

API = "/gradio_api"
STREAM = re.compile(r"/gradio_api/stream/[^/]+(?:/close)?/?")
EVENT = re.compile(r"/gradio_api/call/(?:v2/)?[^/]+/(?P<event>[^/]+)/?")
NOT_JSON = object()


def problem(app: Any, path: str, body: bytes) -> str | None:
    """Why a POST to Gradio's API cannot be served, in one line; None to let Gradio answer it."""
    if not path.startswith(API + "/") or not hasattr(app, "get_blocks"):
        return None
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        request = NOT_JSON  # a file upload, or a body Gradio refuses itself (400 or 422)
    if request is not NOT_JSON and not _text(request):
        return "the request holds a broken character (a lone surrogate, such as \\ud800): send Unicode text"
    if path.rstrip("/") == API + "/component_server":
        return _component(app, request)
    if STREAM.fullmatch(path) and not any(getattr(f, "connection", "") == "stream"
                                          for f in app.get_blocks().fns.values()):
        return "no input of this page streams: /gradio_api/stream/ has nothing to take"
    return call_problem(app, path, request)


def unknown_stream(app: Any, path: str, query: bytes) -> str | None:
    """Why an event stream has nothing to send (no such session or event in the queue); or None."""
    if not hasattr(app, "get_blocks"):
        return None
    queue = app.get_blocks()._queue  # Gradio's own lookups, made before it answers 200
    if path.rstrip("/") == API + "/queue/data":
        session = parse_qs(query.decode("latin-1")).get("session_hash", [None])[-1]
        if session is None:
            return None  # FastAPI says it is missing, without a traceback
    elif match := EVENT.fullmatch(path):
        event = match["event"]
        known = queue.event_ids_to_events.get(event)
        session = known.session_hash if known is not None else next(
            (s for s, ids in queue.pending_event_ids_session.items() if event in ids), event)
    else:
        return None
    if session in queue.pending_messages_per_session:
        return None
    return "there is no such session or event in the queue: join it first (POST /gradio_api/queue/join)"


def _component(app: Any, request: Any) -> str | None:
    """Why a component_server call names no function a component serves; or None."""
    served = {(bid, name) for bid, block in app.get_blocks().blocks.items() for name in dir(type(block))
              if getattr(getattr(type(block), name, None), "_is_server_fn", False)}
    if isinstance(request, dict):
        named = (request.get("component_id"), request.get("fn_name"))
        if named in served:
            return None
        return f"no component serves a function {str(named[1])[:40]!r} (component {str(named[0])[:20]})"
    return None if served else "no component of this page serves a function"


def _text(request: object) -> bool:
    """Whether every string in a JSON value is text that can be written back (no lone surrogate)."""
    try:
        json.dumps(request, ensure_ascii=False).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
