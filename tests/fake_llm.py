"""A tiny OpenAI-compatible server on loopback: canned streaming replies, stalls and trickles."""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer


class FakeLLM:
    """Serves POST /v1/chat/completions with `reply` streamed in `chunks` pieces, as SSE."""

    def __init__(self, reply: str = "", chunks: int = 4, stall: float = 0.0, trickle: bool = False) -> None:
        self.reply, self.chunks, self.stall, self.trickle = reply, chunks, stall, trickle
        self.requests: list[dict] = []
        self.release = threading.Event()  # set at shutdown so a stalled handler returns
        self.replied = threading.Event()  # a whole reply was sent
        self.hung_up = threading.Event()  # a client closed the connection while the reply was sent
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.server.daemon_threads = True
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def __enter__(self) -> FakeLLM:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self.server.shutdown()
        self.server.server_close()

    def pieces(self) -> list[str]:
        """The reply cut into roughly equal pieces, on word boundaries."""
        words = self.reply.split(" ")
        size = max(1, -(-len(words) // self.chunks))
        return [" ".join(words[i : i + size]) + (" " if i + size < len(words) else "")
                for i in range(0, len(words), size)]

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        fake = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:
                pass

            def do_POST(self) -> None:  # http.server's naming
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                fake.requests.append(body)
                if fake.stall and fake.release.wait(fake.stall):
                    return
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                try:
                    if fake.trickle:  # one token every 0.3 s, never finishing
                        while not fake.release.wait(0.3):
                            self._event({"content": "and "})
                    for piece in fake.pieces():
                        self._event({"content": piece})
                        time.sleep(0.01)
                    self._event({}, finish="stop")
                    self.wfile.write(b"data: [DONE]\n\n")
                    fake.replied.set()
                except (BrokenPipeError, ConnectionResetError):
                    fake.hung_up.set()

            def _event(self, delta: dict, finish: str | None = None) -> None:
                chunk = {"id": "fake", "object": "chat.completion.chunk", "created": 0, "model": "fake",
                         "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]}
                self.wfile.write(f"data: {json.dumps(chunk)}\n\n".encode())
                self.wfile.flush()

        return Handler
