"""What every language-model runtime is: the Runtime protocol, its completions and its failures."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from qa.errors import QAError

Messages = list[dict[str, str]]


@dataclass(frozen=True)
class Token:
    """One written token: its text, log-probability, and the runtime's best alternatives."""

    text: str
    logprob: float
    top: tuple[tuple[str, float], ...] = ()


@dataclass(frozen=True)
class Completion:
    """What the model wrote, token by token, and what it read to write it."""

    text: str
    tokens: tuple[Token, ...] = ()
    prompt_tokens: int = 0
    cached_tokens: int = 0  # prompt tokens taken from the cache (the fixed instruction)
    ms: float = 0.0

    @property
    def completion_tokens(self) -> int:
        """How many tokens the model wrote."""
        return len(self.tokens)


class RuntimeFailed(QAError):
    """The runtime refused or failed one request (too long a prompt, a server down, an internal error)."""


class Runtime(Protocol):
    """Runs chat messages through a model and returns the reply with its token log-probabilities."""

    @property
    def name(self) -> str:
        """The model's name, as answers report it."""
        ...

    def complete(self, messages: Messages, max_tokens: int = 16, stop: Sequence[str] = (),
                 grammar: str | None = None, top_logprobs: int = 0,
                 on_text: Callable[[str], None] | None = None,
                 give_up: Callable[[], bool] | None = None) -> Completion:
        """The reply at temperature 0; ``on_text`` hears each piece as it is written, and writing
        stops once ``give_up()`` is true (by default: the queued job it runs in was given up)."""
        ...


def raise_for(reply: object) -> None:
    """RuntimeFailed when a server's reply is an error."""
    if isinstance(reply, dict) and "error" in reply:
        error = reply["error"]
        message = error.get("message") if isinstance(error, dict) else str(error)
        raise RuntimeFailed(str(message))
