"""Errors a user can fix; each message names the problem and what to do."""

from __future__ import annotations

# What a user is told of a failure that is not theirs to fix; the server logs it in one line.
FAILED = "Something went wrong answering this question; the server log has the details."


class QAError(Exception):
    """A problem the user can fix; the message is one line and says how."""


class BadInput(QAError, ValueError):
    """A question, date, option or setting that is not valid: the user's to fix, and a ValueError
    for callers that catch those (a ValueError of any other kind is a bug, not the user's)."""


class ArticleError(QAError):
    """An article file that cannot be read."""


class IndexProblem(QAError):
    """The index is missing, corrupt, or does not match the articles or settings."""

    def __init__(self, problem: str, fix: str | None = None) -> None:
        super().__init__(f"{problem}: {fix}" if fix else problem)
        self.problem = problem  # what is wrong, without the advice (for a build already fixing it)


class ModelProblem(QAError):
    """The reader's language model is not installed, or its file is truncated or corrupt."""


class MissingDependency(QAError):
    """An optional package is not installed."""


def one_line(exc: BaseException) -> str:
    """An unexpected exception as one log line: its type, where it was raised, and its message."""
    import traceback

    frames = traceback.extract_tb(exc.__traceback__)
    where = f" at {frames[-1].filename.rsplit('/', 1)[-1]}:{frames[-1].lineno}" if frames else ""
    message = " ".join(str(exc).split())[:200]
    return f"{type(exc).__name__}{where}: {message}" if message else f"{type(exc).__name__}{where}"


def require(module: str, extra: str) -> object:
    """Import an optional module, or raise MissingDependency saying how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(
            f"{module} is not installed: run `pip install 'qa[{extra}]'` (or `make setup`)"
        ) from exc
