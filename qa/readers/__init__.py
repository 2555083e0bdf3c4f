"""Readers: the best sentences to the phrase that answers, or the chance that none does.

Enters: an ``Asked`` question and its scored sentences. Leaves: a ``Reading`` (``base.py``).
``spans/`` ranks entities and noun chunks (fast, the fallback); ``lm/`` asks a small language
model; ``queued.py`` puts a reader behind the model's fair queue; ``factory.py`` makes them from
the settings.
"""

from qa.readers.base import Reader, ReaderUnavailable, Reading, Span, Waiting
from qa.readers.factory import Readers, make_readers

__all__ = ["Reader", "ReaderUnavailable", "Readers", "Reading", "Span", "Waiting", "make_readers"]
