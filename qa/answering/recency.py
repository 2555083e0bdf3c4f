"""Answers over time: when dated articles answer differently, the most recent leads and says its date."""

from __future__ import annotations

from collections.abc import Sequence

from qa import rules
from qa.answering.cite import Fact, Pick
from qa.config import Answering
from qa.passage import Passage, human_date
from qa.readers.base import Reading, Span
from qa.sentences.record import Sentence


def _span(reading: Reading, sentence: Sentence, min_p: float) -> Span | None:
    """The reader's best span in one sentence, when its own probability reaches min_p."""
    return next((s for s in reading.spans if s.sentence.id == sentence.id and s.p >= min_p), None)


def may_differ(scored: Sequence[Sentence], policy: Answering) -> bool:
    """Whether the sentences an answer may cite come from articles of more than one date: only then
    are rival dated answers worth looking for."""
    if not scored or not rules.on("recency.rivals"):
        return False
    best = scored[0].score
    dates = {s.date for s in scored[:policy.fact_window] if s.score >= policy.near * best} - {None}
    return len(dates) > 1


def _rivals(scored: Sequence[Pick], facts: list[Fact], reading: Reading, span: Passage | None,
            policy: Answering) -> list[Pick]:
    """The sentences of another date that tell what became of the lead's fact."""
    cited = {p.sentence.id for group in facts for p in group}
    newest, lead = max(d for group in facts for p in group if (d := p.sentence.date)), facts[0][0]
    best = scored[0].score
    shown = reading.best if span is not None else None

    def updates(sentence: Sentence) -> bool:
        # Another date's sentence tells what became of the lead's fact when it says nearly the same
        # and, against a shown short answer, names another of its kind that would be shown in its
        # place ("300" for the lead's "100"): any newer sentence with a span hid the model's right
        # phrase on 0.04 of RealTime QA 2022.
        if sentence.similarity(lead.sentence) < policy.similar_rival:
            return False
        return shown is None or any(
            s.sentence.id == sentence.id and s.p >= policy.rival_short
            and s.candidate.label == shown.candidate.label and s.candidate.key != shown.candidate.key
            for s in reading.spans)

    return [p for p in scored[1:policy.fact_window]
            if p.score >= policy.near * best and p.sentence.id not in cited
            and (d := p.sentence.date) is not None and d != newest
            and (updates(p.sentence) if shown is not None or lead.short is None
                 else _span(reading, p.sentence, 0.0) is not None)]


def latest_first(scored: Sequence[Pick], facts: list[Fact], reading: Reading, span: Passage | None,
                 policy: Answering) -> tuple[list[Fact], Passage | None]:
    """The facts, with a dated article that answers differently added, newest first; ``reading``
    holds the rival spans (the span reader's) besides the reader's own."""
    if not rules.on("recency.rivals") or not any(p.sentence.date for group in facts for p in group):
        return facts, span
    newest = max(d for group in facts for p in group if (d := p.sentence.date))
    if rivals := _rivals(scored, facts, reading, span, policy):
        # A newer answer leads; else the older one follows, so the change over time is told.
        newer = [p for p in rivals if (p.sentence.date or "") > newest]
        rival = max(newer or rivals, key=lambda p: (p.sentence.date, p.score))
        found = _span(reading, rival.sentence, policy.rival_short)
        added = [Pick(rival.sentence, rival.score, found.candidate.text if found else None)]
        facts = [added, *facts] if newer else [*facts, added]
    if len({g[0].sentence.date for g in facts} - {None}) < 2:
        return facts, span
    facts = sorted(facts, key=lambda g: g[0].sentence.date or "", reverse=True)
    first = facts[0][0].sentence
    if span is None or span.source != first.source or not (
            first.start <= span.start < span.end <= first.passage.end):
        found = _span(reading, first, policy.rival_short)
        span = None if found is None else first.span(found.candidate.start, found.candidate.end, found.p)
    return facts, span


def dated_text(facts: list[Fact], parts: list[str]) -> list[str]:
    """Each fact's text with its article's date in front, when the facts come from different dates."""
    dates = [g[0].sentence.date for g in facts]
    if len(set(dates) - {None}) < 2 or not rules.on("recency.dated_text"):
        return parts
    out = []
    for n, (date, part) in enumerate(zip(dates, parts, strict=True)):
        when = human_date(date) or "Undated"
        out.append(f"{when} (most recent): {part}" if n == 0 else f"{when}: {part}")
    return out
