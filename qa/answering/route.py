"""Which composer answers each kind of question (qa/question/forms.py), and which reader reads for it."""

from __future__ import annotations

from qa.answering.compose import BySentences, Composer
from qa.answering.shapes import Broad, Definition, Listing, Next, YesNo
from qa.answering.sides import Comparison
from qa.config import Answering

COMPOSERS: dict[str, type[Composer]] = {
    "factoid": Composer, "why": BySentences, "how": BySentences, "said": BySentences,
    "overview": Broad, "summary": Broad, "list": Listing, "next": Next, "define": Definition,
    "compare": Comparison, "yesno": YesNo,
}
# The reader each kind reads with: the phrase reader (the language model, else the span reader),
# the verdict reader, or none (its sentences are chosen, not read).
READS = {"factoid": "phrase", "why": "phrase", "how": "phrase", "said": "phrase", "yesno": "verdict"}


def composer_for(kind: str, policy: Answering) -> Composer:
    """The composer of a question's kind."""
    return COMPOSERS.get(kind, Composer)(policy)
