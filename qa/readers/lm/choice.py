"""Multiple choice: which of a question's options the excerpts support, by the model's letter for each."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from qa.errors import BadInput
from qa.llm.base import Runtime
from qa.question.record import Question
from qa.readers.base import Sentences
from qa.readers.lm.excerpts import dated_for, excerpts
from qa.readers.lm.prompt import LETTERS, Prompt, default_prompt
from qa.sentences.record import Sentence

MAX_OPTIONS = len(LETTERS)


class MultipleChoice:
    """Reads the same excerpts as the language-model reader, then weighs each lettered option."""

    def __init__(self, runtime: Runtime, sentences: int, budget: int, prompt: Prompt | None = None) -> None:
        self.runtime = runtime
        self.sentences = sentences
        self.budget = budget
        self.prompt = prompt or default_prompt()

    def given(self, scored: Sentences) -> list[Sentence]:
        """The sentences it weighs the options against: those the reader reads."""
        return excerpts(scored, self.sentences, self.budget).sentences if scored else []

    def choose(self, question: Question, scored: Sentences, options: Sequence[str]) -> np.ndarray:
        """The model's probability of each option given the excerpts (its letter's, renormalised)."""
        if not 1 <= len(options) <= MAX_OPTIONS:
            raise BadInput(f"give between 1 and {MAX_OPTIONS} options, not {len(options)}")
        text = excerpts(scored, self.sentences, self.budget, dated_for(question)).text if scored else ""
        letters = LETTERS[: len(options)]
        reply = self.runtime.complete(self.prompt.choice_messages(question, text, options), max_tokens=1,
                                      grammar="root ::= " + " | ".join(f'"{c}"' for c in letters),
                                      top_logprobs=20)
        probs = np.full(len(options), 1e-9)
        top = reply.tokens[0].top if reply.tokens else ()
        for piece, lp in top:
            letter = piece.strip()
            if len(letter) == 1 and letter in letters:
                probs[letters.index(letter)] += math.exp(lp)
        return probs / probs.sum()
