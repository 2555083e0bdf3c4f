"""Whether the evidence covers a question: the names it hinges on, and a span of the kind it asks for."""

from __future__ import annotations

from collections.abc import Iterable
from functools import lru_cache

from qa.index.load import Index
from qa.reading.question import STRICT, Asked
from qa.text.words import WORD

PREFIX = 4  # "Afghan" covers "Afghanistan", "Iran" covers "Iranian": a shared stem of this many letters


@lru_cache(maxsize=1 << 12)
def _words(text: str) -> frozenset[str]:
    """Lower-cased words of a passage; numbers without their thousands commas."""
    return frozenset(w.replace(",", "") if w[0].isdigit() else w for w in WORD.findall(text.lower()))


def _covered(hinge: str, words: frozenset[str]) -> bool:
    hinge = hinge.lower()
    if hinge in words:
        return True
    if hinge[0].isdigit() or len(hinge) < PREFIX:
        return False
    return any(w.startswith(hinge) or (len(w) > PREFIX and hinge.startswith(w) and len(hinge) - len(w) <= 5)
               for w in words if w[:2] == hinge[:2])


def missing(asked: Asked, texts: Iterable[str]) -> list[str]:
    """The question's names and numbers that none of the texts mention."""
    words = frozenset().union(*(_words(t) for t in texts))
    return [h for h in asked.hinges if not _covered(h, words)]


def lacks_kind(asked: Asked, index: Index, sentences: Iterable[int]) -> bool:
    """True when the question asks for a count, sum or share and no sentence holds one."""
    if asked.kind not in STRICT:
        return False
    return not any(span[2] in asked.labels for sid in sentences for span in index.annotations.of(sid))
