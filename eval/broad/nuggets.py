"""Whether an answer holds a nugget: every group of a nugget's ``match`` has one of its forms in the
answer's text (case, punctuation, thousands commas and accents ignored; whole words)."""

from __future__ import annotations

import re
import unicodedata
from dataclasses import dataclass

_MARKERS = re.compile(r"\s*\[\d+\]")


@dataclass(frozen=True)
class Nugget:
    """One fact a good answer holds: its words for people, whether it is vital, and how it is found."""

    fact: str
    vital: bool
    match: tuple[tuple[str, ...], ...]  # every group must be found: one of its forms each

    @classmethod
    def of(cls, row: dict) -> Nugget:
        """A nugget from its JSON row: {"fact", "vital", "match": [[form, form], [form]]}."""
        return cls(row["fact"], bool(row["vital"]), tuple(tuple(g) for g in row["match"]))


def plain(text: str) -> str:
    """Lower case, no accents, no citation markers or thousands commas, punctuation to spaces."""
    text = unicodedata.normalize("NFKD", _MARKERS.sub(" ", text))
    text = "".join(c for c in text if not unicodedata.combining(c)).lower()
    text = re.sub(r"(?<=\d),(?=\d{3})", "", text).replace("’", "'")
    return " " + " ".join(re.sub(r"[^\w'%$.-]+", " ", text).replace(". ", " ").split()) + " "


def found(form: str, text: str) -> bool:
    """The form, as whole words, in text (both plain)."""
    return f" {plain(form).strip()} " in text


def holds(nugget: Nugget, answer: str) -> bool:
    """Whether the answer's text holds the nugget."""
    text = plain(answer)
    return all(any(found(form, text) for form in group) for group in nugget.match)
