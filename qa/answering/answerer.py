"""The answering pipeline, one step after another: the question analysed once, its passages and
their sentence records, the refusal checks, the reading, and the composition its kind asks for."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import replace

from qa import rules
from qa.answer import Answer, Choice
from qa.answering import coverage, recency
from qa.answering.compose import Composer, Draft, Shown, composer_for, refused
from qa.config import Config
from qa.question.analyse import analyse
from qa.question.record import Question
from qa.readers.base import Reader, ReaderUnavailable, Reading, Sentences, Waiting
from qa.readers.queued import QueuedChoice
from qa.retrieval.retrieve import Mode, Retriever, clean_question
from qa.sentences.gather import Gatherer


class Answerer:
    """Answers from one retriever's passages; ``reader`` reads the short answer and ``fallback``
    (the span reader) stands in when it cannot, and finds the rival dated answers."""

    def __init__(self, retriever: Retriever, gatherer: Gatherer, reader: Reader, fallback: Reader,
                 config: Config, choice: QueuedChoice | None = None) -> None:
        self.retriever = retriever
        self.gatherer = gatherer
        self.reader = reader
        self.fallback = fallback
        self.config = config
        self.choice = choice

    def answer(self, question: str, history: Sequence[object] | None = None, mode: Mode = "hybrid",
               since: str | None = None, until: str | None = None, user: str = "", quick: bool = False,
               today: str | None = None) -> Answer:
        """Answer a question (follow-ups resolved against history), from articles dated since..until;
        ``quick``: the fallback reads, at once; ``today`` (YYYY-MM-DD): the day it is asked."""
        *_, final = self.stream(question, history, mode, since, until, user, quick, today)
        return final

    def stream(self, question: str, history: Sequence[object] | None = None, mode: Mode = "hybrid",
               since: str | None = None, until: str | None = None, user: str = "", quick: bool = False,
               today: str | None = None) -> Iterator[Answer]:
        """The answer, last; before it, provisional ones that cite the best sentences while the
        question waits for the reader (``ahead``) and is read."""
        draft = self.draft(question, history, mode, since, until, today)
        if (why := self.refusal(draft)) is not None:
            yield refused(draft, *why, Reading.empty(self.fallback.name))
            return
        composer = composer_for(draft.question.kind, self.config.answering)
        reader = self.fallback if quick else self.reader
        began, reading = time.perf_counter(), None
        try:
            for step in reader.stream(draft.question, self.read_first(draft, reader), user):
                if isinstance(step, Waiting):
                    yield composer.compose(draft, Reading.empty(reader.name), Shown(provisional=True,
                                                                                    ahead=step.ahead))
                else:
                    reading = step
        except ReaderUnavailable as exc:
            draft.timings["read_ms"] = (time.perf_counter() - began) * 1000
            spans = self.fallback.read(draft.question, draft.evidence.cited)
            yield composer.compose(draft, spans, Shown(exc.code, {"seconds": exc.detail}))
            return
        draft.timings["read_ms"] = (time.perf_counter() - began) * 1000
        assert reading is not None
        yield self.finish(draft, reading, composer, None if reader is self.fallback else self.rivals(draft))

    def finish(self, draft: Draft, reading: Reading, composer: Composer, rivals: Reading | None) -> Answer:
        """The final answer of a reading: shown, refused when the reader declined, or the cited
        sentences alone when its phrase is in no sentence it read."""
        if reading.unverified is not None and rules.on("answering.keep_unverified"):
            # The model wrote what no sentence says: nothing of it is shown, and the cited sentences
            # stand, saying so; refusing here refused 15 of 90 answerable hand-written questions.
            return composer.compose(draft, replace(reading, unverified=None),
                                    Shown("no_phrase", primary=reading, rivals=rivals))
        # A why, a how or a what-was-said is answered by the cited sentences: no phrase is no refusal.
        by_sentence = draft.question.by_sentence and rules.on("answering.sentences_never_decline")
        if (reading.no_answer >= reading.declines_from or reading.unverified is not None) and not by_sentence:
            return refused(draft, "no_answer", {}, reading)
        return composer.compose(draft, reading, Shown(rivals=rivals))

    def rivals(self, draft: Draft) -> Reading | None:
        """The span reader's reading of the cited sentences, for the rival dated answers a reader
        naming one phrase does not list: only when those sentences come from several dates."""
        if not recency.may_differ(draft.evidence.cited, self.config.answering):
            return None
        return self.fallback.read(draft.question, draft.evidence.cited)

    def read_first(self, draft: Draft, reader: Reader) -> Sentences:
        """What the reader reads, in order: the pool's sentences for the configured reader (a
        follow-up's earlier lead first), the cited sentences for the fallback."""
        if reader is self.fallback:
            return draft.evidence.cited
        read = list(draft.evidence.read)
        recalled = draft.question.recalled and self.gatherer.locate(draft.question.recalled)
        if recalled:
            # A follow-up reads the sentence the last answer led with first: "which agency did he
            # speak to?" is answered by the sentence that said what he said.
            read = [recalled, *(s for s in read if s.id != recalled.id)]
        return read

    def draft(self, question: str, history: Sequence[object] | None, mode: Mode, since: str | None,
              until: str | None, today: str | None = None) -> Draft:
        """The question analysed, its passages retrieved, their sentences gathered and scored."""
        began = time.perf_counter()
        c = self.config.retrieval
        q = analyse(clean_question(question, c.max_question_chars), history)
        pool = self.retriever.select(q.query, max(c.k, c.read_k), mode, since, until)
        retrieved = time.perf_counter()
        evidence = self.gatherer.gather(q, pool, c.k, self.retriever.embed_query, today)
        missing = tuple(coverage.missing(q, [p.text for p in evidence.passages]))
        lacks = coverage.lacks_kind(q, evidence.cited)
        timings = {"retrieve_ms": (retrieved - began) * 1000,
                   "answer_ms": (time.perf_counter() - retrieved) * 1000}
        return Draft(q, evidence, missing, lacks, timings)

    def refusal(self, draft: Draft) -> tuple[str, dict[str, str]] | None:
        """Why the evidence does not answer the question (a notice code and its values), or None."""
        evidence = draft.evidence
        return coverage.refusal(draft.question, evidence.best if evidence.cited else None, draft.missing,
                                draft.lacks_kind, self.config.answering)

    def choose(self, question: str, options: Sequence[str], mode: Mode = "hybrid", since: str | None = None,
               until: str | None = None, user: str = "", today: str | None = None) -> Choice:
        """Which option the articles (dated since..until) support: the model's probability of each,
        from the sentences it would read for the open question."""
        if self.choice is None:
            raise ReaderUnavailable("model_missing", "multiple choice needs the language model")
        draft = self.draft(question, None, mode, since, until, today)
        probs = self.choice.choose(draft.question, draft.evidence.read, list(options), user)
        given = tuple(s.cited() for s in self.choice.chooser.given(draft.evidence.read))
        return Choice(draft.question.asked, tuple(options), tuple(round(float(p), 4) for p in probs),
                      int(probs.argmax()), draft.evidence.passages, given)

    def question(self, question: str, history: Sequence[object] | None = None) -> Question:
        """The question as the pipeline analyses it."""
        return analyse(clean_question(question, self.config.retrieval.max_question_chars), history)
