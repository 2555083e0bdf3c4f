"""The language-model reader: a small instruction model reads the best sentences and names the
answer, which is shown only where it is found word for word in a sentence it read."""

from __future__ import annotations

import logging
import math
import re
from functools import partial

from qa.config import ReaderName
from qa.index.load import Index
from qa.llm.base import Completion, Runtime
from qa.question.parse import Asked
from qa.readers.base import Candidate, Earlier, Reading, ReadsAtOnce, Sentences, Span, normalise
from qa.readers.lm.calibration import TOKEN_FEATURES, LMCalibration, default_calibration, features
from qa.readers.lm.excerpts import Excerpts, dated_for, excerpts
from qa.readers.lm.locate import clean, initialled, locate_all
from qa.readers.lm.prompt import Prompt, default_prompt
from qa.text.words import WORD, tokenize

log = logging.getLogger(__name__)

MAX_PHRASE_TOKENS = 24  # a name, a number, a date or a few words
_POSSESSIVE = re.compile(r"['’]s?$")


class LMReader(ReadsAtOnce):
    """Reads the best sentences with a language model (qa/llm) for a phrase that answers."""

    name = ReaderName.LM

    def __init__(self, index: Index, runtime: Runtime, sentences: int, budget: int,
                 prompt: Prompt | None = None, calibration: LMCalibration | None = None) -> None:
        self.index = index
        self.runtime = runtime
        self.sentences = sentences  # how many of the best sentences it reads
        self.budget = budget  # characters of excerpts (about 250 prompt tokens for 1,100)
        self.prompt = prompt or default_prompt()
        self.calibration = calibration if calibration is not None else default_calibration()

    def excerpts(self, scored: Sentences, asked: Asked) -> Excerpts:
        """The numbered excerpts this reader reads for these sentences (for this question)."""
        return excerpts(self.index, scored, self.sentences, self.budget, dated=dated_for(asked))

    def warm(self) -> None:
        """Load the model and read the fixed instruction into its cache, before the first question."""
        self.runtime.complete(self.prompt.warm_messages(), max_tokens=1)

    def read(self, asked: Asked, sentences: Sentences, earlier: Earlier | None = None) -> Reading:
        """The model's phrase as a span of the sentence that holds it, with its confidence; a
        phrase no sentence holds is never a span. Raises ModelProblem or RuntimeFailed."""
        given = self.excerpts(sentences, asked)
        if not given.groups:
            return Reading.empty(self.name)
        reply = self.runtime.complete(self.prompt.question_messages(asked, given.text, earlier),
                                      max_tokens=MAX_PHRASE_TOKENS, stop=["\n"], top_logprobs=10)
        rank = {sid: r for r, (sid, _) in enumerate(sentences)}
        return self._reading(asked, reply, given, self.runtime.name, rank)

    def _reading(self, asked: Asked, reply: Completion, given: Excerpts, model: str,
                 rank: dict[int, int]) -> Reading:
        x = features(reply.tokens, self.prompt.declined)
        stats: dict[str, float] = {"prompt_tokens": reply.prompt_tokens,
                                   "cached_tokens": reply.cached_tokens,
                 "output_tokens": reply.completion_tokens, "read_ms": round(reply.ms, 1),
                 **{name: round(value, 4) for name, value in zip(TOKEN_FEATURES, x, strict=True)}}
        phrase = clean(reply.text)
        ids = given.sentences
        read = partial(Reading, reader=self.name, model=model, stats=stats, given=tuple(ids))
        # A phrase of function words alone ("a", or "A" for a quiz's first option) answers nothing.
        if not tokenize(phrase) or normalise(phrase).startswith(normalise(self.prompt.declined)):
            return read((), self.calibration.no_answer(x[3], False), declined=True)
        texts = [self.index.sentence_text(s) for s in ids]
        found = locate_all(phrase, texts) or self._initialled(phrase, ids, texts)
        if not found:
            log.info("the reader's phrase %r is in no sentence it read: not shown", phrase[:80])
            return read((), self.calibration.no_answer(x[3], True), unverified=phrase)
        # Of the sentences that hold the phrase, the one that names most of what the question names,
        # then says most of its words ("Shaheen told AFP" over "speaking with AFP news agency, an
        # unnamed member" for "which agency did Shaheen speak to?"), then the best excerpt's.
        said = set(tokenize(phrase))
        names = [set(tokenize(h)) - said for h in asked.hinges]
        words_asked = set(tokenize(asked.text)) - said

        def support(f: tuple[int, int, int]) -> tuple[int, int, int]:
            words = set(tokenize(texts[f[0]]))
            return sum(bool(n) and n <= words for n in names), len(words_asked & words), -f[0]

        n, a, b = max(found, key=support)
        sid = ids[n]
        candidate = self._candidate(sid, a, b)
        stats.update(found_in=len({f[0] for f in found}), typed=float(candidate.label in asked.labels),
                     found_rank=round(math.log1p(rank.get(sid, len(rank))), 4))
        confidence = self.calibration.confidence(stats)
        span = Span(sid, candidate, math.exp(x[0]), confidence)
        return read((span,), self.calibration.no_answer(x[3], False))

    def _initialled(self, phrase: str, ids: list[int], texts: list[str]) -> list[tuple[int, int, int]]:
        """Where a name written as "M. Kugelman" is a person's whole name, "Michael Kugelman", whose
        first name starts with that initial: the rest of the name's places."""
        named = initialled(phrase)
        if named is None:
            return []
        initial, rest = named
        found = []
        for n, a, b in locate_all(rest, texts):
            name = _whole_name(texts[n], self._people(ids[n]), a, b)
            if name is not None and name[0] < a and texts[n][name[0]] == initial:
                found.append((n, a, b))
        return found

    def _people(self, sid: int) -> list[tuple[int, int]]:
        """The people the tagger found in a sentence, in sentence offsets."""
        offset = int(self.index.sent_spans[sid][0])
        return [(s[0] - offset, s[1] - offset) for s in self.index.annotations.of(sid) if s[2] == "PERSON"]

    def _candidate(self, sid: int, a: int, b: int) -> Candidate:
        """The found phrase as a candidate span, labelled like the entity it coincides with; part of
        a person's name is the whole name the sentence gives ("Matthews" is "Auston Matthews")."""
        text = self.index.sentence_text(sid)
        offset = int(self.index.sent_spans[sid][0])
        entities = self.index.annotations.of(sid)
        name = _whole_name(text, self._people(sid), a, b)
        if name is not None:
            a, b = name
        span = text[a:b]
        label = "PERSON" if name is not None else next(
            (s[2] for s in entities if s[0] == offset + a and s[1] == offset + b), "LM")
        return Candidate(offset + a, offset + b, label, "", (0, len(text)), span, normalise(span),
                         frozenset(tokenize(span)), span[:1].isupper() or span[:1].isdigit())


def _whole_name(text: str, people: list[tuple[int, int]], a: int, b: int) -> tuple[int, int] | None:
    """The person's name (sentence offsets) that text[a:b] is part of, or None."""
    whole = next(((s, e) for s, e in people if s <= a and b <= e), None)
    if whole is None:
        return None
    start, end = whole
    # The tagger's name may take the possessive along ("Vladimir Putin's"), and the small tagger
    # calls "bar al-Qaeda" a person: only capitalised words are added to a name.
    end = max(b, start + len(_POSSESSIVE.sub("", text[start:end])))
    added = WORD.findall(text[start:a] + " " + text[b:end])
    return (start, end) if all(w[0].isupper() for w in added) else None
