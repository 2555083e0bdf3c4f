"""The short answer that the best sentences agree on, voted across sentences and articles."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from . import places
from .lexical import STOPWORDS
from .short import CALENDAR, LEADING, WHICH_NOUN, answer_type, focus, spans

_POSSESSOR = re.compile(r"^(?:[A-Z][\w.-]*\s)*?[A-Z][\w.-]*[’']s\s+(?=[A-Z])")
_COMPANY = frozenset("Co Corp Inc Ltd LLC plc PLC Group".split())
SCORE_SCALE = 0.1  # a sentence scoring this much below the best counts 1/e as much
PER_SENTENCE = 0.9  # a sentence votes for spans at least this close, relative to its closest
SOURCE_BONUS = 0.2  # per extra article stating the same span
# Names that news text mentions everywhere (bylines, agencies, nationalities), rarely the answer.
_BOILERPLATE = frozenset(
    "ap|associated press|reuters|cnn|cnn business|usa today|the guardian|bbc|afp|getty images|us|u s|"
    "american|americans|british|european|russian|chinese|ukrainian|french|german|english|"
    "facebook|twitter|instagram|youtube|tiktok|google".split("|"))


def pick_short(question: str, sentences: Sequence[tuple[str, float, str]]) -> tuple[str, int] | None:
    """The span the best sentences agree on, and the index of the sentence that states it best.

    sentences are (text, score, source), best first. A name or number stated near the
    question's terms in several sentences, from several articles, beats one stated once.
    """
    kind = answer_type(question)
    if kind == "other" or not sentences:
        return None
    top = sentences[0][1]
    common = _common_words(s[0] for s in sentences)
    wanted = places.place_kind(focus(question)) if kind == "place" else None
    found = WHICH_NOUN.search(focus(question))
    noun = found.group(1).lower() if found else None
    totals: dict[str, float] = {}
    sources: dict[str, set[str]] = {}
    where: dict[str, tuple[float, int, str]] = {}
    for i, (text, score, source) in enumerate(sentences):
        weight = math.exp((score - top) / SCORE_SCALE)
        kept: list[tuple[str, str, float]] = []
        for span, close in spans(question, text, kind):
            span = _POSSESSOR.sub("", span)  # "California's Yosemite National Park"
            words = span.split()
            while len(words) > 1 and (words[0].lower() in common or words[0] in LEADING
                                      or words[0].lower() in STOPWORDS):
                words = words[1:]  # "Although Pitt", "On Tuesday", "Since Sarina Wiegman"
            while len(words) > 1 and (words[-1].lower() in STOPWORDS or CALENDAR.match(words[-1])
                                      or words[-1].rstrip(".") in _COMPANY):
                words = words[:-1]  # "Denver Broncos Tuesday", "Walmart That"
            span = " ".join(words)
            if wanted:
                span = places.DEMONYMS.get(span.lower(), span)  # "Japanese" answers "which nation"
            if (" " not in span and (span.lower() in common or span.lower() in STOPWORDS)
                    or CALENDAR.match(span)):
                continue
            if wanted and not places.is_place(span, wanted):
                # "Gustavo Petro of Colombia": the place may close a longer name.
                span = span.rsplit(" of ", 1)[-1]
                if not places.is_place(span, wanted):
                    continue
            key = " ".join(re.findall(r"\w+", span.lower()))
            place = places.is_place(span)
            if key in _BOILERPLATE and not (kind == "place" and place):
                continue
            if noun and _names_noun(text, span, noun):
                close *= 2.0  # "Southwest Airlines" for "which airline", "the Lightning team"
            if kind == "place" and place:
                close *= 2.0  # a known place name is the likeliest answer to "where"
            elif kind in {"person", "name"} and place:
                close *= 0.5
            kept.append((key, span, close))
        # Each sentence votes for its own best spans: a name it only mentions in passing
        # ("the Taliban" in every sentence of a story about them) is not what it answers.
        best_close = max((c for _, _, c in kept), default=0.0)
        for key, span, close in kept:
            if close < PER_SENTENCE * best_close:
                continue
            totals[key] = totals.get(key, 0.0) + weight * close
            sources.setdefault(key, set()).add(source)
            if weight * close > where.get(key, (-1.0, 0, ""))[0]:
                where[key] = (weight * close, i, span)
    if not totals:
        return None
    if kind == "person":
        _merge_surnames(totals, sources)

    def value(key: str) -> float:
        return totals[key] * (1 + SOURCE_BONUS * (len(sources[key]) - 1))

    best = max(totals, key=lambda k: (value(k), -where[k][1]))
    return where[best][2], where[best][1]


def _merge_surnames(totals: dict[str, float], sources: dict[str, set[str]]) -> None:
    """Count "Ghani" for "Ashraf Ghani"; a lone word with no full name ("Taliban") counts half."""
    for key in [k for k in totals if " " not in k]:
        full = [k for k in totals if k.endswith(" " + key)]
        if full:
            name = max(full, key=lambda k: totals[k])
            totals[name] += totals[key]
            sources[name] |= sources[key]
            del totals[key]
        else:
            totals[key] *= 0.5


def _names_noun(sentence: str, span: str, noun: str) -> bool:
    """True when the span holds the question's noun or sits right before or after it."""
    stem = noun[:-3] if noun.endswith("ies") else noun.rstrip("s")
    at = sentence.find(span)
    near = sentence[max(0, at - 20): at + len(span) + 20].lower() if at >= 0 else span.lower()
    return re.search(rf"\b{re.escape(stem[:-1] if stem.endswith('y') else stem)}", near) is not None


def _common_words(texts: Iterable[str]) -> set[str]:
    """Words the texts also write in lower case mid-sentence: "Almost" opening a sentence is no name."""
    return {w for t in texts for w in re.findall(r"(?<=\s)[a-z][a-z’'-]+", t)}
