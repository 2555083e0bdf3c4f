"""The language-model reader's prompts (prompt.toml), and the chat messages made from them."""

from __future__ import annotations

import tomllib
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from qa.question.parse import Asked
from qa.readers.base import Earlier

PROMPT_FILE = Path(__file__).with_name("prompt.toml")
LETTERS = "ABCDEFGH"
Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Prompt:
    """The reader's prompt texts (qa/readers/lm/prompt.toml)."""

    system: str
    question: str
    earlier: str
    reason: str
    manner: str
    choice: str
    choice_none: str
    declined: str

    def warm_messages(self) -> Messages:
        """The fixed instruction alone: reading it once fills the cache every question reuses."""
        return [{"role": "system", "content": self.system}, {"role": "user", "content": "Passages:"}]

    def question_messages(self, asked: Asked, excerpts: str, earlier: Earlier | None = None) -> Messages:
        """The instruction, the numbered excerpts, the earlier turn (for a follow-up) and the question."""
        before = self.earlier.format(question=earlier[0], answer=earlier[1]) if earlier else ""
        hint = self.reason if asked.kind == "reason" else self.manner if asked.kind == "manner" else ""
        user = self.question.format(passages=excerpts, earlier=before, question=asked.text.strip(), hint=hint)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]

    def choice_messages(self, asked: Asked, excerpts: str, options: Sequence[str]) -> Messages:
        """The instruction, the excerpts, the question and its lettered options."""
        letters = LETTERS[: len(options)]
        none = self.choice_none if any(o.strip().lower() == "none of the above" for o in options) else ""
        listed = "\n".join(f"{letter}. {option}" for letter, option in zip(letters, options, strict=False))
        user = self.choice.format(passages=excerpts or "(none)", question=asked.text.strip(), options=listed,
                                  none=none)
        return [{"role": "system", "content": self.system}, {"role": "user", "content": user}]


@lru_cache(maxsize=1)
def default_prompt() -> Prompt:
    """The shipped prompts, read once per process."""
    return Prompt(**tomllib.loads(PROMPT_FILE.read_text("utf-8")))
