"""Text normalisation, one module for every stage: quotes and dashes, possessives, initials, thousands
commas, accents and small numbers, so a question, a sentence and a model's phrase compare alike."""

from __future__ import annotations

import re
import unicodedata
from functools import lru_cache

# Characters that stand for the same thing in news copy, in questions and in a model's reply.
SAME = str.maketrans({"’": "'", "‘": "'", "ʼ": "'", "“": '"', "”": '"', "„": '"', "–": "-", "—": "-",
                      "‑": "-", "\u00a0": " ", "\u2009": " ", "\u202f": " "})
POSSESSIVE = re.compile(r"['’]s\b")
_POSSESSIVE_END = re.compile(r"['’]s?$")
_INITIALS = re.compile(r"\b(?:[^\W\d_]\.){2,}")
_ARTICLE = re.compile(r"^(?:the|a|an)\s+", re.IGNORECASE)
# Small numbers news writes either way ("2" or "two", "five-year" or "5-year").
SMALL = ("zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
         "sixteen seventeen eighteen nineteen twenty").split()
_DIGITS = re.compile(r"(?<![\w.,])\d{1,2}(?![\w]|[.,]\d)")
_SPELLED = re.compile(r"\b(?:" + "|".join(SMALL) + r")\b", re.IGNORECASE)


def undotted(text: str) -> str:
    """text with initials written without their dots: "U.S." is "US", as questions write it."""
    return _INITIALS.sub(lambda m: m[0].replace(".", ""), text)


def unaccented(text: str) -> str:
    """text without accents: "Zürich" is "Zurich"."""
    text = unicodedata.normalize("NFKD", text)
    return "".join(c for c in text if not unicodedata.combining(c))


def without_possessive(word: str) -> str:
    """A word without a closing possessive: "Ghani's" is "Ghani", "Taliban’" is "Taliban"."""
    return _POSSESSIVE_END.sub("", word)


def without_article(phrase: str) -> str:
    """A phrase without its leading "the", "a" or "an"."""
    return _ARTICLE.sub("", phrase)


def key(text: str) -> str:
    """Lower case, punctuation to spaces, possessives and a leading article dropped: the form in which
    two spans that state the same thing compare equal."""
    words = re.sub(r"[^\w\s]", " ", POSSESSIVE.sub("", text.lower())).split()
    if len(words) > 1 and words[0] in {"the", "a", "an"}:
        words = words[1:]
    return " ".join(words)


def plain(text: str) -> str:
    """A sentence's words, lower case, single-spaced: two sentences that read the same compare equal."""
    return " ".join(text.lower().split())


def shown_in(text: str, seen: frozenset[str]) -> bool:
    """Whether a sentence was shown before (``seen``: ``plain`` texts): itself, a copy, or part of a
    quotation cited whole."""
    words = plain(text)
    return bool(seen) and (words in seen or any(words in s for s in seen))


@lru_cache(maxsize=1 << 14)
def folded(text: str) -> tuple[str, tuple[int, ...]]:
    """text in the form phrases are found in, and each folded character's offset in text: lower
    case, one kind of quote and dash, single spaces, no thousands commas ("1,500" is "1500") and no
    dots inside abbreviations ("U.S." is "us")."""
    out: list[str] = []
    where: list[int] = []
    same = text.translate(SAME)
    for i, ch in enumerate(same):
        if ch.isspace():
            if out and out[-1] != " ":
                out.append(" ")
                where.append(i)
            continue
        if ch == "," and 0 < i < len(same) - 1 and same[i - 1].isdigit() and same[i + 1].isdigit():
            continue
        after = same[i + 1:i + 2]
        if ch == "." and i and same[i - 1].isalpha() and (not after or after.isalpha()
                                                          or same[i - 2:i - 1] == "."):
            continue
        out.append(ch.lower())
        where.append(i)
    return "".join(out), tuple(where)


def respelled(phrase: str) -> tuple[str, str]:
    """The phrase with its small numbers spelled out, and with them in digits."""
    words = _DIGITS.sub(lambda m: SMALL[int(m[0])] if int(m[0]) < len(SMALL) else m[0], phrase)
    return words, _SPELLED.sub(lambda m: str(SMALL.index(m[0].lower())), phrase)


def contains_span(text: str, span: str) -> bool:
    """True when span's words occur in text as a run (case and punctuation ignored)."""
    words = re.findall(r"\w+", span.lower())
    return bool(words) and re.search(r"\b" + r"\W+".join(map(re.escape, words)) + r"\b",
                                     text.lower()) is not None
