"""Errors a user can fix; each message names the problem and what to do."""

from __future__ import annotations


class QAError(Exception):
    """A problem the user can fix; the message is one line and says how."""


class ArticleError(QAError):
    """An article file that cannot be read."""


class IndexProblem(QAError):
    """The index is missing, corrupt, or does not match the articles or settings."""


class ModelProblem(QAError):
    """The reader's language model is not installed, or its file is truncated or corrupt."""


class MissingDependency(QAError):
    """An optional package is not installed."""


def require(module: str, extra: str) -> object:
    """Import an optional module, or raise MissingDependency saying how to install it."""
    import importlib

    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependency(
            f"{module} is not installed: run `pip install 'qa[{extra}]'` (or `make setup`)"
        ) from exc
