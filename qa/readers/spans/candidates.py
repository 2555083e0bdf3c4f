"""Candidate answer spans of a sentence: its entities and noun chunks, trimmed to what they name."""

from __future__ import annotations

import re
from dataclasses import replace

from qa import rules
from qa.readers.base import Candidate
from qa.text.nlp import NOUN_CHUNK, Span
from qa.text.normalise import key as normalise
from qa.text.words import STOPWORDS, tokenize

# Words that open a span without being part of what it names ("the Wilson Center", "his decree").
_OPENERS = frozenset("the a an this that these those his her its their our my your some any".split())
_PRONOUNS = frozenset("he she it they we i you him them us me who whom which what that this those these "
                      "there here one ones someone something anyone anything everyone everything".split())
_EDGE = " \t\n,.;:!?\"“”‘’'()[]{}-–—"
_WORDS = re.compile(r"\S+")
# Labels of proper names, and the lower-case particles names open with ("de Gaulle", "al-Assad").
_NAMES = frozenset("PERSON NORP FAC ORG GPE LOC PRODUCT EVENT WORK_OF_ART LAW".split())
_PARTICLES = frozenset("de da di du del della der den van von la le el al bin ibn ben".split())
_NUMERIC = frozenset({"CARDINAL", "QUANTITY", "MONEY", "PERCENT"})
_AMOUNT = (r"((?:(?:about|around|roughly|nearly|almost|over|some|from)\s+)?"
           r"\S*?\d[\d,.]*(?:\s+(?:million|billion|trillion|percent))?%?)")
# The amount itself: currency, digits, a scale word or a percent sign.
_CORE = re.compile(r"(?:[$€£]\s?)?\d[\d,.]*\d?(?:\s?%|\s+(?:thousand|million|billion|trillion|percent)\b)?")
_JOIN = re.compile(r"\s*(?:,|,?\s+and|&)\s+(?:the\s+)?")
_RANGE = re.compile(_AMOUNT + r"\s+(?:to|and|-|–)\s+" + _AMOUNT)


def _said(word: tuple[int, int, frozenset[str], bool], terms: frozenset[str]) -> bool:
    """A lower-case word whose stems the question holds ("agency" for "which news agency")."""
    return word[3] and bool(word[2]) and word[2] <= terms


def without_question_words(c: Candidate, text: str, offset: int, terms: frozenset[str]) -> Candidate:
    """A noun chunk without the common nouns the question says at its edges, when a name is
    left: "AFP news agency" -> "AFP", "Helmand province" -> "Helmand"."""
    words = c.words
    if not rules.on("spans.question_words") or not words or not (_said(words[0], terms)
                                                                  or _said(words[-1], terms)):
        return c
    lo, hi = 0, len(words)
    while lo < hi and _said(words[lo], terms):
        lo += 1
    if _said(words[-1], terms):
        # The question's head noun closes the span: the common nouns before it go with it
        # ("AFP news agency" for "which agency" -> "AFP").
        while hi > lo and (_said(words[hi - 1], terms) or words[hi - 1][3]):
            hi -= 1
    if lo == hi:
        return c
    a, b = trim(text, words[lo][0], words[hi - 1][1])
    span = text[a:b]
    if b <= a or not normalise(span) or not (span[0].isupper() or span[0].isdigit()):
        return c
    return replace(c, start=offset + a, end=offset + b, text=span, key=normalise(span),
                   terms=frozenset(tokenize(span)), proper=span[0].isupper() or span[0].isdigit(), words=())


def trim(text: str, start: int, end: int) -> tuple[int, int]:
    """Narrow [start, end) of text past edge punctuation, openers and a trailing possessive."""
    while start < end and text[start] in _EDGE:
        start += 1
    while end > start and text[end - 1] in _EDGE:
        end -= 1
    first = _WORDS.match(text, start)
    while rules.on("spans.openers") and first and first.end() < end and first.group().lower() in _OPENERS:
        start = first.end() + 1
        while start < end and text[start].isspace():
            start += 1
        first = _WORDS.match(text, start)
    if text[start:end].endswith(("’s", "'s")) and end - start > 2:
        end -= 2
    return start, end


