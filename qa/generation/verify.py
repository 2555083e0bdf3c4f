"""Verify generated text against the retrieved passages: every sentence cited, every fact found."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from qa.index.load import Index
from qa.passage import Passage
from qa.text.sentences import split_sentences
from qa.text.words import STOPWORDS, tokenize

# A marker group: "[1]", "[1, 3]", "[2][3]"; numbers outside 1..k are treated as absent.
MARKERS = re.compile(r"\s*\[(\d+(?:\s*[,;]\s*\d+)*)\]")
_LEADING_MARKERS = re.compile(r"^(?:\s*\[\d+(?:\s*[,;]\s*\d+)*\])+[\s.!?]*")
_NUMBER = re.compile(r"\d+(?:[.,]\d+)*")
_WORD = re.compile(r"[^\W_][\w'’.-]*")
_CAPITAL = re.compile(r"\b[A-Z][\w'’.-]*")
# Spelled-out numbers the model may use for digits in the passage ("five" for "5").
_NUMBER_WORDS = {w: i for i, w in enumerate(
    "zero one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen "
    "sixteen seventeen eighteen nineteen twenty".split())}
_NUMBER_WORDS.update({"thirty": 30, "forty": 40, "fifty": 50, "sixty": 60, "seventy": 70,
                      "eighty": 80, "ninety": 90, "hundred": 100, "thousand": 1000,
                      "million": 1_000_000, "billion": 1_000_000_000})
# "one" is far more often a pronoun ("one of the ...") than a count.
_NUMBER_WORDS.pop("one")
# Capitalised only because they open the sentence: never taken for names there.
_OPENERS = STOPWORDS | {"every", "however", "yes", "both", "today", "yesterday", "meanwhile", "overall",
                        "still", "currently", "instead", "first", "finally", "later", "earlier"}

Embed = Callable[[str], np.ndarray]


@dataclass(frozen=True)
class Verified:
    """Generated text that passed: renumbered text, its exact cited sentences, what was dropped."""

    text: str
    citations: tuple[Passage, ...]
    dropped: tuple[str, ...]
    reasons: tuple[str, ...]


def _norm(word: str) -> str:
    """Fold a word for matching: lower case, no possessive 's, no dots ("U.S." == "US")."""
    word = re.sub(r"['’]s$", "", word.lower()).replace(".", "").strip("'’-")
    return word


def _words(text: str) -> set[str]:
    """Normalised words of text, hyphenated words also by their parts ("al-Qaeda", "Qaeda")."""
    out = set()
    for w in _WORD.findall(text):
        out.add(_norm(w))
        out.update(_norm(p) for p in w.split("-") if p)
    return out


def _numbers(text: str) -> set[str]:
    """Numbers in text with thousands separators dropped ("1,500" -> "1500")."""
    return {n.replace(",", "").rstrip(".") for n in _NUMBER.findall(text)}


def facts(sentence: str) -> list[str]:
    """The numbers, spelled-out numbers and capitalised words (names, months) a sentence states."""
    found = [n.replace(",", "").rstrip(".") for n in _NUMBER.findall(sentence)]
    found += [w for w in _WORD.findall(sentence.lower()) if w in _NUMBER_WORDS]
    for i, match in enumerate(_CAPITAL.finditer(sentence)):
        word = _norm(match.group())
        # The first word is capitalised anyway; only a non-function word there can be a name.
        opening = i == 0 and match.start() == len(sentence) - len(sentence.lstrip())
        if word and word != "i" and not (opening and word in _OPENERS):
            found.append(word)
    return list(dict.fromkeys(f for f in found if f))


def supports(fact: str, text: str) -> bool:
    """True when the fact (from facts()) appears in text."""
    if fact[0].isdigit():
        return fact in _numbers(text)
    if fact in _NUMBER_WORDS:
        value = _NUMBER_WORDS[fact]
        return fact in _words(text) or (value < 100 and str(value) in _numbers(text)) or (
            value >= 100 and any(value <= float(n) < value * 1000 for n in _numbers(text)
                                 if n.replace(".", "", 1).isdigit()))
    return fact in _words(text)


