"""The sentence record: one article sentence with all a reader or composer needs, so none of them
looks anything up in the index."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from qa.passage import Passage
from qa.text.nlp import Span as Tag


@dataclass(frozen=True)
class Sentence:
    """A sentence, exactly cited (``passage``), its words, tags and vector, how well it answers the
    question, and the sentences around it in its article."""

    # Its place in the index: records of one sentence share it, and consecutive sentences of an
    # article have consecutive ids.
    id: int
    passage: Passage = field(compare=False)  # the exact sentence, its article's title, date, author, url
    terms: tuple[str, ...] = field(default=(), compare=False, repr=False)  # content-word stems, in order
    tags: tuple[Tag, ...] = field(default=(), compare=False, repr=False)  # entities and noun chunks
    vector: np.ndarray = field(default_factory=lambda: np.zeros(0, np.float32), compare=False, repr=False)
    # How rare each of its terms is over the index (its idf over that of an unseen word, 0 to 1).
    rarity: Mapping[str, float] = field(default_factory=dict, compare=False, repr=False)
    score: float = field(default=0.0, compare=False)  # how well it answers the question (scoring.py)
    order: float = field(default=0.0, compare=False)  # the fitted reading order's score (higher first)
    features: Mapping[str, float] = field(default_factory=dict, compare=False, repr=False)
    top: bool = field(default=False, compare=False)  # in the k best passages: what an answer cites from
    before: Sentence | None = field(default=None, compare=False, repr=False)
    after: Sentence | None = field(default=None, compare=False, repr=False)

    @property
    def text(self) -> str:
        """The sentence's exact text."""
        return self.passage.text

    @property
    def source(self) -> str:
        """The article it is in."""
        return self.passage.source

    @property
    def start(self) -> int:
        """Its offset in the article."""
        return self.passage.start

    @property
    def date(self) -> str | None:
        """Its article's date (YYYY-MM-DD), None when undated."""
        return self.passage.date

    def cited(self, score: float | None = None) -> Passage:
        """The Passage that cites it, with its score."""
        return replace(self.passage, score=round(self.score if score is None else score, 4))

    def span(self, start: int, end: int, score: float) -> Passage:
        """A Passage of part of it, in article offsets."""
        offset = self.passage.start
        return replace(self.passage, text=self.text[start - offset:end - offset], start=start, end=end,
                       score=round(score, 4))

    def window(self) -> list[Sentence]:
        """The sentence with those around it in its article, in article order."""
        return [s for s in (self.before, self, self.after) if s is not None]

    def similarity(self, other: Sentence) -> float:
        """The cosine of two sentences' vectors."""
        return float(self.vector @ other.vector)


def rarity_of(sentence: Sentence, terms: frozenset[str]) -> float:
    """The mean rarity of some of the sentence's words (a name every sentence repeats is common)."""
    return sum(sentence.rarity.get(t, 1.0) for t in terms) / len(terms) if terms else 0.0
