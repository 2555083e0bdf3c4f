"""Lexical matching: one tokenizer for BM25 (bm25s) and for sentence-level term overlap."""

from __future__ import annotations

import re
import unicodedata

WORD = re.compile(r"[^\W_]+(?:[.,][0-9]+)*", re.UNICODE)  # a word, or a number with its , and .
STOPWORDS = frozenset(
    """a about above after again against all am an and any are as at be because been before being
    below between both but by can could did do does doing down during each few for from further
    had has have having he her here hers herself him himself his how i if in into is it its itself
    just me more most my myself no nor not now of off on once only or other our ours ourselves out
    over own same she should so some such than that the their theirs them themselves then there
    these they this those through to too under until up very was we were what when where which
    while who whom why will with would you your yours yourself yourselves also said says say
    according many much get got did does tell told""".split()
)


_POSSESSIVE = re.compile(r"['’]s\b")


def _fold(text: str) -> str:
    """Lower-case, drop possessive 's, strip accents so variant forms compare equal."""
    text = unicodedata.normalize("NFKD", _POSSESSIVE.sub("", text.lower()))
    return "".join(c for c in text if not unicodedata.combining(c))


def stem(word: str) -> str:
    """A light English suffix stripper: enough to match prisoner/prisoners, release/released."""
    if word[0].isdigit() or len(word) <= 3:
        return word.replace(",", "")
    for suffix, keep in (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""), ("e", "")):
        if word.endswith(suffix) and len(word) - len(suffix) >= 3 and not word.endswith("ss"):
            return word[: -len(suffix)] + keep
    return word


def tokenize(text: str) -> list[str]:
    """Content-word stems of text, in order; numbers keep their digits ("1,500" -> "1500")."""
    return [stem(w) for w in WORD.findall(_fold(text)) if w not in STOPWORDS]


