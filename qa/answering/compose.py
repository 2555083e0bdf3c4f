"""Answers: pick the sentences that answer, cite each one exactly, lead with the reader's short
answer, or decline."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, replace

from qa.answer import NOT_COVERED, Answer, Choice, Trace
from qa.answering import coverage, recency
from qa.answering.cite import (
    citation,
    cited_text,
    group_facts,
    lead_with_short,
    with_reason,
)
from qa.answering.evidence import rank_evidence
from qa.answering.policy import AnswerPolicy
from qa.answering.scoring import Scored, score_sentences
from qa.config import ReaderName
from qa.passage import Passage
from qa.question.parse import Asked, parse
from qa.readers.base import Earlier, Reader, ReaderUnavailable, Reading, Waiting
from qa.readers.queued import QueuedChoice
from qa.retrieval.followup import earlier_citation, earlier_turn, resolve
from qa.retrieval.retrieve import Mode, Retriever, clean_question

NOT_IN_ENGLISH = "The question is not in English."
DECLINED = "The reader found no answer to this in the retrieved sentences."
# Why the language model read a question and no short answer is shown (Answer.notice).
UNVERIFIED = "No short answer: the language model's phrase is in none of the sentences it read."
BY_SENTENCE = "No short answer: the cited sentences are the answer to a why, a how or what was said."
UNSURE = "No short answer: the language model was unsure of its phrase ({confidence:.2f})."
SPAN_CANDIDATES = 20  # span reader candidates an answer's trace keeps
# The model reads the answer's best-scored sentence first, whatever the fitted ranking says: it is
# what the answer cites first, and on our own articles the ranking fitted on RealTime QA's long
# search results passed over short quoted answers ("They can simply walk out if necessary.").
LEAD_READ = 1


@dataclass(frozen=True)
class _Draft:
    """What an answer is made from before the reader reads: the parsed question, passages, scored
    sentences, the span reader's reading, and a refusal when the evidence already rules one."""

    question: str
    query: str
    asked: Asked
    passages: tuple[Passage, ...]
    scored: list[Scored]
    evidence: float
    spans: Reading
    refusal: str | None
    earlier: Earlier | None
    timings: dict[str, float]
    missing: tuple[str, ...]
    lacks_kind: bool
    recalled: int | None  # the sentence the last answer led with, for a follow-up
    read: list[tuple[int, float]]  # what the reader reads first: the wider pool, ranked
    pool: tuple[Passage, ...]  # the passages that pool is made of


