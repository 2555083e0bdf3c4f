"""The real model's replies shared by the processes of one test run: the first reading of a prompt
is always real, and a repeat (the same model file, messages and settings) in any process the tests
started is answered from a file of the run's folder, its pieces streamed again; a reading that was
stopped is never kept, and one asked to stop is read again. The `qa` commands, servers and Ray
replicas the tests start each load the model anew, so without this each repeat reads again. A
prompt is read by one process at a time: another asking it meanwhile waits, then replays it."""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import importlib.abc
import importlib.machinery
import json
import os
import pickle
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

TARGET = "qa.llm.llama"
READINGS = "readings.tsv"  # every reading of the run, read or replayed (tests/conftest.py sums it)
# Set while a runtime puts its fixed instruction into the model's cache: that reading must happen
# (the cache it fills is saved to a file and restored by later starts), so it is never replayed.
_priming = threading.local()


def key(runtime, messages, max_tokens, stop, grammar, top_logprobs) -> str:
    """The file name of a reading: what decides the reply at temperature 0."""
    said = json.dumps([runtime.name, messages, max_tokens, list(stop), grammar, top_logprobs])
    return hashlib.sha256(said.encode()).hexdigest() + ".pickle"


def read_or_replay(real, runtime, messages, max_tokens, stop, grammar, top_logprobs, on_text, give_up,
                   kept, keep) -> tuple[object, bool]:
    """(the completion, whether it was replayed): kept() is a repeat's (completion, pieces) or None;
    keep(...) is given a reading that ran to its end, never one that was stopped."""
    found = kept()
    if found is not None and not (give_up and give_up()):
        return _replay(found, on_text), True
    pieces: list[str] = []
    stopped: list[bool] = []

    def hear(piece: str) -> None:
        pieces.append(piece)
        on_text(piece)

    def asked_to_stop() -> bool:
        stopped.append(give_up())
        return stopped[-1]

    # Called as it was: a reading nobody streams or stops takes the runtime's own unstreamed path.
    completion = real(runtime, messages, max_tokens, stop, grammar, top_logprobs,
                      hear if on_text else None, asked_to_stop if give_up else None)
    if not any(stopped):
        keep((completion, tuple(pieces) or (completion.text,)))
    return completion, False


def _replay(found: tuple, on_text) -> object:
    """A kept reading's completion, its pieces streamed again to on_text."""
    completion, pieces = found
    for piece in pieces if on_text else ():
        on_text(piece)
    return completion


@contextlib.contextmanager
def claimed(path: Path, give_up) -> Iterator[None]:
    """Hold path's lock file, waiting while another process (or thread) reads the same prompt; a
    reading given up meanwhile stops waiting (the runtime then stops it at once)."""
    with open(path.with_suffix(".lock"), "a") as lock:
        while True:
            try:
                fcntl.flock(lock, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if give_up and give_up():
                    yield
                    return
                time.sleep(0.05)
        try:
            yield
        finally:
            fcntl.flock(lock, fcntl.LOCK_UN)


def replaying(real, folder: Path, replay=lambda: True, tally=lambda replayed: None):
    """LlamaRuntime.complete, answering repeats from folder (while replay() holds) and keeping what it
    reads there; tally(replayed) is told of each reading."""

    def complete(runtime, messages, max_tokens=16, stop=(), grammar=None, top_logprobs=0, on_text=None,
                 give_up=None):  # the signature of qa.llm.base.Runtime.complete
        from qa.llm.queue import current_stop

        if getattr(_priming, "on", False):
            return real(runtime, messages, max_tokens, stop, grammar, top_logprobs, on_text, give_up)
        path = folder / key(runtime, messages, max_tokens, stop, grammar, top_logprobs)

        def keep(kept: tuple) -> None:  # written whole, then renamed: a reader never sees half a file
            fd, part = tempfile.mkstemp(dir=folder, suffix=".part")
            with os.fdopen(fd, "wb") as fh:
                pickle.dump(kept, fh)
            os.replace(part, path)

        def kept() -> tuple | None:
            return pickle.loads(path.read_bytes()) if replay() and path.is_file() else None

        began, stopping = time.monotonic(), give_up or current_stop()
        # One reading of a prompt at a time across the run: a repeat asked meanwhile waits for it.
        with claimed(path, stopping) if replay() else contextlib.nullcontext():
            completion, replayed = read_or_replay(real, runtime, messages, max_tokens, stop, grammar,
                                                  top_logprobs, on_text, stopping, kept, keep)
        tally(replayed)
        log(folder, replayed, time.monotonic() - began, path.stem[:12])
        return completion

    return complete


def log(folder: Path, replayed: bool, seconds: float, prompt: str) -> None:
    """One line per reading in the run's READINGS file: read or replayed, its seconds, the test and
    the prompt's key."""
    test = os.environ.get("PYTEST_CURRENT_TEST", "").rsplit(" ", 1)[0]  # set in subprocesses too
    line = f"{'replayed' if replayed else 'read'}\t{seconds:.2f}\t{test}\t{prompt}\n"
    with open(folder / READINGS, "a", encoding="utf-8") as fh:  # one short append: lines never mix
        fh.write(line)


def priming(real):
    """LlamaRuntime._prime, with every reading it makes real."""

    def prime(runtime, *args, **kwargs):
        _priming.on = True
        try:
            return real(runtime, *args, **kwargs)
        finally:
            _priming.on = False

    return prime


class _Patcher(importlib.abc.MetaPathFinder):
    """Finds qa.llm.llama as the path finder does and patches its runtime once it has run."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder

    def find_spec(self, name, path, target=None):
        if name != TARGET:
            return None
        spec = importlib.machinery.PathFinder.find_spec(name, path)
        if spec is None or spec.loader is None:
            return spec
        run = spec.loader.exec_module
        folder = self.folder

        def exec_module(module) -> None:
            run(module)
            runtime = module.LlamaRuntime
            runtime.complete = replaying(runtime.complete, folder)
            runtime._prime = priming(runtime._prime)

        spec.loader.exec_module = exec_module  # type: ignore[method-assign]
        return spec


def install(folder: str) -> None:
    """Patch the model's runtime of this process when it is imported."""
    Path(folder).mkdir(parents=True, exist_ok=True)
    sys.meta_path.insert(0, _Patcher(Path(folder)))
