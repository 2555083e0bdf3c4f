"""Find a phrase a model wrote, word for word, in the sentences it read: exact offsets, or nothing."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache

# Characters that stand for the same thing in news copy and in a model's reply.
_SAME = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "“": '"', "”": '"', "„": '"', "–": "-", "—": "-",
                       "‑": "-", "\u00a0": " ", "\u2009": " ", "\u202f": " "})
_EDGES = " \t\n\"'`*()[]{}<>.,;:!?"
_LABEL = re.compile(r"^(?:\[\d+\]\s*|(?:the\s+)?(?:short\s+)?answer(?:\s+is)?\s*[:\-]\s*)+", re.IGNORECASE)
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
# The model often writes a small number the other way from the article ("2" for "two", "five-year"
# for "5-year"): those are the same phrase, found as the article writes it.
_SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
          "sixteen seventeen eighteen nineteen twenty").split()
_DIGITS = re.compile(r"(?<![\w.,])\d{1,2}(?![\w]|[.,]\d)")
_SPELLED = re.compile(r"\b(?:" + "|".join(_SMALL) + r")\b", re.IGNORECASE)
# A person's name with the first name cut to its initial ("M. Kugelman" for "Michael Kugelman").
_INITIALLED = re.compile(r"^([^\W\d_])\.\s*([^\W\d_][\w'’-]+(?:\s+[^\W\d_][\w'’-]+)*)$")


@lru_cache(maxsize=1 << 14)
def folded(text: str) -> tuple[str, tuple[int, ...]]:
    """text in the form phrases are compared in, and each folded character's offset in text.

    Lower case, one kind of quote and dash, single spaces, no thousands commas ("1,500" is
    "1500") and no dots inside abbreviations ("U.S." is "us").
    """
    out: list[str] = []
    where: list[int] = []
    text_t = text.translate(_SAME)
    for i, ch in enumerate(text_t):
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        if ch == "," and 0 < i < len(text_t) - 1 and text_t[i - 1].isdigit() and text_t[i + 1].isdigit():
            continue
        after = text_t[i + 1:i + 2]
        if ch == "." and i and text_t[i - 1].isalpha() and (not after or after.isalpha()
                                                            or text_t[i - 2:i - 1] == "."):
            continue
        out.append(ch.lower())
        where.append(i)
    return "".join(out), tuple(where)


def clean(phrase: str) -> str:
    """The model's reply as a bare phrase: no "Answer:" label, marker, quotes or closing stop."""
    phrase = phrase.strip().splitlines()[0] if phrase.strip() else ""
    phrase = _LABEL.sub("", phrase).strip(_EDGES)
    return phrase


def respelled(phrase: str) -> tuple[str, str]:
    """The phrase with its small numbers spelled out, and with them in digits."""
    words = _DIGITS.sub(lambda m: _SMALL[int(m[0])] if int(m[0]) < len(_SMALL) else m[0], phrase)
    return words, _SPELLED.sub(lambda m: str(_SMALL.index(m[0].lower())), phrase)


def initialled(phrase: str) -> tuple[str, str] | None:
    """The initial and the rest of a name written with its first name as an initial, or None."""
    m = _INITIALLED.match(clean(phrase))
    return (m[1], m[2]) if m and m[1].isupper() and m[2][:1].isupper() else None


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


def locate_all(phrase: str, sentences: Sequence[str]) -> list[tuple[int, int, int]]:
    """(which sentence, start, end) of the phrase in each sentence that holds it word for word,
    the offsets into that sentence's own text; the phrase without a leading article, or with its
    small numbers written the other way, if need be."""
    phrase = clean(phrase)
    bare = _ARTICLE.sub("", phrase)
    for attempt in dict.fromkeys(t for t in (phrase, bare, *respelled(phrase), *respelled(bare)) if t):
        needle = folded(attempt)[0].strip(" ")
        if not needle or not any(ch.isalnum() for ch in needle):
            continue
        found = []
        for n, sentence in enumerate(sentences):
            text, where = folded(sentence)
            at = _find(needle, text)
            if at >= 0:
                end = where[at + len(needle) - 1] + 1
                if sentence[end:end + 1] == "." and sentence[end - 2:end - 1] == ".":
                    end += 1  # the closing dot of an abbreviation ("U.S.") is part of it
                found.append((n, where[at], end))
        if found:
            return found
    return []


def locate(phrase: str, sentences: Sequence[str]) -> tuple[int, int, int] | None:
    """The phrase in the first sentence that holds it word for word, or None."""
    found = locate_all(phrase, sentences)
    return found[0] if found else None
