"""The language-model reader: a small instruction model reads the best sentences and names the
answer, which is shown only where it is found word for word in a sentence it read."""

from __future__ import annotations

import logging
import math
from functools import partial

from qa import rules
from qa.config import ReaderName
from qa.llm.base import Completion, Runtime
from qa.question.record import Question
from qa.readers.base import Candidate, Reading, ReadsAtOnce, Sentences, Span
from qa.readers.lm.calibration import TOKEN_FEATURES, LMCalibration, default_calibration, features
from qa.readers.lm.excerpts import Excerpts, dated_for, excerpts
from qa.readers.lm.locate import clean, locate_all
from qa.readers.lm.names import whole_name
from qa.readers.lm.prompt import Prompt, default_prompt
from qa.sentences.record import Sentence
from qa.text.normalise import key
from qa.text.words import tokenize

log = logging.getLogger(__name__)

MAX_PHRASE_TOKENS = 24  # a name, a number, a date or a few words


class LMReader(ReadsAtOnce):
    """Reads the best sentences with a language model (qa/llm) for a phrase that answers."""

    name = ReaderName.LM

    def __init__(self, runtime: Runtime, sentences: int, budget: int, min_short: float, decline: float,
                 prompt: Prompt | None = None, calibration: LMCalibration | None = None) -> None:
        self.runtime = runtime
        self.sentences = sentences  # how many of the best sentences it reads
        self.budget = budget  # characters of excerpts (about 250 prompt tokens for 1,100)
        self.min_short, self.decline = min_short, decline
        self.prompt = prompt or default_prompt()
        self.calibration = calibration if calibration is not None else default_calibration()

    def excerpts(self, sentences: Sentences, question: Question) -> Excerpts:
        """The excerpts this reader reads for these sentences (for this question)."""
        return excerpts(sentences, self.sentences, self.budget, dated=dated_for(question))

    def warm(self) -> None:
        """Load the model and read the fixed instruction into its cache, before the first question."""
        self.runtime.complete(self.prompt.warm_messages(), max_tokens=1)

    def read(self, question: Question, sentences: Sentences) -> Reading:
        """The model's phrase as a span of the sentence that holds it, with its confidence; a
        phrase no sentence holds is never a span. Raises ModelProblem or RuntimeFailed."""
        given = self.excerpts(sentences, question)
        if not given.groups:
            return Reading((), 1.0, self.name, min_short=self.min_short, declines_from=self.decline)
        reply = self.runtime.complete(self.prompt.question_messages(question, given.text),
                                      max_tokens=MAX_PHRASE_TOKENS, stop=["\n"], top_logprobs=10)
        rank = {s.id: r for r, s in enumerate(sentences)}
        return self._reading(question, reply, given, self.runtime.name, rank)

    def _reading(self, question: Question, reply: Completion, given: Excerpts, model: str,
                 rank: dict[int, int]) -> Reading:
        x = features(reply.tokens, self.prompt.declined)
        stats: dict[str, float] = {"prompt_tokens": reply.prompt_tokens, "cached_tokens": reply.cached_tokens,
                                   "output_tokens": reply.completion_tokens, "read_ms": round(reply.ms, 1),
                                   **{n: round(v, 4) for n, v in zip(TOKEN_FEATURES, x, strict=True)}}
        phrase = clean(reply.text)
        read = partial(Reading, reader=self.name, model=model, stats=stats, given=tuple(given.sentences),
                       min_short=self.min_short, declines_from=self.decline)
        if self._declines(phrase):
            return read((), self.calibration.no_answer(x[3], False), declined=True)
        records = given.sentences
        texts = [s.text for s in records]
        found = locate_all(phrase, texts)
        if not found:
            log.info("the reader's phrase %r is in no sentence it read: not shown", phrase[:80])
            return read((), self.calibration.no_answer(x[3], True), unverified=phrase)
        n, a, b = found[0]  # the best excerpt's
        sentence = records[n]
        candidate = self._candidate(sentence, a, b)
        stats.update(found_in=len({f[0] for f in found}), typed=float(candidate.label in question.labels),
                     found_rank=round(math.log1p(rank.get(sentence.id, len(rank))), 4))
        span = Span(sentence, candidate, math.exp(x[0]), self.calibration.confidence(stats))
        return read((span,), self.calibration.no_answer(x[3], False))

    def _declines(self, phrase: str) -> bool:
        """Whether the reply says the passages don't answer; a phrase of function words alone ("a",
        or "A" for a quiz's first option) answers nothing either."""
        if rules.on("reading.function_words") and not tokenize(phrase):
            return True
        return not phrase.strip() or key(phrase).startswith(key(self.prompt.declined))

    @staticmethod
    def _candidate(sentence: Sentence, a: int, b: int) -> Candidate:
        """The found phrase as a candidate span, labelled like the entity it coincides with; part of
        a person's name is the whole name the sentence gives ("Matthews" is "Auston Matthews")."""
        offset = sentence.start
        name = whole_name(sentence, a, b) if rules.on("reading.whole_name") else None
        if name is not None:
            a, b = name
        span = sentence.text[a:b]
        label = "PERSON" if name is not None else next(
            (t[2] for t in sentence.tags if t[0] == offset + a and t[1] == offset + b), "LM")
        return Candidate(offset + a, offset + b, label, "", (0, len(sentence.text)), span, key(span),
                         frozenset(tokenize(span)), span[:1].isupper() or span[:1].isdigit())
