"""Yes or no: the language model reads the best sentences and says whether they answer a yes/no
question yes, no, or not clearly, by its probability of each word (a grammar allows only those)."""

from __future__ import annotations

import math

from qa.config import ReaderName
from qa.llm.base import Runtime
from qa.question.record import Question
from qa.readers.base import Reading, ReadsAtOnce, Sentences
from qa.readers.lm.excerpts import excerpts
from qa.readers.lm.prompt import LETTERS, Prompt, default_prompt

WORDS = ("yes", "no", "unclear")
# Asked as multiple choice, which the instruction already teaches: asked for a bare yes or no, the
# small model said yes to nearly every question, whatever the passages said.
OPTIONS = ("Yes", "No", "The passages do not say")
GRAMMAR = "root ::= " + " | ".join(f'"{letter}"' for letter in LETTERS[:len(OPTIONS)])


class VerdictReader(ReadsAtOnce):
    """Reads the best sentences for a yes/no question's verdict: "no" from ``no`` probability of it,
    else "yes" from ``sure``, else "unclear"."""

    name = ReaderName.LM

    def __init__(self, runtime: Runtime, sentences: int, budget: int, sure: float, no: float,
                 prompt: Prompt | None = None) -> None:
        self.runtime = runtime
        self.sentences, self.budget, self.sure, self.no = sentences, budget, sure, no
        self.prompt = prompt or default_prompt()

    def warm(self) -> None:
        """Load the model and read the fixed instruction into its cache."""
        self.runtime.complete(self.prompt.warm_messages(), max_tokens=1)

    def read(self, question: Question, sentences: Sentences) -> Reading:
        """The verdict, the sentences it was read from, and its probabilities in the stats."""
        given = excerpts(sentences, self.sentences, self.budget)
        if not given.groups:
            return Reading((), 1.0, self.name, verdict="unclear")
        messages = self.prompt.choice_messages(question, given.text, OPTIONS)
        reply = self.runtime.complete(messages, max_tokens=1, grammar=GRAMMAR, top_logprobs=20)
        probs = dict.fromkeys(WORDS, 0.0)
        for piece, lp in reply.tokens[0].top if reply.tokens else ():
            if (letter := piece.strip()) in LETTERS[:len(OPTIONS)]:
                probs[WORDS[LETTERS.index(letter)]] += math.exp(lp)
        total = sum(probs.values()) or 1.0
        probs = {w: p / total for w, p in probs.items()}
        verdict = "no" if probs["no"] >= self.no else "yes" if probs["yes"] >= self.sure else "unclear"
        stats = {f"p_{w}": round(p, 4) for w, p in probs.items()} | {"read_ms": round(reply.ms, 1)}
        return Reading((), probs["unclear"], self.name, self.runtime.name, stats=stats,
                       given=tuple(given.sentences), verdict=verdict)
