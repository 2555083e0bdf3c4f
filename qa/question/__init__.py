"""Question analysis: what a question asks for and how it is answered, once per answer.

Enters: the question as asked and the conversation before it. Leaves: a ``Question`` (``record.py``),
made by ``analyse`` (``analyse.py``): a follow-up made standalone (``followup.py``), what its words
ask for (``asking.py``, ``kinds.py``), the names and numbers it hinges on.
"""

from qa.question.analyse import analyse
from qa.question.record import Question

__all__ = ["Question", "analyse"]
