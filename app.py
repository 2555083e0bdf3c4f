"""Browser chat over the news articles: cited answers, sources, follow-ups, uploads, and an API."""

from __future__ import annotations

import argparse
import logging
import os
import sys

import qa
from qa.surfaces.auth import make_auth, open_warning
from qa.surfaces.chat import build_demo, launch


def main() -> None:
    """Start the chat server and print its URL."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--host", default=os.environ.get("QA_HOST", "127.0.0.1"))
    parser.add_argument("--port", type=int, default=int(os.environ.get("QA_PORT", "7860")))
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    logging.getLogger("httpx").setLevel(logging.WARNING)  # Gradio's own HTTP calls, one line each
    try:
        config = qa.Config.from_env()
        auth = make_auth(config)  # a bad QA_AUTH or QA_AUTH_FILE stops here, before loading anything
        engine = qa.QA(config)
        count = len(engine.index.articles)  # load the model and index before serving the first user
    except (qa.QAError, ValueError) as exc:
        raise SystemExit(f"error: {exc}") from None
    if warning := open_warning(args.host, auth is not None, config.uploads):
        print(warning, file=sys.stderr, flush=True)
    print(f"{count} articles indexed. Chat: http://{args.host}:{args.port}/", flush=True)
    launch(build_demo(engine), config, args.host, args.port)


if __name__ == "__main__":
    main()
