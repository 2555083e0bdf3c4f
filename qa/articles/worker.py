"""The conversion worker: a process that converts files under limits on its memory and CPU time.

Started by ``qa/articles/bounded.py`` with the memory limit in bytes as its argument. It takes
one request at a time on stdin (a JSON header: the file's name, the character limit and the CPU
seconds it may spend, then the file's bytes) and answers each on stdout with one JSON object:
``{"articles": [...]}``, ``{"refused": "one line"}``, ``{"memory": true}`` (it then exits), or
``{"bug": "traceback"}`` for an error in a converter itself. Every message is length-prefixed.
"""

from __future__ import annotations

import json
import resource
import struct
import sys
import traceback
from dataclasses import asdict
from typing import IO, BinaryIO

_LENGTH = struct.Struct(">Q")
# A failure with the address space this close to its limit was a failed allocation, whatever a
# library called it (libxml2 reports "Memory allocation failed" as a syntax error).
NEAR_LIMIT = 0.9


def write_frame(stream: IO[bytes], payload: bytes) -> None:
    """Write one length-prefixed message."""
    stream.write(_LENGTH.pack(len(payload)))
    stream.write(payload)
    stream.flush()


def _exactly(stream: BinaryIO, size: int) -> bytes | None:
    chunks, left = [], size
    while left:
        chunk = stream.read(left)
        if not chunk:
            return None
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(stream: BinaryIO) -> bytes | None:
    """Read one length-prefixed message; None at the end of the stream."""
    head = _exactly(stream, _LENGTH.size)
    return None if head is None else _exactly(stream, _LENGTH.unpack(head)[0])


def _peak() -> int:
    """The most address space this process has held, in bytes (Linux; 0 elsewhere)."""
    try:
        with open("/proc/self/status", encoding="ascii") as fh:
            line = next(ln for ln in fh if ln.startswith("VmPeak:"))
        return int(line.split()[1]) * 1024
    except (OSError, StopIteration, ValueError):
        return 0


def answer(request: dict, data: bytes, memory: int) -> dict:
    """Convert one file under the request's limits; the reply to send back."""
    from qa.articles.converters import too_long
    from qa.articles.converters.registry import converter
    from qa.errors import ArticleError

    name, limit = str(request["name"]), int(request["limit"])
    usage = resource.getrusage(resource.RUSAGE_SELF)
    # RLIMIT_CPU counts the whole process: this file gets `seconds` on top of what is spent so far.
    soft = int(usage.ru_utime + usage.ru_stime + float(request["seconds"])) + 1
    resource.setrlimit(resource.RLIMIT_CPU, (soft, resource.getrlimit(resource.RLIMIT_CPU)[1]))
    try:
        found = converter(name)(name, data, limit)
        if sum(len(article.text) for article in found) > limit:
            raise too_long(name, limit)
        return {"articles": [asdict(article) for article in found]}
    except MemoryError:
        return {"memory": True}
    except RecursionError:
        return {"refused": f"{name}: nested too deeply to read; save a simpler copy of it"}
    except ArticleError as exc:
        return {"memory": True} if _peak() > NEAR_LIMIT * memory else {"refused": str(exc)}
    except Exception:  # a converter's own bug: reported whole, to be logged as one
        return {"memory": True} if _peak() > NEAR_LIMIT * memory else {"bug": traceback.format_exc()}


def main() -> None:
    """Serve requests until stdin closes; stop after a file that ran out of memory."""
    memory = int(sys.argv[1])
    resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    # The hard limit too, so that nothing the converters run can raise it again.
    resource.setrlimit(resource.RLIMIT_AS, (memory, memory))
    stdin, stdout = sys.stdin.buffer, sys.stdout.buffer
    sys.stdout = sys.stderr  # a library that prints cannot garble the answers
    while (header := read_frame(stdin)) is not None:
        data = read_frame(stdin)
        if data is None:
            return
        reply = answer(json.loads(header), data, memory)
        write_frame(stdout, json.dumps(reply, ensure_ascii=False).encode("utf-8"))
        if reply.get("memory"):
            return  # a fresh process for the next file: this one's heap may be in pieces
