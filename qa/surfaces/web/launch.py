"""Serving the chat page: sign-in, the guard in front of Gradio, limits, the page's look."""

from __future__ import annotations

from typing import Any

import gradio as gr

import qa
from qa.surfaces.web.auth import sign_in
from qa.surfaces.web.guard import Guard, forwarded_headers_off

# Gradio refuses bigger files before they reach us (and before they fill its temp folder);
# between this and MAX_UPLOAD_BYTES our own one-line message says what the limit is.
GRADIO_MAX_FILE = "2mb"


def launch(demo: gr.Blocks, config: qa.Config, host: str, port: int, **kwargs: Any) -> None:
    """Serve demo with the sign-in (throttled), limits and upload settings of config."""
    from starlette.middleware import Middleware

    with forwarded_headers_off():
        demo.launch(server_name=host, server_port=port, auth=sign_in(config),  # type: ignore[arg-type]  # awaited
                    max_file_size=GRADIO_MAX_FILE, state_session_capacity=config.serving.sessions, quiet=True,
                    theme=theme(), app_kwargs={"middleware": [Middleware(Guard, config=config)]}, **kwargs)


def theme() -> gr.themes.Base:
    """Gradio's default look, with its font's full regular and bold faces: the semibold face it
    ships holds 55 glyphs (A, B, some Cyrillic), so bold text showed other letters in another font."""
    font = gr.themes.LocalFont("Source Sans Pro", weights=(400, 700))
    return gr.themes.Default(font=[font, "ui-sans-serif", "system-ui", "sans-serif"])
