"""The module-level API: qa.retrieve and qa.answer over one process-wide engine."""

from __future__ import annotations

import threading
from collections.abc import Sequence

from qa.answer import Answer
from qa.engine import QA
from qa.passage import Passage
from qa.retrieval.retrieve import Mode

_default: QA | None = None


_default_lock = threading.Lock()


def default_qa() -> QA:
    """The process-wide engine, configured from ``QA_*`` variables."""
    global _default
    with _default_lock:
        if _default is None:
            _default = QA()
        return _default


def retrieve(question: str, k: int = 5, mode: Mode = "hybrid", since: object = None,
             until: object = None) -> list[Passage]:
    """The k passages of the articles (dated since..until, YYYY-MM-DD, if given) that best match."""
    return default_qa().retrieve(question, k, mode, since, until)


def answer(question: str, history: Sequence[object] | None = None) -> Answer:
    """A short cited answer to the question, or an honest "the articles don't cover this"."""
    return default_qa().answer(question, history)
