"""Question analysis: what a question asks for, parsed once per answer by rules over its words.

Enters: the question as asked and its standalone form (a follow-up resolved by
``qa.retrieval.followup``). Leaves: an ``Asked`` (``parse.py``): its kind, the span labels that
answer it (``kinds.py``), its terms and the names and numbers it hinges on.
"""

from qa.question.parse import Asked, ask, parse

__all__ = ["Asked", "ask", "parse"]
