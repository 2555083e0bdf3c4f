"""The language-model reader's prompts (prompt.toml), and the chat messages made from them."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from qa import rules
from qa.question.record import Question

PROMPT_FILE = Path(__file__).with_name("prompt.toml")
LETTERS = "ABCDEFGH"
Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Prompt:
    """The reader's prompt texts (qa/readers/lm/prompt.toml)."""

    system: str
    question: str
    earlier: str
    choice: str
    choice_none: str
    declined: str

    def warm_messages(self) -> Messages:
        """The fixed instruction alone: reading it once fills the cache every question reuses."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": "Passages:"}]

    def question_messages(self, question: Question, excerpts: str) -> Messages:
        """The instruction, the excerpts, the earlier turn (for a follow-up) and the question."""
        earlier = question.earlier if rules.on("reading.earlier_turn") else None
        before = self.earlier.format(question=earlier[0], answer=earlier[1]) if earlier else ""
        user = self.question.format(passages=excerpts, earlier=before, question=question.text.strip())
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def choice_messages(self, question: Question, excerpts: str, options: Sequence[str]) -> Messages:
        """The instruction, the excerpts, the question and its lettered options."""
        letters = LETTERS[: len(options)]
        none = self.choice_none if rules.on("choice.none_of_the_above") and any(
            o.strip().lower() == "none of the above" for o in options) else ""
        listed = "\n".join(f"{letter}. {option}" for letter, option in zip(letters, options, strict=False))
        user = self.choice.format(passages=excerpts or "(none)", question=question.text.strip(),
                                  options=listed,
                                  none=none)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


@lru_cache(maxsize=1)
def default_prompt() -> Prompt:
    """The shipped prompts, read once per process."""
    return Prompt(**tomllib.loads(PROMPT_FILE.read_text("utf-8")))
