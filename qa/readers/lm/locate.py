"""Find a phrase a model wrote, word for word, in the sentences it read: exact offsets, or nothing."""

from __future__ import annotations

import re
from collections.abc import Sequence

from qa import rules
from qa.text.normalise import folded, respelled, without_article

_EDGES = " \t\n\"'`*()[]{}<>.,;:!?"
_LABEL = re.compile(r"^(?:\[\d+\]\s*|(?:the\s+)?(?:short\s+)?answer(?:\s+is)?\s*[:\-]\s*)+", re.IGNORECASE)


def clean(phrase: str) -> str:
    """The model's reply as a bare phrase: no "Answer:" label, marker, quotes or closing stop."""
    phrase = phrase.strip().splitlines()[0] if phrase.strip() else ""
    if rules.on("reading.reply_labels"):
        phrase = _LABEL.sub("", phrase)
    return phrase.strip(_EDGES)


def _find(needle: str, haystack: str) -> int:
    """Where needle occurs in haystack as whole words, or -1."""
    start = 0
    while (at := haystack.find(needle, start)) >= 0:
        before = haystack[at - 1] if at else " "
        after = haystack[at + len(needle)] if at + len(needle) < len(haystack) else " "
        if not (before.isalnum() or after.isalnum()):
            return at
        start = at + 1
    return -1


def _forms(phrase: str) -> list[str]:
    """The phrase, and the forms of it the articles may write instead: without a leading article,
    with its small numbers written the other way ("2" for "two", "five-year" for "5-year")."""
    bare = without_article(phrase) if rules.on("reading.leading_article") else phrase
    forms = [phrase, bare]
    if rules.on("reading.respell_numbers"):
        forms += [*respelled(phrase), *respelled(bare)]
    return list(dict.fromkeys(t for t in forms if t))


def locate_all(phrase: str, sentences: Sequence[str]) -> list[tuple[int, int, int]]:
    """(which sentence, start, end) of the phrase in each sentence that holds it word for word,
    the offsets into that sentence's own text."""
    for attempt in _forms(clean(phrase)):
        needle = folded(attempt)[0].strip(" ")
        if not needle or not any(ch.isalnum() for ch in needle):
            continue
        found = []
        for n, sentence in enumerate(sentences):
            text, where = folded(sentence)
            at = _find(needle, text)
            if at >= 0:
                end = where[at + len(needle) - 1] + 1
                if (rules.on("reading.abbreviation_dot") and sentence[end:end + 1] == "."
                        and sentence[end - 2:end - 1] == "."):
                    end += 1  # the closing dot of an abbreviation ("U.S.") is part of it
                found.append((n, where[at], end))
        if found:
            return found
    return []


def locate(phrase: str, sentences: Sequence[str]) -> tuple[int, int, int] | None:
    """The phrase in the first sentence that holds it word for word, or None."""
    found = locate_all(phrase, sentences)
    return found[0] if found else None