class Answerer:
    """Composes cited answers from a retriever's passages, the short answer from ``reader``;
    ``fallback`` (the span reader) answers when it cannot, and finds the rival dated answers."""

    def __init__(self, retriever: Retriever, reader: Reader, fallback: Reader, policy: AnswerPolicy,
                 choice: QueuedChoice | None = None) -> None:
        self.retriever = retriever
        self.index = retriever.index
        self.reader = reader
        self.fallback = fallback
        self.policy = policy
        self.choice = choice

    def answer(self, question: str, history: Sequence[object] | None = None,
               mode: Mode = "hybrid", since: str | None = None, until: str | None = None,
               user: str = "", reader: ReaderName | None = None, today: str | None = None) -> Answer:
        """Answer a question (follow-ups resolved against history), from articles dated since..until;
        ``today`` (YYYY-MM-DD, default the real one) is the day it is asked on."""
        *_, final = self.stream(question, history, mode, since, until, user, reader, today)
        return final

    def stream(self, question: str, history: Sequence[object] | None = None, mode: Mode = "hybrid",
               since: str | None = None, until: str | None = None, user: str = "",
               reader: ReaderName | None = None, today: str | None = None) -> Iterator[Answer]:
        """The answer, last; before it, provisional ones that cite the best sentences while the
        question waits for the reader (``ahead``) and is read. ``reader`` names the one for this
        question (the fallback's name: read at once, without the language model)."""
        draft = self._draft(question, history, mode, since, until, today)
        if draft.refusal is not None:
            yield self._refused(draft, draft.refusal, draft.spans)
            return
        chosen = self.fallback if reader is not None and reader == self.fallback.name else self.reader
        if chosen is self.fallback:
            yield self._compose(draft, draft.spans)
            return
        began = time.perf_counter()
        sentences = draft.read
        if draft.recalled is not None and draft.scored:
            # A follow-up reads the sentence the last answer led with first: "which agency did he
            # speak to?" is answered by the sentence that said what he said.
            sentences = [(draft.recalled, sentences[0][1] if sentences else 0.0),
                         *((s, v) for s, v in sentences if s != draft.recalled)]
        reading = None
        try:
            for step in chosen.stream(draft.asked, sentences, draft.earlier, user):
                if isinstance(step, Waiting):
                    yield self._compose(draft, Reading.empty(chosen.name), provisional=True, ahead=step.ahead)
                else:
                    reading = step
        except ReaderUnavailable as exc:
            draft.timings["read_ms"] = (time.perf_counter() - began) * 1000
            yield self._compose(draft, draft.spans, notice=exc.notice)
            return
        draft.timings["read_ms"] = (time.perf_counter() - began) * 1000
        assert reading is not None
        if reading.unverified is not None:
            # The model wrote what no sentence says: nothing of it is shown, and the cited sentences
            # stand, saying so; refusing here refused 15 of 90 answerable hand-written questions,
            # mostly dates it reworded.
            yield self._compose(draft, replace(reading, unverified=None), notice=UNVERIFIED, primary=reading)
            return
        # A why, a how or a what-was-said is answered by the cited sentences: the model not
        # finding a phrase for it is no refusal.
        if reading.no_answer >= self.policy.decline and not draft.asked.by_sentence:
            yield self._refused(draft, DECLINED, reading)
            return
        yield self._compose(draft, reading)

    def choose(self, question: str, options: Sequence[str], mode: Mode = "hybrid", since: str | None = None,
               until: str | None = None, user: str = "", today: str | None = None) -> Choice:
        """Which option the articles (dated since..until) support: the model's probability of each,
        from the sentences it would read for the open question."""
        if self.choice is None:
            raise ReaderUnavailable("multiple choice needs the language model: set QA_READER=lm")
        draft = self._draft(question, None, mode, since, until, today)
        sentences = draft.read
        probs = self.choice.choose(draft.asked, sentences, list(options), user)
        given = tuple(citation(self.index, sid) for sid in self.choice.chooser.given(sentences))
        return Choice(draft.question, tuple(options), tuple(round(float(p), 4) for p in probs),
                      int(probs.argmax()), draft.passages, given)

    def _draft(self, question: str, history: Sequence[object] | None, mode: Mode, since: str | None,
               until: str | None, today: str | None = None) -> _Draft:
        began = time.perf_counter()
        question = clean_question(question, self.policy.max_question_chars)
        query = resolve(question, history)
        asked = parse(question, query)
        pool = self.retriever.select(query, max(self.policy.k, self.policy.read_k), mode, since, until)
        hits = pool[:self.policy.k]  # the pool's first passages are the k best
        passages = tuple(self.retriever.passage(i, s) for i, s in hits)
        retrieved = time.perf_counter()
        scored = score_sentences(self.index, self.retriever.embed_query, asked, question, query,
                                 [i for i, _ in hits])
        evidence = scored[0].score if scored else 0.0
        spans = self.fallback.read(asked, [(s.sentence, s.score) for s in scored])
        missing = tuple(coverage.missing(asked, [p.text for p in passages]))
        lacks = coverage.lacks_kind(asked, self.index, [s.sentence for s in scored])
        refusal = coverage.refusal(asked, question, evidence if scored else None, missing, lacks, self.policy)
        timings = {"retrieve_ms": (retrieved - began) * 1000,
                   "answer_ms": (time.perf_counter() - retrieved) * 1000}
        cited = earlier_citation(question, history)
        recalled = self.index.sentence_at(cited.source, cited.start, cited.end) if cited else None
        read = rank_evidence(self.index, self.retriever.embed_query, asked, question, query,
                             [i for i, _ in pool], today, lead=[s.sentence for s in scored[:LEAD_READ]])
        timings["answer_ms"] = (time.perf_counter() - retrieved) * 1000
        return _Draft(question, query, asked, passages, scored, evidence, spans, refusal,
                      earlier_turn(question, history), timings, missing, lacks, recalled, read,
                      tuple(self.retriever.passage(i, s) for i, s in pool))

    def _unshown(self, draft: _Draft, reading: Reading) -> str | None:
        """Why the model's reading shows no short answer, in one line (None when it shows one)."""
        best = reading.best
        if draft.asked.by_sentence:
            return BY_SENTENCE
        if best is not None and best.confidence < self.policy.shows_from(reading.reader):
            return UNSURE.format(confidence=best.confidence)
        return None

    def _trace(self, draft: _Draft, reading: Reading) -> Trace:
        """What the reader was given and said, and the refusal checks, for eval and debugging."""
        best, spans = reading.best, draft.spans
        given = tuple(citation(self.index, sid) for sid in reading.given)
        return Trace(given, best.candidate.text if best else None, best.confidence if best else 0.0,
                     reading.no_answer, reading.unverified, reading.declined, dict(reading.stats),
                     tuple(s.candidate.text for s in spans.spans[:SPAN_CANDIDATES]),
                     spans.best.confidence if spans.best else 0.0, draft.missing, draft.lacks_kind,
                     draft.pool)

    def _refused(self, draft: _Draft, notice: str, reading: Reading) -> Answer:
        best = reading.best
        text = NOT_IN_ENGLISH if notice == coverage.NOT_ENGLISH else NOT_COVERED
        return Answer(draft.question, text, False, passages=draft.passages, query=draft.query,
                      evidence=round(draft.evidence, 4), timings=dict(draft.timings), notice=notice or None,
                      confidence=round(best.confidence, 4) if best else 0.0,
                      no_answer=round(reading.no_answer, 4), reader=reading.reader, model=reading.model,
                      trace=self._trace(draft, reading))

    def _layout(self, draft: _Draft, reading: Reading, lead_anyway: bool = False
                ) -> tuple[list[list[Scored]], Passage | None]:
        """The facts to cite, and the short answer's span when the reader is confident of it."""
        shows_from = self.policy.shows_from(reading.reader)
        scored, span = lead_with_short(self.index, draft.scored, reading, shows_from, lead_anyway)
        # Rival dated answers are the span reader's to find: the language model names one answer.
        rivals = reading.with_rivals(draft.spans)
        facts = group_facts(self.index, scored, self.policy)
        return recency.latest_first(self.index, scored, facts, rivals, span, self.policy)

    def _compose(self, draft: _Draft, reading: Reading, notice: str | None = None,
                 provisional: bool = False, ahead: int = 0, primary: Reading | None = None) -> Answer:
        """The cited answer, led by the sentence holding the reader's short answer when it is
        confident; ``primary`` is the reading it stands in for, when the model's was not shown."""
        by_sentence = draft.asked.by_sentence and reading.reader == ReaderName.LM
        facts, span = self._layout(draft, reading, lead_anyway=by_sentence)
        if reading.reader == ReaderName.LM and not provisional:
            # A shown short answer leads with the sentence that holds it and cites only what says
            # the same, though the chat showed other sentences while the model read: keeping those
            # (their order too) cited a sentence without the answer first in 9 of 90 hand-written
            # answers.
            if span is None and notice is None:
                notice = self._unshown(draft, reading)
            if draft.asked.kind == "reason" and reading.best is None:
                facts = with_reason(self.index, facts, reading.given, draft.scored, draft.query)
        parts, citations = cited_text(self.index, facts)
        parts = recency.dated_text(self.index, facts, parts)
        best = reading.best
        return Answer(draft.question, " ".join(parts), True, tuple(citations), span.text if span else None,
                      draft.passages, draft.query, round(draft.evidence, 4), dict(draft.timings),
                      notice=notice, short_span=span, confidence=round(best.confidence, 4) if best else 0.0,
                      no_answer=round(reading.no_answer, 4), reader=reading.reader, model=reading.model,
                      provisional=provisional, ahead=ahead, trace=self._trace(draft, primary or reading))

