"""Composition: a Reading and the sentence records into an Answer, in the shape the question's kind
asks for. Which reader read is not composition's concern: each reading carries its own thresholds."""

from __future__ import annotations

from dataclasses import dataclass, field

from qa import rules
from qa.answer import NOT_COVERED, Answer, Trace
from qa.answering import recency
from qa.answering.cite import Fact, Pick, cited_sentences, cited_text, group_facts, lead_with_short, picks
from qa.answering.reasons import with_reason
from qa.answering.select import follows, more, shown
from qa.config import Answering
from qa.notices import say
from qa.passage import Passage
from qa.question.record import Question
from qa.readers.base import Reading
from qa.sentences.gather import Evidence
from qa.text.normalise import shown_in

NOT_IN_ENGLISH = "The question is not in English."
NOTHING_MORE = "That is all the articles say about this."
SPAN_CANDIDATES = 20  # a reader's candidates an answer's trace keeps


@dataclass(frozen=True)
class Draft:
    """What an answer is made from besides the reading: the question, its evidence, the refusal
    checks' findings and the time each step took."""

    question: Question
    evidence: Evidence
    missing: tuple[str, ...] = ()
    lacks_kind: bool = False
    timings: dict[str, float] = field(default_factory=dict)


@dataclass(frozen=True)
class Shown:
    """How a reading is shown: with a notice (a code and its values), still provisional (how many
    questions are read before it), or standing in for another reading that was not shown."""

    notice: str | None = None
    values: dict[str, str] = field(default_factory=dict)
    provisional: bool = False
    ahead: int = 0
    primary: Reading | None = None
    rivals: Reading | None = None  # the span reader's dated rivals, when they were looked for


class Composer:
    """A factoid's answer: the sentence holding the confident short answer first, then the facts
    that agree, newest first when dated articles differ."""

    lead_anyway = False  # lead with the reader's sentence even when its phrase is not shown

    def __init__(self, policy: Answering) -> None:
        self.policy = policy

    def compose(self, draft: Draft, reading: Reading, shown: Shown | None = None) -> Answer:
        """The cited answer."""
        shown = shown or Shown()
        lead_anyway = self.lead_anyway and rules.on("answering.lead_with_found")
        scored, span = lead_with_short(picks(draft.evidence.cited), reading, lead_anyway)
        rivals = reading.with_rivals(shown.rivals) if shown.rivals else reading
        facts = group_facts(scored, self.policy)
        facts, span = recency.latest_first(scored, facts, rivals, span, self.policy)
        notice, values = shown.notice, shown.values
        if not shown.provisional:
            if span is None and notice is None:
                notice = self.unshown(reading)
            facts = self.complete(draft, reading, facts, scored)
        return answer_of(draft, reading, facts, span, Shown(notice, values, shown.provisional, shown.ahead,
                                                            shown.primary))

    def unshown(self, reading: Reading) -> str | None:
        """Why no short answer is shown, as a notice code (None when nothing needs saying)."""
        best = reading.best
        return "unsure" if best is not None and not reading.sure else None

    def complete(self, draft: Draft, reading: Reading, facts: list[Fact], scored: list[Pick]) -> list[Fact]:
        """The facts with anything this kind of answer adds once the reading is done."""
        return facts


class BySentences(Composer):
    """A why, a how or a what-was-said: the sentences are the answer, led by the one the reader
    found its phrase in; a why that found none still cites a sentence giving a cause; then the
    sentence after the lead in its article and the pool's best others, within the answer's words."""

    lead_anyway = True

    def unshown(self, reading: Reading) -> str | None:
        return "by_sentences"

    def complete(self, draft: Draft, reading: Reading, facts: list[Fact], scored: list[Pick]) -> list[Fact]:
        facts = _story_only(facts, keep_lead=reading.best is not None)
        if draft.question.kind == "why" and reading.best is None:
            # Any sentence gathered may give the reason, not only those the reader was given.
            facts = with_reason(facts, (*reading.given, *draft.evidence.read), scored, draft.question.query)
        cited = cited_sentences(facts)
        rest = [s for s in draft.evidence.read if s.id not in cited]
        seen = draft.question.seen  # a request for more: not the sentence after one shown before
        after = [s for s in follows(facts[0][0].sentence) if s.id not in cited and not shown_in(s.text, seen)
                 ] if facts else []
        leads = [group[0].sentence for group in facts]
        extra = more(rest, leads, self.policy.broad_fill, draft.question, after)
        return [*facts, *([Pick(s, s.score)] for s in extra)]


def _story_only(facts: list[Fact], keep_lead: bool) -> list[Fact]:
    """The facts without a page's furniture (headlines, link lines, captions: ``select.shown``); the
    lead sentence stays when it holds the short answer, and all of them when nothing else is left."""
    kept = [[p for n, p in enumerate(group) if shown(p.sentence) or (keep_lead and not (g or n))]
            for g, group in enumerate(facts)]
    return [group for group in kept if group] or facts


def trace_of(draft: Draft, reading: Reading) -> Trace:
    """What the reader was given and said, and the refusal checks, for eval and debugging."""
    best = reading.best
    return Trace(tuple(s.cited() for s in reading.given), best.candidate.text if best else None,
                 best.confidence if best else 0.0, reading.no_answer, reading.unverified, reading.declined,
                 dict(reading.stats), tuple(s.candidate.text for s in reading.spans[:SPAN_CANDIDATES]),
                 best.confidence if best else 0.0, draft.missing, draft.lacks_kind, draft.evidence.pool)


def answer_of(draft: Draft, reading: Reading, facts: list[Fact], span: Passage | None,
              shown: Shown) -> Answer:
    """The Answer of the facts to cite, the short answer's span, and how the reading is shown."""
    parts, citations = cited_text(facts)
    parts = recency.dated_text(facts, parts)
    best, q = reading.best, draft.question
    return Answer(q.as_typed, " ".join(parts), True, tuple(citations), span.text if span else None,
                  draft.evidence.passages, q.query, round(draft.evidence.best, 4), dict(draft.timings),
                  notice=say(shown.notice, **shown.values) if shown.notice else None, short_span=span,
                  confidence=round(best.confidence, 4) if best else 0.0,
                  no_answer=round(reading.no_answer, 4), reader=reading.reader, model=reading.model,
                  provisional=shown.provisional, ahead=shown.ahead,
                  notice_code=shown.notice, kind=q.kind, trace=trace_of(draft, shown.primary or reading))


def refused(draft: Draft, code: str, values: dict[str, str], reading: Reading) -> Answer:
    """The refusal: the closest passages, and the notice saying why."""
    best, q = reading.best, draft.question
    text = NOT_IN_ENGLISH if code == "not_english" else NOTHING_MORE if code == "no_more" else NOT_COVERED
    # Nothing more to show: the closest passages are the ones the answers above cited.
    passages = () if code == "no_more" else draft.evidence.passages
    return Answer(q.as_typed, text, False, passages=passages, query=q.query,
                  evidence=round(draft.evidence.best, 4), timings=dict(draft.timings),
                  notice=say(code, **values), notice_code=code, kind=q.kind,
                  confidence=round(best.confidence, 4) if best else 0.0,
                  no_answer=round(reading.no_answer, 4), reader=reading.reader, model=reading.model,
                  trace=trace_of(draft, reading))
