"""The engine: ``QA`` (``qa.py``) composes the library of articles and their index (``library.py``),
the language model and its queue, and the answering pipeline over the current index."""

from qa.engine.qa import QA

__all__ = ["QA"]
