"""Answers: pick the sentences that answer, cite each one exactly, lead with the reader's short
answer, or decline."""

from __future__ import annotations

import logging
import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from qa.answer import NOT_COVERED, Answer
from qa.errors import QAError
from qa.llm.line import Line, LineTooLong, TimedOut
from qa.llm.runtime import RuntimeFailed
from qa.passage import Passage
from qa.reading import coverage, recency
from qa.reading.cite import cited_text, group_facts, lead_with_short
from qa.reading.question import ask
from qa.reading.reader import SENTENCE_KINDS, Reader, Reading, SpanReader
from qa.reading.scoring import Scored, Weights, score_sentences
from qa.retrieval.followup import needs_context, resolve
from qa.retrieval.retrieve import Mode, Retriever, clean_question
from qa.text.words import looks_english

log = logging.getLogger(__name__)

_KIND_WORDS = {"money": "a sum of money", "percent": "a percentage", "count": "a number"}
NOT_ENGLISH = ("The question does not look like English: the articles and the model are English, "
               "so ask in English.")
DECLINED = "The reader found no answer to this in the retrieved sentences."
# "What did he tweet?": the answer is what a sentence says, not a phrase in it.
_ASKS_WHAT_WAS_SAID = re.compile(r"^\s*what\b.*\b(?:say|said|tweet|tweeted|tell|told|write|wrote|post|posted|"
                                 r"announce|announced|claim|claimed|warn|warned)\b", re.I)
_UNREAD = Reading((), 1.0, reader="lm")

__all__ = ["Answerer", "Weights"]


@dataclass(frozen=True)
class _Draft:
    """What an answer is made from before the language model reads: passages, scored sentences,
    the span reader's reading, and a refusal when the evidence already rules one."""

    question: str
    query: str
    passages: tuple[Passage, ...]
    scored: list[Scored]
    evidence: float
    spans: Reading
    refusal: str | None
    earlier: tuple[str, str] | None
    timings: dict[str, float]


