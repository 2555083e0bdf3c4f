"""Answers over time: when dated articles answer differently, the most recent leads and says its date."""

from __future__ import annotations

from collections.abc import Sequence

from qa.answering.policy import AnswerPolicy
from qa.answering.scoring import Scored
from qa.index.load import Index
from qa.passage import Passage, human_date
from qa.readers.base import Reading, Span


def _date(index: Index, sentence: int) -> str | None:
    return index.articles[index.sent_sources[sentence]].date


def _span(reading: Reading, sentence: int, min_p: float) -> Span | None:
    """The reader's best span in one sentence, when its own probability reaches min_p."""
    return next((s for s in reading.spans if s.sentence == sentence and s.p >= min_p), None)


def latest_first(index: Index, scored: Sequence[Scored], facts: list[list[Scored]], reading: Reading,
                 span: Passage | None, policy: AnswerPolicy) -> tuple[list[list[Scored]], Passage | None]:
    """The facts, with a dated article that answers differently added, newest first."""
    # The short answer follows the lead: it is taken again from the reader when the lead changed.
    cited = {s.sentence for group in facts for s in group}
    dates = [d for group in facts for s in group if (d := _date(index, s.sentence))]
    if not dates:
        return facts, span
    newest, lead = max(dates), facts[0][0]
    best = scored[0].score
    vectors = index.sent_vectors
    rivals = [s for s in scored[1:policy.fact_window]
              if s.score >= policy.near * best and s.sentence not in cited
              and (d := _date(index, s.sentence)) is not None and d != newest
              and (_span(reading, s.sentence, 0.0) is not None if lead.short is not None
                   else float(vectors[s.sentence] @ vectors[lead.sentence]) >= policy.similar_rival)]
    if rivals:
        # A newer answer leads; else the older one follows, so the change over time is told.
        newer = [s for s in rivals if (_date(index, s.sentence) or "") > newest]
        rival = max(newer or rivals, key=lambda s: (_date(index, s.sentence), s.score))
        found = _span(reading, rival.sentence, policy.rival_short)
        added = [Scored(rival.sentence, rival.score, found.candidate.text if found else None)]
        facts = [added, *facts] if newer else [*facts, added]
    leads = {_date(index, g[0].sentence) for g in facts}
    if len(leads - {None}) < 2:
        return facts, span
    facts = sorted(facts, key=lambda g: _date(index, g[0].sentence) or "", reverse=True)
    first = facts[0][0].sentence
    if span is None or span.source != index.sent_sources[first] or not (
            index.sent_spans[first][0] <= span.start < span.end <= index.sent_spans[first][1]):
        found = _span(reading, first, policy.rival_short)
        span = None if found is None else index.passage(
            index.sent_sources[first], found.candidate.text, found.candidate.start, found.candidate.end,
            round(found.p, 4))
    return facts, span


def dated_text(index: Index, facts: list[list[Scored]], parts: list[str]) -> list[str]:
    """Each fact's text with its article's date in front, when the facts come from different dates."""
    dates = [_date(index, g[0].sentence) for g in facts]
    if len(set(dates) - {None}) < 2:
        return parts
    out = []
    for n, (date, part) in enumerate(zip(dates, parts, strict=True)):
        when = human_date(date) or "Undated"
        out.append(f"{when} (most recent): {part}" if n == 0 else f"{when}: {part}")
    return out
