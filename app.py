"""Browser chat over the news articles: cited answers, sources, follow-ups, uploads, and an API."""

from __future__ import annotations

import argparse
import errno
import logging
import os
import socket
import sys

import qa
from qa.llm.runtime import RuntimeFailed
from qa.surfaces.auth import make_auth, open_warning
from qa.surfaces.chat import build_demo, launch


def port_problem(host: str, port: int) -> str | None:
    """Why the chat cannot listen on host:port (in use, not allowed), or None when it can."""
    with socket.socket(socket.AF_INET6 if ":" in host else socket.AF_INET) as probe:
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as Gradio binds
        try:
            probe.bind((host, port))
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                return f"port {port} is in use; set QA_PORT (or --port) to a free one"
            return f"cannot listen on {host}:{port} ({exc.strerror}); set QA_HOST and QA_PORT"
    return None


def warm_reader(engine: qa.QA) -> str:
    """Load the reader's language model before the first question: "lm", or "spans" when it is
    not configured or cannot be loaded (the log says why, once)."""
    lm = engine.answerer.lm
    if lm is None:
        return "spans"
    try:
        lm.warm()  # type: ignore[attr-defined]
    except (qa.QAError, RuntimeFailed):
        return "spans"
    return "lm"


def main() -> None:
    """Start the chat server and print its URL."""
    parser = argparse.ArgumentParser(description=__doc__)
    env = os.environ
    parser.add_argument("--host", default=env.get("QA_HOST") or env.get("GRADIO_SERVER_NAME") or "127.0.0.1")
    parser.add_argument("--port", type=int,
                        default=int(env.get("QA_PORT") or env.get("GRADIO_SERVER_PORT") or "7860"))
    args = parser.parse_args()
    if problem := port_problem(args.host, args.port):
        print(f"error: {problem}", file=sys.stderr)
        raise SystemExit(2)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # Gradio's own HTTP calls, one line each
    logging.getLogger("faiss").setLevel(logging.WARNING)  # which CPU build it loads, at INFO
    try:
        config = qa.Config.from_env()
        auth = make_auth(config)  # a bad QA_AUTH or QA_AUTH_FILE stops here, before loading anything
        engine = qa.QA(config)
        count = len(engine.index.articles)  # load the model and index before serving the first user
        reader = warm_reader(engine)
    except (qa.QAError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    if warning := open_warning(args.host, auth is not None, config.uploads):
        print(warning, file=sys.stderr, flush=True)
    read_by = "the language model" if reader == "lm" else "the span reader"
    print(f"{count} articles indexed; short answers read by {read_by}. Chat: http://{args.host}:{args.port}/",
          flush=True)
    launch(build_demo(engine), config, args.host, args.port)


if __name__ == "__main__":
    main()
