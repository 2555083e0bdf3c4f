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

    shown = reading.best if span is not None else None

    def updates(sentence: int) -> bool:
        # Another date's sentence tells what became of the lead's fact when it says nearly the same
        # and, against a shown short answer, names another of its kind that would be shown in its
        # place ("300" for the lead's "100"). A shown short answer's fact is the only one cited
        # beside its rivals (group_facts), so the rival alone can take the lead from it: any
        # newer sentence with a span did, and hid the model's right phrase on 0.04 of RealTime QA
        # 2022 ("That's how much plastic in the US is actually recycled" over "only around 9%").
        if float(vectors[sentence] @ vectors[lead.sentence]) < policy.similar_rival:
            return False
        return shown is None or any(
            s.sentence == sentence and s.p >= policy.rival_short
            and s.candidate.label == shown.candidate.label and s.candidate.key != shown.candidate.key
            for s in reading.spans)

    rivals = [s for s in scored[1:policy.fact_window]
              if s.score >= policy.near * best and s.sentence not in cited
              and (d := _date(index, s.sentence)) is not None and d != newest
              and (updates(s.sentence) if shown is not None or lead.short is None
                   else _span(reading, s.sentence, 0.0) is not None)]
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
