"""Converting files under limits, as document converters in production do.

Plain text is read here: its text is its bytes. Every other format's converter runs in a worker
process (``qa/articles/worker.py``) whose address space and CPU time per file are capped, and
whose text is capped in characters (the converters stop as soon as they pass it), so a crafted
file (a compressed Word or PDF bomb) is refused with one line in seconds and never holds more
than the worker's memory. One worker serves every file of a build in turn; a worker that broke a
limit is replaced for the next file.
"""

from __future__ import annotations

import json
import logging
import os
import select
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

from qa.articles.converters import MAX_TEXT_CHARS, Extracted
from qa.articles.converters.registry import converter, module_for
from qa.articles.worker import write_frame
from qa.errors import ArticleError

log = logging.getLogger(__name__)

# Address space of a worker: Python and the format libraries take about 200 MB of it.
MEMORY_BYTES = 1 << 30
CPU_SECONDS = 30
# The worker is killed when a file takes this long by the clock (a loaded machine, a stuck read).
WALL_SECONDS = 3 * CPU_SECONDS
# Workers converting at once in this process, each up to MEMORY_BYTES (uploads come in parallel).
_SLOTS = threading.BoundedSemaphore(2)
_ROOT = str(Path(__file__).resolve().parent.parent.parent)
_MAIN = "from qa.articles.worker import main; main()"


class Worker:
    """A conversion worker process, started on the first file that needs one; close() ends it."""

    def __init__(self, memory: int = MEMORY_BYTES, seconds: float = CPU_SECONDS,
                 wall: float = WALL_SECONDS) -> None:
        self.memory, self.seconds, self.wall = memory, seconds, wall
        self._proc: subprocess.Popen | None = None

    def convert(self, name: str, data: bytes, limit: int = MAX_TEXT_CHARS) -> list[Extracted]:
        """The file's articles, or ArticleError with the one line saying why it is refused."""
        if module_for(name) == "plain":
            return converter(name)(name, data, limit)
        with _SLOTS:
            reply = self._ask(name, data, limit)
        if "articles" in reply:
            return [Extracted(**row) for row in reply["articles"]]
        if "refused" in reply:
            raise ArticleError(str(reply["refused"]))
        if "memory" in reply:
            self.close()
            raise ArticleError(f"{name}: reading it needs more than {self.memory >> 20:,} MB of memory "
                               "(the limit per file); it may be a compressed bomb, or save a smaller copy")
        if "slow" in reply:
            raise ArticleError(f"{name}: reading it took more than {self.seconds:g} s (the limit per file); "
                               "it may be damaged or built to be slow, or save a smaller copy")
        log.error("the converter failed on %s:\n%s", name, reply.get("bug") or reply.get("died"))
        raise ArticleError(f"{name}: could not be read (the converter failed; the log has the details)")

    def _start(self) -> subprocess.Popen:
        if self._proc is None or self._proc.poll() is not None:
            path = os.environ.get("PYTHONPATH")
            env = {**os.environ, "PYTHONPATH": _ROOT + (os.pathsep + path if path else ""),
                   "OPENBLAS_NUM_THREADS": "1", "OMP_NUM_THREADS": "1"}
            self._proc = subprocess.Popen([sys.executable, "-c", _MAIN, str(self.memory)],
                                          stdin=subprocess.PIPE, stdout=subprocess.PIPE, env=env)
        return self._proc

    def _ask(self, name: str, data: bytes, limit: int) -> dict:
        """Send one file and wait for the answer; a worker that dies or overruns is ended here."""
        proc = self._start()
        header = json.dumps({"name": name, "limit": limit, "seconds": self.seconds}).encode("utf-8")
        try:
            assert proc.stdin is not None and proc.stdout is not None
            write_frame(proc.stdin, header)
            write_frame(proc.stdin, data)
            reply = _read_frame(proc.stdout.fileno(), time.monotonic() + self.wall)
        except (BrokenPipeError, EOFError):
            reply = None
        except TimeoutError:
            self.close()
            return {"slow": True}
        if reply is not None:
            return json.loads(reply)
        code = proc.wait()
        self._proc = None
        if code == -signal.SIGXCPU:
            return {"slow": True}
        if code == -signal.SIGKILL:  # the kernel's out-of-memory killer, before the address-space limit
            return {"memory": True}
        return {"died": f"the worker exited with code {code}"}

    def close(self) -> None:
        """End the worker process, if one is running."""
        proc, self._proc = self._proc, None
        if proc is None:
            return
        if proc.stdin is not None:
            try:
                proc.stdin.close()  # the worker exits at the end of its input
            except OSError:
                pass
        try:
            proc.wait(timeout=2)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        if proc.stdout is not None:
            proc.stdout.close()

    def __enter__(self) -> Worker:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _read_frame(fd: int, deadline: float) -> bytes | None:
    """One length-prefixed message from fd before the deadline (TimeoutError), None at its end."""
    head = _read(fd, 8, deadline)
    return None if head is None else _read(fd, int.from_bytes(head, "big"), deadline)


def _read(fd: int, size: int, deadline: float) -> bytes | None:
    chunks, left = [], size
    while left:
        wait = deadline - time.monotonic()
        if wait <= 0 or not select.select([fd], [], [], wait)[0]:
            raise TimeoutError
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def convert(name: str, data: bytes, worker: Worker | None = None) -> list[Extracted]:
    """A file's articles converted under the limits, by worker or by a worker started for this file."""
    if worker is not None:
        return worker.convert(name, data)
    with Worker() as own:
        return own.convert(name, data)
