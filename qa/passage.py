"""The cited passage: one small frozen record passed through API, CLI, UI and eval."""

from __future__ import annotations

from dataclasses import asdict, dataclass


@dataclass(frozen=True)
class Passage:
    """A span of an article: ``article.text[start:end] == text``, with its relevance score."""

    source: str
    title: str
    text: str
    start: int
    end: int
    score: float = 0.0

    def overlaps(self, other: Passage) -> bool:
        """True when both spans are in the same article and share at least one character."""
        return self.source == other.source and self.start < other.end and other.start < self.end

    def contains(self, other: Passage) -> bool:
        """True when other's span lies inside this one."""
        return self.source == other.source and self.start <= other.start and other.end <= self.end

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict of the fields."""
        return asdict(self)