def split_generated(text: str) -> list[tuple[str, list[int]]]:
    """The generated text as (sentence without markers, marker numbers), markers glued back on."""
    pieces: list[str] = []
    for start, end in split_sentences(text):
        piece = text[start:end]
        # Markers after the full stop ("... day. [1] Next ...") belong to the sentence before.
        lead = _LEADING_MARKERS.match(piece)
        if pieces and lead:
            pieces[-1] += " " + lead.group()
            piece = piece[lead.end():]
        if piece.strip():
            pieces.append(piece)
    out = []
    for piece in pieces:
        numbers = [int(n) for group in MARKERS.findall(piece) for n in re.split(r"[,;]", group)]
        claim = " ".join(MARKERS.sub("", piece).split())
        claim = re.sub(r"\s+([.,;:!?])", r"\1", claim)
        # A marker put before the full stop leaves "begin,." behind once it is taken out.
        claim = re.sub(r"[,;:]+(?=[\"”’')]*[.!?])", "", claim)
        if claim:
            out.append((claim, list(dict.fromkeys(numbers))))
    return out


def passage_sentences(index: Index, passage: Passage) -> list[int]:
    """The index's precomputed sentences that lie inside a passage."""
    spans = index.sent_spans
    inside = np.flatnonzero((spans[:, 0] >= passage.start) & (spans[:, 1] <= passage.end))
    return [int(i) for i in inside if index.sent_sources[i] == passage.source]


def verify(text: str, passages: Sequence[Passage], index: Index, embed: Embed | None = None) -> Verified:
    """Keep the sentences whose markers cite passages holding all their facts; cite exact sentences.

    Markers are renumbered in order of first use; each cited passage contributes its sentence
    most like the claim, plus further sentences only when needed to hold every fact.
    """
    kept: list[str] = []
    dropped: list[str] = []
    reasons: list[str] = []
    order: dict[int, int] = {}  # index sentence id -> citation number
    for claim, numbers in split_generated(text):
        cited = [passages[n - 1] for n in numbers if 1 <= n <= len(passages)]
        reason, chosen = _check(claim, cited, index, embed)
        if reason:
            dropped.append(claim)
            reasons.append(reason)
            continue
        for sid in chosen:
            order.setdefault(sid, len(order) + 1)
        kept.append(claim + " " + "".join(f"[{order[sid]}]" for sid in dict.fromkeys(chosen)))
    citations = tuple(index.citation(sid) for sid in order)
    return Verified(" ".join(kept), citations, tuple(dropped), tuple(reasons))


def _check(claim: str, cited: list[Passage], index: Index, embed: Embed | None) -> tuple[str, list[int]]:
    """("", chosen sentence ids) when the claim is supported, else (reason, [])."""
    if not cited:
        return "cites no retrieved passage", []
    wanted = facts(claim)
    for fact in wanted:
        if not any(supports(fact, p.text) for p in cited):
            return f"{fact!r} is in no passage it cites", []
    vector = embed(claim) if embed is not None else None
    terms = set(tokenize(claim))
    chosen: list[int] = []
    for passage in dict.fromkeys(cited):
        ids = passage_sentences(index, passage)
        if not ids:
            continue
        # Facts this passage holds go into its cited sentences; the best-matching sentence first.
        need = [f for f in wanted if supports(f, passage.text)]
        ranked = sorted(ids, key=lambda i: -_similarity(index, i, terms, vector, need))
        picked = [ranked[0]]
        for fact in need:
            if not any(supports(fact, index.sentence_text(i)) for i in picked):
                holder = next((i for i in ranked if supports(fact, index.sentence_text(i))), None)
                if holder is None:  # the fact straddles two sentences of the passage
                    return f"{fact!r} is in no single sentence of the passage it cites", []
                picked.append(holder)
        chosen.extend(i for i in picked if i not in chosen)
    if not chosen:
        return "its passages hold no indexed sentence", []
    if terms and not any(terms & set(tokenize(index.sentence_text(i))) for i in chosen):
        return "shares no content word with the sentences it cites", []
    return "", chosen


def _similarity(index: Index, sid: int, terms: set[str], vector: np.ndarray | None,
                need: list[str]) -> float:
    """How well sentence sid supports a claim: facts held, cosine, share of claim terms."""
    text = index.sentence_text(sid)
    held = sum(supports(f, text) for f in need) / len(need) if need else 0.0
    overlap = len(terms & set(tokenize(text))) / len(terms) if terms else 0.0
    cosine = float(index.sent_vectors[sid] @ vector) if vector is not None else 0.0
    return held + cosine + overlap