@rules.cached(1 << 14)
def sentence_candidates(text: str, offset: int, spans: tuple[Span, ...]) -> tuple[Candidate, ...]:
    """The candidates of one sentence (text starts at article offset ``offset``), cached."""
    seen: set[tuple[int, int]] = set()
    out: list[Candidate] = []
    # Entities before noun chunks, so a span that is both keeps its entity label.
    for a, b, label, role, c, d in sorted(spans, key=lambda s: (s[2] == NOUN_CHUNK, s[0])):
        a, b = trim(text, a - offset, b - offset)
        if label in _NAMES and rules.on("spans.name_start"):
            a = _past_lowercase(text, a, b)
        if b <= a or (a, b) in seen:
            continue
        key = normalise(text[a:b])
        if not key or not any(ch.isalnum() for ch in text[a:b]) or (rules.on("spans.pronouns") and (
                (key in _PRONOUNS or key in STOPWORDS) and not text[a:b].isupper())):  # "US" is a name
            continue
        for x, y in [(a, b), *_amounts(text, a, b, label), *_unmodified(text, a, b, label)]:
            if (x, y) not in seen:
                seen.add((x, y))
                out.append(_candidate(text, offset, x, y, label, role, (c - offset, d - offset)))
    for x, y, first in _coordinated(text, out, offset) if rules.on("spans.coordinated") else ():
        if (x, y) not in seen:
            seen.add((x, y))
            out.append(_candidate(text, offset, x, y, first.label, first.role, first.clause))
    return tuple(out)


def _candidate(text: str, offset: int, a: int, b: int, label: str, role: str,
               clause: tuple[int, int]) -> Candidate:
    span = text[a:b]
    words = tuple((m.start(), m.end(), frozenset(tokenize(m.group())), m.group()[:1].islower())
                  for m in _WORDS.finditer(text, a, b))
    return Candidate(offset + a, offset + b, label, role, clause, span, normalise(span),
                     frozenset(tokenize(span)), span[0].isupper() or span[0].isdigit(), words)


def _coordinated(text: str, found: list[Candidate], offset: int) -> list[tuple[int, int, Candidate]]:
    """Runs of same-label candidates joined by "and" or commas ("the US, Japan and India"): a
    question may ask for all of them."""
    runs: list[list[Candidate]] = []
    for cand in sorted((c for c in found if c.label != NOUN_CHUNK or c.proper), key=lambda c: c.start):
        last = runs[-1][-1] if runs else None
        if (last is not None and last.label == cand.label and last.end <= cand.start
                and _JOIN.fullmatch(text, last.end - offset, cand.start - offset)):
            runs[-1].append(cand)
        else:
            runs.append([cand])
    return [(run[0].start - offset, run[-1].end - offset, run[0]) for run in runs if len(run) > 1]


def _past_lowercase(text: str, a: int, b: int) -> int:
    """The start of a name past lower-case words the tagger took in ("bar al-Qaeda" -> "al-Qaeda")."""
    while (m := _WORDS.match(text, a)) and m.end() < b:
        word = m.group()
        if word.lower() != word or word in _PARTICLES or not any(ch.isupper() for ch in text[m.end():b]):
            break
        a = m.end() + 1
    return a


def _unmodified(text: str, a: int, b: int, label: str) -> list[tuple[int, int]]:
    """A noun chunk without its first word when that is a lower-case modifier ("free Covid-19 tests")."""
    if label != NOUN_CHUNK or not rules.on("spans.unmodified"):
        return []
    first = _WORDS.match(text, a)
    if not first or first.end() >= b or not first.group()[:1].islower():
        return []
    rest = first.end() + 1
    return [(rest, b)] if rest < b else []


def _amounts(text: str, a: int, b: int, label: str) -> list[tuple[int, int]]:
    """Narrower spans of a number the tagger took with more: each end of a range ("about 12,000
    to 8,600"), and the bare amount of a hedged one ("up to 100,000", "about $128 million")."""
    if label not in _NUMERIC or not rules.on("spans.amounts"):
        return []
    m = _RANGE.fullmatch(text, a, b)
    parts = [(m.start(1), m.end(1)), (m.start(2), m.end(2))] if m else [(a, b)]
    out = [part for part in parts if part != (a, b)]
    for x, y in parts:
        core = _CORE.search(text, x, y)
        if core and (core.start(), core.end()) != (x, y):
            out.append((core.start(), core.end()))
    return out
