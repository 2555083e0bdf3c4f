"""What every reader is: the Reader protocol, the Reading it returns, and its spans."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from typing import Protocol

from qa.config import ReaderName
from qa.errors import QAError
from qa.question.record import Question
from qa.sentences.record import Sentence

# The sentences a reader reads, in the order it should read them.
Sentences = Sequence[Sentence]


@dataclass(frozen=True)
class Candidate:
    """One span of one sentence that could answer a question, in article offsets."""

    start: int
    end: int
    label: str
    role: str  # the head word's dependency label ("nsubj^": subject of the main verb)
    clause: tuple[int, int]  # the clause it belongs to, in sentence offsets
    text: str
    key: str  # normalised text (qa.text.normalise.key): candidates with the same key state the same thing
    terms: frozenset[str]
    proper: bool  # opens with a capital letter or a digit
    # The span's words as (start, end in the sentence, stems, lower case), for trimming.
    words: tuple[tuple[int, int, frozenset[str], bool], ...] = ()


@dataclass(frozen=True)
class Span:
    """A candidate a reader scored: the sentence it is in, what it says, and its probability of answering."""

    sentence: Sentence
    candidate: Candidate
    p: float
    # The calibrated chance that this span is the answer (for the span reader: given its lead).
    confidence: float = 0.0


@dataclass(frozen=True)
class Reading:
    """A reader's verdict: candidates best first (one per distinct text), the no-answer score, and the
    reader's own calibrated thresholds for showing a phrase and for declining."""

    spans: tuple[Span, ...]
    no_answer: float
    reader: ReaderName = ReaderName.SPANS
    model: str = ""  # the language model that read, for the "lm" reader
    # The language model said the passages don't state the answer, or wrote a phrase that no
    # passage holds word for word (never shown; kept here for the answer's policy and the log).
    declined: bool = False
    unverified: str | None = None
    stats: dict[str, float] = field(default_factory=dict)  # prompt and written tokens, read_ms
    given: tuple[Sentence, ...] = ()  # the sentences the reader read, when it chose among them
    # Its phrase is shown from this confidence; the answer is refused from this no-answer score.
    min_short: float = 0.0
    declines_from: float = float("inf")
    verdict: str | None = None  # a yes/no question's: "yes", "no" or "unclear"

    @property
    def best(self) -> Span | None:
        """The best span, or None when the reader found none."""
        return self.spans[0] if self.spans else None

    @property
    def sure(self) -> bool:
        """True when its best span is confident enough to be shown."""
        return self.best is not None and self.best.confidence >= self.min_short

    @classmethod
    def empty(cls, reader: ReaderName, **thresholds: float) -> Reading:
        """No span: what a provisional answer is composed with while the reader reads."""
        return cls((), 1.0, reader=reader, **thresholds)  # type: ignore[arg-type]

    def with_rivals(self, other: Reading) -> Reading:
        """This reading, with other's spans after its own (but in the sentence of its best): the
        rival dated answers a reader naming one phrase does not list."""
        best = self.best
        return replace(self, spans=self.spans + tuple(s for s in other.spans
                                                      if not best or s.sentence.id != best.sentence.id))


@dataclass(frozen=True)
class Waiting:
    """A reading not under way yet: how many questions are read before this one."""

    ahead: int


class ReaderUnavailable(QAError):
    """The reader could not read this question (its model is missing or failed, or the wait ran
    out); ``code`` says which (qa.answering.notices), and the fallback reader answers."""

    def __init__(self, code: str, detail: str = "") -> None:
        super().__init__(detail or code)
        self.code = code
        self.detail = detail


class Reader(Protocol):
    """Reads the best sentences for the phrase that answers a question (``QA_READER`` chooses)."""

    @property
    def name(self) -> ReaderName:
        """Which reader this is."""
        ...

    def warm(self) -> None:
        """Load what reading needs, before the first question; ReaderUnavailable when it cannot."""
        ...

    def read(self, question: Question, sentences: Sentences) -> Reading:
        """The spans that answer, best first, and the chance that none does."""
        ...

    def stream(self, question: Question, sentences: Sentences, user: str = "") -> Iterator[Waiting | Reading]:
        """Where the reading stands while it waits its turn (``Waiting``), then the ``Reading``."""
        ...


class ReadsAtOnce:
    """For readers with no wait: nothing to warm, and a stream that is the reading alone."""

    def warm(self) -> None:
        """Nothing to load ahead."""

    def read(self, question: Question, sentences: Sentences) -> Reading:
        raise NotImplementedError

    def stream(self, question: Question, sentences: Sentences, user: str = "") -> Iterator[Waiting | Reading]:
        """The reading, at once: nobody waits in line for it."""
        yield self.read(question, sentences)
