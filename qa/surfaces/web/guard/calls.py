"""Gradio calls checked before Gradio runs them, so that a malformed one is refused in one line.

Every route that runs a function of the page (``queue/join``, ``run/``, ``api/``, ``call/``,
``call/v2/``) is checked against the function Gradio will run: the one ``fn_index`` names where
Gradio reads it (the queue's, ``run/`` and ``api/``, where it wins over the name in the path),
else the one the name names. Gradio logs a traceback for a call naming no function, sending fewer
inputs than its function takes, a keyword its function lacks, or giving a file input anything but
a file uploaded to its folder (say ``{"path": "/etc/hostname"}``, or the folder itself), or
naming a step the page runs itself (no function on the server): a signed-in user could flood
the log that way. The guard refuses such calls with 422 and one line.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from typing import Any

# The routes that run a function: the queue's (fn_index in the body) and the REST ones (a name).
CALLS = re.compile(r"/gradio_api/(?:queue/join|(?P<kind>call/v2|call|run|api)/(?P<api>[^/]+))/?")
NO_SUCH = "there is no function {}: /gradio_api/info lists them"


def call_problem(app: Any, path: str, request: Any) -> str | None:
    """Why a call of a function cannot run, in one line; None to let Gradio answer it."""
    # None too for a call Gradio refuses without a traceback (data not a list, a field of the wrong type).
    match = CALLS.fullmatch(path)
    if match is None or not hasattr(app, "get_blocks") or not isinstance(request, dict):
        return None
    found: str | tuple | None = (_by_keywords(app, match["api"], request) if match["kind"] == "call/v2"
                                 else _by_position(app, match["kind"], match["api"], request))
    if isinstance(found, str) or found is None:
        return found
    fn, data = found
    return inputs_problem(fn, data)


def _by_position(app: Any, kind: str | None, api: str | None, request: dict) -> str | tuple | None:
    """The function a positional call runs and its data; why not; None when Gradio refuses it itself."""
    from gradio.data_classes import PredictBody, SimplePredictBody

    try:  # the body as Gradio reads it ("7" and true are indexes 7 and 1 to pydantic)
        body = (SimplePredictBody if kind == "call" else PredictBody).model_validate(request)
    except ValueError:
        return None
    fns = app.get_blocks().fns
    index = getattr(body, "fn_index", None)
    if index is not None or kind is None:
        fn = fns.get(index)
        if fn is None:
            return NO_SUCH.format(repr(str(index)[:20]))
    elif (fn := next((f for f in fns.values() if f.api_name == api), None)) is None:
        return NO_SUCH.format(f"named {str(api)[:40]!r}")
    if getattr(body, "batched", False) and not getattr(fn, "batch", False):
        return f"{fn.api_name or fn.name} takes one call at a time, not a batch (send batched: false)"
    return fn, body.data


def _by_keywords(app: Any, api: str, request: dict) -> str | tuple:
    """The function a call/v2 call runs and its data, by its parameters' names; or why not."""
    blocks = app.get_blocks()
    info = (getattr(app, "api_info", None) or blocks.get_api_info())["named_endpoints"].get("/" + api)
    fn = next((f for f in blocks.fns.values() if f.api_name == api), None)
    if info is None or fn is None:
        return NO_SUCH.format(f"named {api[:40]!r}")
    params = info.get("parameters") or []
    names = [p.get("parameter_name") for p in params]
    given = {k: v for k, v in request.items() if k != "oauth_token"}  # Gradio drops it here
    if unknown := [k for k in given if k not in names]:
        return f"{api} has no parameter {unknown[0][:40]!r}; it takes {', '.join(map(str, names))}"
    missing = [p.get("parameter_name") for p in params
               if p.get("parameter_name") not in given and not p.get("parameter_has_default")]
    if missing:
        return f"{api} needs its parameter {missing[0]!r}"
    return fn, [given.get(str(n), p.get("parameter_default")) for n, p in zip(names, params, strict=True)]


def inputs_problem(fn: Any, data: list) -> str | None:
    """Why data cannot be the inputs of fn (too few, the wrong kind, a file not uploaded); or None."""
    name = fn.api_name or fn.name
    if getattr(fn, "fn", True) is None:  # a step the page runs itself (its js): Gradio fails on a call
        return f"{name} runs in the page, not on the server: there is nothing to call"
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
        for path in _paths(value):
            if why := _file_problem(path):
                return f"{name}'s input {n} {why}"
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


def _file_problem(path: str) -> str | None:
    """Why a file input's path is not a file Gradio will read from its upload folder; or None."""
    # Outside the folder (after links and ..), the folder itself or another folder, a URL; or a
    # name that begins with '.' under the working folder, which Gradio refuses with a traceback
    # (its upload folder is under the working folder of a server started from / or /tmp).
    from gradio.utils import get_upload_folder

    folder = os.path.realpath(get_upload_folder())
    try:
        real = os.path.realpath(path)
        inside = os.path.isabs(path) and os.path.commonpath([folder, real]) == folder
    except ValueError:  # a NUL byte in the path
        inside = False
    if not inside or real == folder or os.path.isdir(real):
        return "names a file that was not uploaded (POST /gradio_api/upload first)"
    name, cwd = os.path.basename(os.path.abspath(path)), os.path.realpath(os.getcwd())
    if name.startswith(".") and os.path.commonpath([cwd, real]) == cwd:
        return (f"is a file whose name begins with '.' ({name[:40]}), which this server cannot read: "
                f"rename it, e.g. {name.lstrip('.')[:40] or 'article.txt'}")
    return None
