"""Sentence splitting with exact character offsets, using no downloaded data."""

from __future__ import annotations

import re
from functools import lru_cache

from qa.articles.load import headline

# A line that ends without terminal punctuation, followed by a line that starts in
# lower case, is one sentence broken across two lines ("or\nthose whose ...").
_SOFT_BREAK = re.compile(r"(?<=[^.!?:;\"”’'\s])\n(?=[ \t]*[a-z(])")
_HARD_BREAK = re.compile(r"\n+")
# How sentences are split, kept with an index so that one split otherwise is rebuilt (2: a piece cut
# after an abbreviation is glued back).
SPLITTING = 2

# A piece opening with one of these goes on the sentence before it; "iPhone", "eBay" and a web address
# open sentences of their own.
_CONTINUATION = re.compile(r"[,;:)\]]|(?!https?:|www\.)[a-z](?![a-z]*[A-Z])")
_DASH = re.compile(r"[\u2014\u2013]|-{1,2}\s")
_DATELINE = re.compile(r"[A-Z][A-Z.'-]+(?: [A-Z][A-Z.'-]+)*, [A-Z][\w. ]{0,12}\.$")  # "PARKERSBURG, W. Va."
_CLOCK = re.compile(r"\b[ap]\.m\.$", re.IGNORECASE)
_ZONE_OR_DAY = re.compile(r"(?:[ECMP][SD]?T|GMT|UTC|(?:Mon|Tues|Wednes|Thurs|Fri|Satur|Sun)day)\b")


@lru_cache(maxsize=1)
def _segmenter():  # pysbd has no type hints
    import pysbd

    return pysbd.Segmenter(language="en", clean=False, char_span=False)


@lru_cache(maxsize=8)
def split_sentences(text: str) -> tuple[tuple[int, int], ...]:
    """Return (start, end) spans of the sentences in text; text[start:end] is the sentence.

    Cached for the last few texts: a build splits each article twice (for its chunks and for
    its sentences), and pysbd is slow.
    """
    # Same-length replacement keeps every offset valid in the original text.
    flat = _SOFT_BREAK.sub(" ", text)
    spans: list[tuple[int, int]] = []
    pos = 0
    for match in [*_HARD_BREAK.finditer(flat), None]:
        block_end = match.start() if match else len(flat)
        if flat[pos:block_end].strip():
            spans.extend(_split_block(flat, pos, block_end))
        if match:
            pos = match.end()
    return tuple(spans)


def article_sentences(text: str) -> tuple[tuple[int, int], ...]:
    """The sentences of an article's text: its headline is its title, not a sentence to cite."""
    spans = split_sentences(text)
    top = headline(text)
    return spans if top is None else tuple(s for s in spans if s[0] >= top[1])


def _split_block(flat: str, start: int, end: int) -> list[tuple[int, int]]:
    """Split one paragraph-like block, locating each sentence by search from a cursor."""
    block = flat[start:end]
    cursor = 0
    spans = []
    for piece in _segmenter().segment(block):
        piece = piece.strip()
        if not piece:
            continue
        at = block.find(piece, cursor)
        if at < 0:  # pysbd changed the text; fall back to the rest of the block
            at = cursor
            piece = block[cursor:].strip()
        spans.append((start + at, start + at + len(piece)))
        cursor = at + len(piece)
    if cursor < len(block.rstrip()):
        tail = block[cursor:]
        lead = len(tail) - len(tail.lstrip())
        spans.append((start + cursor + lead, start + len(block.rstrip())))
    return _merge_fragments(flat, spans)


def _merge_fragments(flat: str, spans: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """Glue onto the sentence before a piece that cannot start a sentence: one with no letter (a stray
    quote or dash), or one the splitter cut off after an abbreviation (``_continues``)."""
    merged: list[tuple[int, int]] = []
    for span in spans:
        piece = flat[span[0] : span[1]]
        if merged and (not any(c.isalnum() for c in piece) or _continues(flat[slice(*merged[-1])], piece)):
            merged[-1] = (merged[-1][0], span[1])
        else:
            merged.append(span)
    return merged


def _continues(before: str, piece: str) -> bool:
    """Whether a piece goes on the sentence before it, cut after an abbreviation: it opens with a comma,
    a small letter or, after a dateline, a dash ("Sen. Josh Hawley, R-Mo. | , said", "LOUISVILLE, Ky. | — A",
    "No. | of strikers"), or it names the zone or day of a time ("at 8 p.m. | ET", "at 1 a.m. | Monday")."""
    if _DASH.match(piece):  # a dateline's sentence, not a byline after a sentence ("— Tom Schad")
        return bool(_DATELINE.match(before))
    if _CONTINUATION.match(piece):
        return True
    return bool(_CLOCK.search(before)) and bool(_ZONE_OR_DAY.match(piece))
