"""The chat page's events called in-process, as the page calls them: questions taken into a chat's
line (``respond``), then answered in turn (``serve``)."""

from __future__ import annotations

from typing import Any

import gradio as gr

from qa.surfaces.web.line import Line


def events(demo: gr.Blocks) -> dict[str, Any]:
    """The page's event functions by name."""
    return {f.name: f.fn for f in demo.fns.values()}


def asked(demo: gr.Blocks, *questions: str, use_llm: bool = False) -> tuple[list[str], Line]:
    """Each question taken into a new chat, then all answered: the chat's HTML at each step of the
    answering (what Gradio skips left out), and the chat's line."""
    fns, line = events(demo), Line()
    for question in questions:
        fns["respond"](question, line, use_llm)
    return [html for html, _ in fns["serve"](line) if isinstance(html, str)], line
