"""The product as processes: app.py on a loopback port, asked through Gradio's REST API, and
`qa` commands timed or killed at a chosen moment."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

from eval.paths import ROOT

QA_BIN = str(Path(sys.executable).parent / "qa")
REQUEST_TIMEOUT = 120.0


def env_for(root: Path) -> dict[str, str]:
    """The environment of a `qa` process over root/seeds and root/index."""
    return {**os.environ, "QA_SEEDS_DIR": str(root / "seeds"), "QA_INDEX_DIR": str(root / "index"),
            "HF_HUB_OFFLINE": "1"}


def free_port() -> int:
    """A loopback port nothing listens on."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def rss_mb(pid: int) -> float:
    """A process's resident memory in MB."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def start_server(root: Path, users: dict[str, str], env: dict[str, str] | None = None,
                 timeout: float = 180.0) -> tuple[subprocess.Popen, str]:
    """app.py on a free loopback port over root/seeds and root/index; returns (process, base URL)."""
    port = free_port()
    full = {**os.environ, "QA_SEEDS_DIR": str(root / "seeds"), "QA_INDEX_DIR": str(root / "index"),
            "QA_AUTH": ",".join(f"{u}:{p}" for u, p in users.items()), "QA_UPLOADS": "1",
            "HF_HUB_OFFLINE": "1", **(env or {})}
    log = (root / "server.log").open("w")
    cmd = [sys.executable, str(ROOT / "app.py"), "--host", "127.0.0.1", "--port", str(port)]
    proc = subprocess.Popen(cmd, env=full, stdout=log, stderr=subprocess.STDOUT, cwd=ROOT)
    base = f"http://127.0.0.1:{port}/"
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise RuntimeError(f"app.py exited: {(root / 'server.log').read_text()[-2000:]}")
        try:
            if httpx.get(base + "gradio_api/info", timeout=2).status_code in (200, 401):
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.3)
    proc.kill()
    raise RuntimeError("app.py did not start in time")


def signed_in(base: str, user: str, password: str) -> httpx.Client:
    """An HTTP client holding a sign-in cookie."""
    client = httpx.Client(base_url=base, timeout=REQUEST_TIMEOUT)
    reply = client.post("login", data={"username": user, "password": password})
    if reply.status_code != 200:
        raise RuntimeError(f"sign-in as {user} failed: {reply.status_code} {reply.text[:200]}")
    return client


def ask(client: httpx.Client, question: str, history: list[str] | None = None) -> dict:
    """One /ask call through Gradio's REST API (as curl would make it: each call a new session, whose
    state the server keeps up to QA_SESSIONS); raises RuntimeError with the server's message."""
    reply = client.post("gradio_api/call/ask", json={"data": [question, history or []]})
    reply.raise_for_status()
    event_id = reply.json()["event_id"]
    event = None
    with client.stream("GET", f"gradio_api/call/ask/{event_id}") as stream:
        for line in stream.iter_lines():
            if line.startswith("event:"):
                event = line.split(":", 1)[1].strip()
            elif line.startswith("data:") and event in ("complete", "error"):
                data = json.loads(line[5:])
                if event == "error":
                    raise RuntimeError(f"/ask error: {data}")
                return data[0]
    raise RuntimeError(f"/ask stream ended without a result (last event {event})")


def timed_build(root: Path) -> float:
    """Seconds an uninterrupted `qa build` takes from start to exit."""
    began = time.monotonic()
    subprocess.run([QA_BIN, "build"], env=env_for(root), check=True, capture_output=True, timeout=600)
    return time.monotonic() - began


def kill_at(cmd: list[str], root: Path, after: float, ready: Callable[[], bool] | None = None) -> bool:
    """Start cmd, SIGKILL it after `after` seconds (or as soon as ready() holds, if given, within
    that time); True when it had already finished."""
    proc = subprocess.Popen(cmd, env=env_for(root), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + after
    try:
        while ready is not None and proc.poll() is None and not ready() and time.monotonic() < deadline:
            time.sleep(0.02)
        proc.wait(timeout=0 if ready is not None else after)
        return True
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
        proc.wait()
        return False


# Runs a command and prints the peak resident memory of it and its children (the worker) in KB.
PEAK = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
         "print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); sys.exit(code)")


def measured(cmd: list[str], root: Path) -> tuple[int, list[str], float, int]:
    """(exit code, stderr lines, seconds, peak memory MB of the command and its worker)."""
    began = time.monotonic()
    out = subprocess.run([sys.executable, "-c", PEAK, *cmd], env=env_for(root), capture_output=True,
                         text=True, timeout=900)
    lines = out.stderr.strip().splitlines()
    return out.returncode, lines[:-1], round(time.monotonic() - began, 1), int(lines[-1]) // 1024
