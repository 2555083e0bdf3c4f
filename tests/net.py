"""The tests' real servers: a free loopback port, and the chat app served on it."""

from __future__ import annotations

import contextlib
import socket
from collections.abc import Iterator

import qa
from qa.surfaces import chat


def free_port() -> int:
    """A TCP port on 127.0.0.1 that nothing listens on right now."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


@contextlib.contextmanager
def serving(engine: qa.QA) -> Iterator[str]:
    """The chat app over engine, launched as `app.py` does (sign-in, limits), on loopback."""
    demo = chat.build_demo(engine)
    port = free_port()
    chat.launch(demo, engine.config, "127.0.0.1", port, prevent_thread_lock=True)
    try:
        yield f"http://127.0.0.1:{port}/"
    finally:
        demo.close()
