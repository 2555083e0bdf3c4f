"""The language-model reader: a small instruction model reads the best sentences and names the
answer, which is shown only where it is found word for word in a sentence it read."""

from __future__ import annotations

import logging
import math
import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from qa.index.load import Index
from qa.llm.runtime import Completion, Runtime
from qa.passage import human_date
from qa.reading.candidates import Candidate, normalise
from qa.reading.lm_calibration import FEATURES, Calibration, features, load_calibration
from qa.reading.locate import clean, locate_all
from qa.reading.question import hinges
from qa.reading.reader import Reading, Span
from qa.text.words import tokenize

log = logging.getLogger(__name__)

PROMPT_FILE = Path(__file__).with_name("lm_prompt.toml")
LETTERS = "ABCDEFGH"
MAX_SENTENCE = 600  # characters of one sentence shown to the model


@dataclass(frozen=True)
class Prompt:
    """The reader's prompt texts (qa/reading/lm_prompt.toml)."""

    system: str
    question: str
    earlier: str
    choice: str
    choice_none: str
    declined: str


@lru_cache(maxsize=1)
def default_prompt() -> Prompt:
    return Prompt(**tomllib.loads(PROMPT_FILE.read_text("utf-8")))


@dataclass(frozen=True)
class Passages:
    """The numbered passages a model reads: each a run of consecutive sentences of one article."""

    groups: tuple[tuple[int, ...], ...]  # sentence ids of each passage, in article order
    text: str  # "[n] (date) sentence sentence" lines

    @property
    def sentences(self) -> list[int]:
        return [sid for group in self.groups for sid in group]