class Answerer:
    """Composes cited answers from a retriever's passages; the short answer comes from the
    language-model reader when there is one, else (and when it fails) from the span reader."""

    def __init__(self, retriever: Retriever, min_evidence: float, k: int = 5,
                 max_facts: int = 2, weights: Weights | None = None,
                 max_question_chars: int = 2000, min_short: float = 0.4,
                 hinge_evidence: float = 1.0, lm: Reader | None = None, decline: float = 0.5,
                 line: Line | None = None, read_timeout: float = 20.0) -> None:
        self.weights = weights or Weights()
        self.max_question_chars = max_question_chars
        self.retriever = retriever
        self.index = retriever.index
        self.reader = SpanReader(self.index)
        self.lm = lm
        self.min_evidence = min_evidence
        self.min_short = min_short
        self.hinge_evidence = hinge_evidence
        self.decline = decline
        self.line = line or Line()
        self.read_timeout = read_timeout
        self.k = k
        self.max_facts = max_facts

    def answer(self, question: str, history: Sequence[object] | None = None,
               mode: Mode = "hybrid", since: str | None = None, until: str | None = None,
               user: str = "", reader: str | None = None) -> Answer:
        """Answer a question (follow-ups resolved against history), from articles dated since..until."""
        *_, final = self.stream(question, history, mode, since, until, user, reader)
        return final

    def _unread_notice(self, exc: QAError | RuntimeFailed) -> str:
        """Why the short answer is the span reader's: the line was too long, the wait ran out, or
        the language model could not read."""
        if isinstance(exc, LineTooLong):
            return (f"The language model is busy: {exc}, more than QA_READ_TIMEOUT "
                    f"({self.read_timeout:g} s) allows; the short answer is from the span reader.")
        if isinstance(exc, TimedOut):
            return (f"The language model did not read this within {self.read_timeout:g} s "
                    "(QA_READ_TIMEOUT; it is busy); the short answer is from the span reader.")
        return (f"The language-model reader is unavailable ({str(exc).rstrip('.')}); the short answer "
                "is from the span reader.")

    def stream(self, question: str, history: Sequence[object] | None = None, mode: Mode = "hybrid",
               since: str | None = None, until: str | None = None, user: str = "",
               reader: str | None = None) -> Iterator[Answer]:
        """The answer, last; with the language-model reader, first provisional ones that cite the
        best sentences while the question waits in line (``ahead``) and is read (``reading``).
        ``reader="spans"`` answers with the span reader alone."""
        draft = self._draft(question, history, mode, since, until)
        if draft.refusal is not None:
            yield self._refused(draft, draft.refusal, draft.spans)
            return
        if self.lm is None or reader == "spans":
            yield self._compose(draft, draft.spans)
            return
        began = time.perf_counter()
        # A follow-up whose pronoun was resolved reads as the standalone question it became
        # ("Which agency did Suhail Shaheen speak to?"); one resolved by context reads as asked.
        asked = draft.query if not draft.query.startswith(draft.question) else draft.question
        scored = [(s.sentence, s.score) for s in draft.scored]
        lm = self.lm
        ticket = self.line.submit(user, lambda give_up: lm.read(asked, scored, draft.earlier, give_up),
                                  self.read_timeout)
        ahead = self.line.ahead(ticket)
        yield self._compose(draft, _UNREAD, provisional=True, ahead=ahead)
        try:
            while not self.line.poll(ticket, 0.25):
                if (now := self.line.ahead(ticket)) != ahead:
                    ahead = now
                    yield self._compose(draft, _UNREAD, provisional=True, ahead=ahead)
            reading = self.line.result(ticket)
        except (QAError, RuntimeFailed) as exc:
            draft.timings["read_ms"] = (time.perf_counter() - began) * 1000
            yield self._compose(draft, draft.spans, notice=self._unread_notice(exc))
            return
        draft.timings["read_ms"] = (time.perf_counter() - began) * 1000
        if reading.unverified is not None:
            # The model wrote what no sentence says: nothing of it is shown, and the cited
            # sentences stand (with the span reader's short answer, when it is sure); refusing
            # here refused 15 of 90 answerable hand-written questions, mostly dates it reworded.
            yield self._compose(draft, draft.spans)
            return
        # A why, a how or a what-was-said is answered by the cited sentences: the model not
        # finding a phrase for it is no refusal.
        by_sentence = ask(draft.query).kind in SENTENCE_KINDS or _ASKS_WHAT_WAS_SAID.match(draft.question)
        if reading.no_answer >= self.decline and not by_sentence:
            yield self._refused(draft, DECLINED, reading)
            return
        yield self._compose(draft, reading)

    def _draft(self, question: str, history: Sequence[object] | None, mode: Mode, since: str | None,
               until: str | None) -> _Draft:
        began = time.perf_counter()
        question = clean_question(question, self.max_question_chars)
        query = resolve(question, history)
        hits = self.retriever.select(query, self.k, mode, since, until)
        passages = tuple(self.retriever.passage(i, s) for i, s in hits)
        retrieved = time.perf_counter()
        scored = score_sentences(self.index, self.retriever, self.weights, question, query,
                                 [i for i, _ in hits])
        evidence = scored[0].score if scored else 0.0
        spans = self.reader.read(ask(query), [(s.sentence, s.score) for s in scored])
        refusal = self._refusal(question, query, evidence, passages, scored)
        timings = {"retrieve_ms": (retrieved - began) * 1000,
                   "answer_ms": (time.perf_counter() - retrieved) * 1000}
        return _Draft(question, query, passages, scored, evidence, spans, refusal,
                      _earlier(question, history), timings)

    def scored(self, question: str, mode: Mode = "hybrid") -> list[tuple[int, float]]:
        """(sentence, score) of the retrieved sentences, best first: what the readers read."""
        query = clean_question(question, self.max_question_chars)
        hits = self.retriever.select(query, self.k, mode)
        return [(s.sentence, s.score)
                for s in score_sentences(self.index, self.retriever, self.weights, query, query,
                                         [i for i, _ in hits])]

    def read(self, question: str, mode: Mode = "hybrid",
             scored: Sequence[tuple[int, float]] | None = None) -> Reading:
        """The span reader's candidates for a question, best first (for multiple choice and eval);
        from its scored sentences when the caller has them already."""
        return self.reader.read(ask(clean_question(question, self.max_question_chars)),
                                self.scored(question, mode) if scored is None else scored)

    def _refusal(self, question: str, query: str, evidence: float, passages: Sequence[Passage],
                 scored: list[Scored]) -> str | None:
        """Why the evidence does not answer the question ("" when only the score is too low), or None."""
        if not scored or evidence < self.min_evidence:
            # The embedder and the articles are English: another language scores low everywhere.
            return "" if looks_english(question) else NOT_ENGLISH
        asked = ask(query)
        if coverage.lacks_kind(asked, self.index, [s.sentence for s in scored]):
            return f"No retrieved passage states {_KIND_WORDS[asked.kind]}."
        gone = coverage.missing(ask(question), [p.text for p in passages])
        if gone and evidence < self.hinge_evidence:
            names = " or ".join(f"“{h}”" for h in gone[:3])
            return f"No retrieved passage mentions {names}."
        return None

    def _refused(self, draft: _Draft, notice: str, reading: Reading) -> Answer:
        best = reading.best
        return Answer(draft.question, NOT_COVERED, False, passages=draft.passages, query=draft.query,
                      evidence=round(draft.evidence, 4), timings=dict(draft.timings), notice=notice or None,
                      confidence=round(best.confidence, 4) if best else 0.0,
                      no_answer=round(reading.no_answer, 4), reader=reading.reader, model=reading.model)

    def _compose(self, draft: _Draft, reading: Reading, notice: str | None = None,
                 provisional: bool = False, ahead: int = 0) -> Answer:
        """The cited answer, led by the sentence holding the reader's short answer when it is confident."""
        scored, span = lead_with_short(self.index, draft.scored, reading, self.min_short)
        # Rival dated answers are the span reader's to find: the language model names one answer.
        rivals = reading if reading.reader == "spans" else replace(
            reading, spans=reading.spans + tuple(s for s in draft.spans.spans
                                                 if not reading.best or s.sentence != reading.best.sentence))
        facts = group_facts(self.index, scored, self.max_facts)
        facts, span = recency.latest_first(self.index, scored, facts, rivals, span, self.min_short, Scored)
        parts, citations = cited_text(self.index, facts)
        parts = recency.dated_text(self.index, facts, parts)
        best = reading.best
        return Answer(draft.question, " ".join(parts), True, tuple(citations), span.text if span else None,
                      draft.passages, draft.query, round(draft.evidence, 4), dict(draft.timings),
                      notice=notice, short_span=span, confidence=round(best.confidence, 4) if best else 0.0,
                      no_answer=round(reading.no_answer, 4), reader=reading.reader, model=reading.model,
                      reading=provisional, ahead=ahead)


def _earlier(question: str, history: Sequence[object] | None) -> tuple[str, str] | None:
    """The last turn as (question, its short answer or first sentence), for a follow-up to read."""
    if not history or not needs_context(question):
        return None
    last = history[-1]
    try:
        previous, answer = last  # type: ignore[misc]
    except (TypeError, ValueError):
        return None
    if not getattr(answer, "answered", False):
        return None
    said = getattr(answer, "short", None) or (getattr(answer, "citations", None) or [None])[0]
    said = said.text if isinstance(said, Passage) else said
    return (str(previous), " ".join(str(said).split())[:300]) if said else None
