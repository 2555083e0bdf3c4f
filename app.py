"""Browser chat over the news articles: cited answers, sources, follow-ups, uploads, and an API."""

from __future__ import annotations

import argparse
import contextlib
import errno
import logging
import os
import socket
import sys

import qa
from qa.config import ReaderName
from qa.surfaces.web.auth import make_auth, open_warning
from qa.surfaces.web.chat import build_demo
from qa.surfaces.web.launch import launch


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


def env_port() -> int:
    """The port QA_PORT (or GRADIO_SERVER_PORT) names, 7860 by default; a bad one stops with one line."""
    for name in ("QA_PORT", "GRADIO_SERVER_PORT"):
        if raw := os.environ.get(name, "").strip():
            if not raw.isdigit() or not 0 < int(raw) < 65536:
                print(f"error: {name}={raw!r} is not a port: set it to a number from 1 to 65535",
                      file=sys.stderr)
                raise SystemExit(2)
            return int(raw)
    return 7860


def urls(host: str, port: int) -> list[str]:
    """Addresses a browser can open for a server listening on host: for 0.0.0.0 (or ::), this
    machine's loopback and its address on the network, not the wildcard itself."""
    if host not in ("0.0.0.0", "::", ""):
        return [f"http://{f'[{host}]' if ':' in host else host}:{port}/"]
    found = ["127.0.0.1"]
    with contextlib.suppress(OSError), socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("192.0.2.1", 9))  # no packet is sent: this only picks the outgoing interface
        found.append(probe.getsockname()[0])
    return [f"http://{address}:{port}/" for address in dict.fromkeys(found)]


def main() -> None:
    """Start the chat server and print its URL."""
    parser = argparse.ArgumentParser(description=__doc__)
    env = os.environ
    parser.add_argument("--host", default=env.get("QA_HOST") or env.get("GRADIO_SERVER_NAME") or "127.0.0.1")
    parser.add_argument("--port", type=int, default=None, help="default: QA_PORT, else 7860")
    args = parser.parse_args()
    args.port = env_port() if args.port is None else args.port
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
        reader = engine.warm()
    except (qa.QAError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    if warning := open_warning(args.host, auth is not None, config.team.uploads):
        print(warning, file=sys.stderr, flush=True)
    here, *network = urls(args.host, args.port)
    away = f" on this machine, {network[0]} from others" if network else ""
    read_by = "the language model" if reader == ReaderName.LM else "the span reader"
    print(f"{count} articles indexed; short answers read by {read_by}. Chat: {here}{away}", flush=True)
    launch(build_demo(engine), config, args.host, args.port)


if __name__ == "__main__":
    main()
