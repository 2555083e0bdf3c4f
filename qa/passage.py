"""The cited passage: one small frozen record passed through API, CLI, UI and eval."""

from __future__ import annotations

import datetime as dt
from dataclasses import asdict, dataclass


def human_date(iso: str | None) -> str | None:
    """An ISO date as people write it in news ("11 Mar 2020"), None when there is none."""
    if not iso:
        return None
    try:
        day = dt.date.fromisoformat(iso[:10])
    except ValueError:
        return iso
    return f"{day.day} {day.strftime('%b %Y')}"


def shown_date(date: str | None, file_date: str | None = None) -> str | None:
    """The article's date as people write it, else the file's, said to be the file's; None."""
    if date:
        return human_date(date)
    return f"file dated {human_date(file_date)}" if file_date else None


@dataclass(frozen=True)
class Passage:
    """A span of an article: ``article.text[start:end] == text``, with its relevance score."""

    source: str
    title: str
    text: str
    start: int
    end: int
    score: float = 0.0
    # The article's metadata, None when unknown.
    date: str | None = None  # YYYY-MM-DD
    author: str | None = None
    url: str | None = None
    # Only a file's creation date is known (a PDF's, a Word file's): shown as such, never read as the
    # article's date (no date filter or "most recent" takes it).
    file_date: str | None = None

    def overlaps(self, other: Passage) -> bool:
        """True when both spans are in the same article and share at least one character."""
        return self.source == other.source and self.start < other.end and other.start < self.end

    def contains(self, other: Passage) -> bool:
        """True when other's span lies inside this one."""
        return self.source == other.source and self.start <= other.start and other.end <= self.end

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict of the fields."""
        return asdict(self)
