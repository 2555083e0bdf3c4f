"""Multiple choice: which of a question's options the excerpts support, by the model's letter for each."""

from __future__ import annotations

import math
from collections.abc import Sequence

import numpy as np

from qa.errors import BadInput
from qa.index.load import Index
from qa.llm.base import Runtime
from qa.question.parse import Asked
from qa.readers.base import Sentences
from qa.readers.lm.excerpts import dated_for, excerpts
from qa.readers.lm.prompt import LETTERS, Prompt, default_prompt

MAX_OPTIONS = len(LETTERS)


class MultipleChoice:
    """Reads the same excerpts as the language-model reader, then weighs each lettered option."""

    def __init__(self, index: Index | None, runtime: Runtime, sentences: int, budget: int,
                 prompt: Prompt | None = None) -> None:
        self.index = index
        self.runtime = runtime
        self.sentences = sentences
        self.budget = budget
        self.prompt = prompt or default_prompt()

    def given(self, scored: Sentences) -> list[int]:
        """The sentences it weighs the options against: those the reader reads."""
        if self.index is None or not scored:
            return []
        return excerpts(self.index, scored, self.sentences, self.budget).sentences

    def choose(self, asked: Asked, scored: Sentences, options: Sequence[str]) -> np.ndarray:
        """The model's probability of each option given the excerpts (its letter's, renormalised)."""
        if not 1 <= len(options) <= MAX_OPTIONS:
            raise BadInput(f"give between 1 and {MAX_OPTIONS} options, not {len(options)}")
        text = ""
        if self.index is not None and scored:
            text = excerpts(self.index, scored, self.sentences, self.budget, dated_for(asked)).text
        letters = LETTERS[: len(options)]
        reply = self.runtime.complete(self.prompt.choice_messages(asked, text, options), max_tokens=1,
                                      grammar="root ::= " + " | ".join(f'"{c}"' for c in letters),
                                      top_logprobs=20)
        probs = np.full(len(options), 1e-9)
        top = reply.tokens[0].top if reply.tokens else ()
        for piece, lp in top:
            letter = piece.strip()
            if len(letter) == 1 and letter in letters:
                probs[letters.index(letter)] += math.exp(lp)
        return probs / probs.sum()