class LMReader:
    """Reads the best sentences with a language model (qa/llm) for a phrase that answers."""

    name = "lm"

    def __init__(self, index: Index, runtime: Runtime, sentences: int = 4,
                 budget: int = 1100, context: bool = True, prompt: Prompt | None = None,
                 calibration: Calibration | None = None) -> None:
        self.index = index
        self.runtime = runtime
        self.sentences = sentences
        self.budget = budget  # characters of passages: about 250 prompt tokens
        self.context = context
        self.prompt = prompt or default_prompt()
        self.calibration = calibration if calibration is not None else load_calibration()

    def passages(self, scored: Sequence[tuple[int, float]]) -> Passages:
        """The best sentences, each with the sentence before it for context, within the budget."""
        index, chosen, used, picked = self.index, set(), 0, 0
        for sid, _ in scored:
            if picked >= self.sentences:
                break
            cost = 0 if sid in chosen else min(len(index.sentence_text(sid)), MAX_SENTENCE)
            if chosen and used + cost > self.budget:
                continue
            chosen.add(sid)
            used, picked = used + cost, picked + 1
            prev = sid - 1
            if (self.context and prev >= 0 and prev not in chosen and index.sent_sources[prev] ==
                    index.sent_sources[sid] and used + len(index.sentence_text(prev)) <= self.budget):
                chosen.add(prev)
                used += len(index.sentence_text(prev))
        # Consecutive sentences of one article read as one passage, best passage first.
        rank = {sid: r for r, (sid, _) in enumerate(scored)}
        groups: list[list[int]] = []
        for sid in sorted(chosen, key=lambda s: (index.sent_sources[s], int(index.sent_spans[s][0]))):
            last = groups[-1][-1] if groups else None
            if last == sid - 1 and index.sent_sources[last] == index.sent_sources[sid]:
                groups[-1].append(sid)
            else:
                groups.append([sid])
        groups.sort(key=lambda g: min(rank.get(s, len(rank)) for s in g))
        lines = []
        for n, group in enumerate(groups, 1):
            date = human_date(index.articles[index.sent_sources[group[0]]].date)
            body = " ".join(" ".join(index.sentence_text(s)[:MAX_SENTENCE].split()) for s in group)
            lines.append(f"[{n}] " + (f"({date}) " if date else "") + body)
        return Passages(tuple(tuple(g) for g in groups), "\n".join(lines))

    def messages(self, question: str, passages: Passages,
                 earlier: tuple[str, str] | None = None) -> list[dict[str, str]]:
        p = self.prompt
        before = p.earlier.format(question=earlier[0], answer=earlier[1]) if earlier else ""
        user = p.question.format(passages=passages.text, earlier=before, question=question.strip())
        return [{"role": "system", "content": p.system}, {"role": "user", "content": user}]

    def read(self, question: str, scored: Sequence[tuple[int, float]],
             earlier: tuple[str, str] | None = None) -> Reading:
        """The model's phrase as a span of the sentence that holds it, with its confidence; a
        phrase no sentence holds is never a span. Raises ModelProblem or RuntimeFailed."""
        passages = self.passages(scored)
        if not passages.groups:
            return Reading((), 1.0, reader=self.name)
        reply = self.runtime.complete(self.messages(question, passages, earlier), max_tokens=24,
                                 stop=["\n"], top_logprobs=10)
        return self._reading(question, reply, passages, self.runtime.name)

    def _reading(self, question: str, reply: Completion, passages: Passages, model: str) -> Reading:
        x = features(reply.tokens, self.prompt.declined)
        stats = {"prompt_tokens": reply.prompt_tokens, "cached_tokens": reply.cached_tokens,
                 "output_tokens": reply.completion_tokens, "read_ms": round(reply.ms, 1),
                 **{name: round(value, 4) for name, value in zip(FEATURES, x, strict=True)}}
        phrase = clean(reply.text)
        common = {"reader": self.name, "model": model, "stats": stats}
        if not phrase or normalise(phrase).startswith(normalise(self.prompt.declined)):
            return Reading((), self.calibration.no_answer(x[3], False), declined=True, **common)
        ids = passages.sentences
        texts = [self.index.sentence_text(s) for s in ids]
        found = locate_all(phrase, texts)
        if not found:
            log.info("the reader's phrase %r is in no sentence it read: not shown", phrase[:80])
            return Reading((), self.calibration.no_answer(x[3], True), unverified=phrase, **common)
        # Of the sentences that hold the phrase, the one that names most of what the question names,
        # then says most of its words ("Shaheen told AFP" over "speaking with AFP news agency, an
        # unnamed member" for "which agency did Shaheen speak to?"), then the best passage's.
        said = set(tokenize(phrase))
        names = [set(tokenize(h)) - said for h in hinges(question)]
        asked = set(tokenize(question)) - said

        def support(f: tuple[int, int, int]) -> tuple[int, int, int]:
            words = set(tokenize(texts[f[0]]))
            return sum(bool(n) and n <= words for n in names), len(asked & words), -f[0]

        n, a, b = max(found, key=support)
        sid = ids[n]
        candidate = self._candidate(sid, a, b)
        confidence = self.calibration.confidence(x)
        return Reading((Span(sid, candidate, math.exp(x[0]), confidence),),
                       self.calibration.no_answer(x[3], False), **common)

    def _candidate(self, sid: int, a: int, b: int) -> Candidate:
        """The found phrase as a candidate span, labelled like the entity it coincides with."""
        text = self.index.sentence_text(sid)
        offset = int(self.index.sent_spans[sid][0])
        span = text[a:b]
        label = next((s[2] for s in self.index.annotations.of(sid)
                      if s[0] == offset + a and s[1] == offset + b), "LM")
        return Candidate(offset + a, offset + b, label, "", (0, len(text)), span, normalise(span),
                         frozenset(tokenize(span)), span[:1].isupper() or span[:1].isdigit())

    def choose(self, question: str, scored: Sequence[tuple[int, float]], options: Sequence[str]
               ) -> np.ndarray:
        """The model's probability of each option given the passages (its letter's, renormalised)."""
        passages = self.passages(scored)
        letters = LETTERS[: len(options)]
        p = self.prompt
        none = p.choice_none if any(o.strip().lower() == "none of the above" for o in options) else ""
        listed = "\n".join(f"{letter}. {option}" for letter, option in zip(letters, options, strict=False))
        user = p.choice.format(passages=passages.text or "(none)", question=question.strip(), options=listed,
                               none=none)
        reply = self.runtime.complete([{"role": "system", "content": p.system},
                                       {"role": "user", "content": user}], max_tokens=1,
                                      grammar="root ::= " + " | ".join(f'"{c}"' for c in letters),
                                      top_logprobs=20)
        probs = np.full(len(options), 1e-9)
        top = reply.tokens[0].top if reply.tokens else ()
        for text, lp in top:
            letter = text.strip()
            if len(letter) == 1 and letter in letters:
                probs[letters.index(letter)] += math.exp(lp)
        return probs / probs.sum()
