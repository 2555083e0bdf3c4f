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


_QUESTION_WORDS = frozenset({"who", "whom", "whose", "what", "when", "where", "which", "why", "how"})
# Function words of other languages written in Latin letters (es, fr, de, it, pt, nl).
_FOREIGN = frozenset("""el la los las del por para que qué cuántos cuántas quién dónde cómo es son
    le les des du est qui quoi combien où comment une dans wer wie viele wo warum ist sind der die das
    und nicht il di che chi dove quanti sono o os da do dos em quem onde quantos het een wat waar""".split())
_POSSESSIVE = re.compile(r"['’]s\b")
_INITIALS = re.compile(r"\b(?:[^\W\d_]\.){2,}")


def undotted(text: str) -> str:
    """text with initials written without their dots: "U.S." is "US", as questions write it."""
    return _INITIALS.sub(lambda m: m[0].replace(".", ""), text)


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


def looks_english(text: str) -> bool:
    """A cheap guess: mostly Latin letters, and (from three words on) some English function word."""
    letters = [c for c in text if c.isalpha()]
    if not letters:
        return True
    latin = sum(c.isascii() or "\u00c0" <= c <= "\u024f" for c in letters)
    if latin < len(letters) / 2:
        return False
    words = WORD.findall(text.lower())
    if len(words) < 3 or any(w in STOPWORDS or w in _QUESTION_WORDS for w in words):
        return True
    # No English function word: foreign when one of theirs, or an accented letter, shows it.
    return not (any(w in _FOREIGN for w in words) or any(not c.isascii() for c in letters))
