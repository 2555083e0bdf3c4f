"""Gradio calls checked before Gradio runs them, so that a malformed one is refused in one line.

Gradio logs a traceback for each call naming no function (and answers 500), sending fewer inputs
than its function takes, or giving a file input anything but a file uploaded to its folder (say
``{"path": "/etc/hostname"}``): a signed-in user could flood the log that way. The guard
(qa/surfaces/web/guard/) refuses such calls with 422 and logs one line a minute per client.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator
from typing import Any

# The routes that run a function: the queue's (fn_index in the body) and the REST ones (api_name).
CALLS = re.compile(r"/gradio_api/(?:queue/join|(?:call/v2|call|run|api)/(?P<api>[^/]+))/?")


def problem(app: Any, path: str, body: bytes) -> str | None:
    """Why a call cannot run, in one line; None for any other request (or a call Gradio itself
    refuses without a traceback: a body that is not JSON, data that is not a list)."""
    match = CALLS.fullmatch(path)
    if match is None or not hasattr(app, "get_blocks"):
        return None
    try:
        request = json.loads(body)
    except (ValueError, RecursionError):
        return None
    if not isinstance(request, dict) or not isinstance(data := request.get("data"), list):
        return None
    fns = app.get_blocks().fns
    if match["api"]:
        fn = next((f for f in fns.values() if f.api_name == match["api"]), None)
        if fn is None:
            return f"there is no function named {match['api'][:40]!r}: /gradio_api/info lists them"
    else:
        index = request.get("fn_index")
        fn = fns.get(index) if isinstance(index, int) and not isinstance(index, bool) else None
        if fn is None:
            return f"there is no function {str(index)[:20]!r}: /gradio_api/info lists them"
    name = fn.api_name or fn.name
    if getattr(fn, "batch", False):
        return None  # a batch function takes a list per input; none is served here
    if len(data) < len(fn.inputs):
        return f"{name} takes {len(fn.inputs)} inputs, not {len(data)}"
    for n, (component, value) in enumerate(zip(fn.inputs, data, strict=False), 1):
        if (model := getattr(component, "data_model", None)) is None or value is None:
            continue
        try:
            model.model_validate(value, context={"validate_meta": True})
        except (ValueError, TypeError):  # pydantic's ValidationError is a ValueError
            return f"{name}'s input {n} is not what {type(component).__name__} takes"
        if not all(_uploaded(path) for path in _paths(value)):
            return f"{name}'s input {n} names a file that was not uploaded (POST /gradio_api/upload first)"
    return None


def _paths(value: object) -> Iterator[str]:
    """Every file path a component's value names (a file is a dict with a "path")."""
    if isinstance(value, dict):
        if isinstance(value.get("path"), str):
            yield value["path"]
        for item in value.values():
            yield from _paths(item)
    elif isinstance(value, list):
        for item in value:
            yield from _paths(item)


def _uploaded(path: str) -> bool:
    """True for a file in Gradio's upload folder (after resolving links and ..), never a URL."""
    from gradio.utils import get_upload_folder

    if not os.path.isabs(path):
        return False
    folder = os.path.realpath(get_upload_folder())
    try:
        return os.path.commonpath([folder, os.path.realpath(path)]) == folder
    except ValueError:  # a NUL byte in the path
        return False
