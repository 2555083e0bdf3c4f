"""The answering pipeline, one step after another: the draft (the question analysed once, its
passages and sentence records, the refusal checks), the reading its kind asks for, and the
composition of its kind."""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from dataclasses import replace

from qa import rules
from qa.answer import Answer, Choice
from qa.answering import recency
from qa.answering.compose import Composer, Draft, Shown, refused
from qa.answering.draft import Drafter
from qa.answering.route import READS, composer_for
from qa.config import Config
from qa.readers.base import Reader, ReaderUnavailable, Reading, Sentences, Waiting
from qa.readers.factory import Readers
from qa.retrieval.retrieve import Mode
from qa.text.normalise import shown_in


class Answerer:
    """Answers from a drafter's evidence; ``readers.reader`` reads the short answer, the span reader
    (``readers.fallback``) stands in when it cannot and finds the rival dated answers, and
    ``readers.verdict`` reads yes/no questions."""

    def __init__(self, drafter: Drafter, readers: Readers, config: Config) -> None:
        self.drafter = drafter
        self.retriever, self.gatherer = drafter.retriever, drafter.gatherer
        self.reader, self.fallback, self.verdict, self.choice = (readers.reader, readers.fallback,
                                                                 readers.verdict, readers.choice)
        self.config = config

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
        if (why := self.drafter.refusal(draft)) is not None:
            yield refused(draft, *why, Reading.empty(self.fallback.name))
            return
        composer = composer_for(draft.question.kind, self.config.answering)
        reader = self.reader_for(draft.question.kind, quick)
        if reader is None:  # its sentences are chosen, not read
            yield composer.compose(draft, Reading.empty(self.fallback.name))
            return
        yield from self._read(draft, composer, reader, user)

    def _read(self, draft: Draft, composer: Composer, reader: Reader, user: str) -> Iterator[Answer]:
        """The answers while the reader waits its turn and reads, then the final one."""
        began, reading = time.perf_counter(), None
        try:
            for step in reader.stream(draft.question, self.read_first(draft, reader), user):
                if isinstance(step, Waiting):
                    waiting = Shown(provisional=True, ahead=step.ahead)
                    yield composer.compose(draft, Reading.empty(reader.name), waiting)
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

    def reader_for(self, kind: str, quick: bool) -> Reader | None:
        """Who reads a question of this kind: the phrase reader (the fallback when ``quick``), the
        verdict reader, or nobody."""
        reads = READS.get(kind)
        if reads == "phrase":
            return self.fallback if quick else self.reader
        return self.verdict if reads == "verdict" and not quick else None

    def finish(self, draft: Draft, reading: Reading, composer: Composer, rivals: Reading | None) -> Answer:
        """The final answer of a reading: shown, refused when the reader declined, or the cited
        sentences alone when its phrase is in no sentence it read."""
        if seen := draft.question.seen:  # a request for more: nothing it read beside a sentence shown before
            reading = replace(reading, given=tuple(s for s in reading.given if not shown_in(s.text, seen)),
                              spans=tuple(s for s in reading.spans if not shown_in(s.sentence.text, seen)))
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
        return self.drafter.draft(question, history, mode, since, until, today)

    def choose(self, question: str, options: Sequence[str], mode: Mode = "hybrid", since: str | None = None,
               until: str | None = None, user: str = "", today: str | None = None) -> Choice:
        """Which option the articles (dated since..until) support: the model's probability of each,
        from the sentences it would read for the open question."""
        draft = self.draft(question, None, mode, since, until, today)
        probs = self.choice.choose(draft.question, draft.evidence.read, list(options), user)
        given = tuple(s.cited() for s in self.choice.chooser.given(draft.evidence.read))
        return Choice(draft.question.asked, tuple(options), tuple(round(float(p), 4) for p in probs),
                      int(probs.argmax()), draft.evidence.passages, given)
