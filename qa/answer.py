"""The answer: short answer, cited sentences, evidence and refusal, as every surface shows it."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field

from qa.config import ReaderName
from qa.passage import Passage

NOT_COVERED = "The articles don't cover this."


@dataclass(frozen=True)
class Trace:
    """How an answer was read, for evaluation and debugging: what the reader was given and what
    it said, shown or not, and the refusal checks. Never in ``to_dict``: a phrase the model wrote
    that no article says is kept here, and only here."""

    given: tuple[Passage, ...] = ()  # the sentences the reader read, exact
    phrase: str | None = None  # its best phrase found in them, shown or not
    confidence: float = 0.0
    no_answer: float = 1.0
    unverified: str | None = None  # a phrase it wrote that no sentence it read holds
    declined: bool = False  # it wrote that the sentences don't answer
    stats: dict[str, float] = field(default_factory=dict)  # its tokens and calibration features
    span_phrases: tuple[str, ...] = ()  # the reader's candidates, best first (the model's: its phrase)
    span_confidence: float = 0.0
    missing: tuple[str, ...] = ()  # the question's names and numbers no retrieved passage mentions
    lacks_kind: bool = False  # it asks for a count, sum or share that no retrieved sentence holds
    pool: tuple[Passage, ...] = ()  # the passages whose sentences were ranked for the reader


@dataclass(frozen=True)
class Part:
    """One piece of an answer as the surfaces lay it out: its text with its [n] markers, and what it
    is: a sentence, an item of a list, or one side's position in a comparison (``label``: the side)."""

    text: str
    item: bool = False
    label: str | None = None


@dataclass(frozen=True)
class Answer:
    """An answer whose ``[n]`` markers point at ``citations[n-1]``, exact cited sentences."""

    question: str
    text: str
    answered: bool
    citations: tuple[Passage, ...] = ()
    short: str | None = None
    passages: tuple[Passage, ...] = ()
    query: str = ""
    evidence: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    # Which method wrote the text ("extractive" or "llm"; not "path", which gradio_client
    # takes for a file to download), generated sentences that failed
    # verification, and why a requested generative answer fell back (see qa/generation/generate.py).
    method: str = "extractive"
    dropped: tuple[str, ...] = ()
    notice: str | None = None  # what a reader should know of this answer (qa/notices.py), in words
    # The short answer's exact span (``text`` is ``short``, offsets into its article, ``score`` the
    # reader's confidence), shown only when the reader is confident; and the reader's confidence in
    # its best span (calibrated: its probability and its lead over the runner-up) and no-answer
    # score either way.
    short_span: Passage | None = None
    confidence: float = 0.0
    no_answer: float = 1.0
    # Which reader found the short answer ("lm", the language model, or "spans", the span
    # ranker), the language model that read (empty for "spans"), and whether this answer is
    # provisional: its sentences are cited while the reader is still reading (the chat shows
    # "reading…"); the final answer follows. Reading time is timings["read_ms"].
    reader: ReaderName = ReaderName.SPANS
    model: str = ""
    provisional: bool = False
    # While provisional: how many questions the language model reads before this one.
    ahead: int = 0
    # The notice as a code for programs (qa/notices.py), and how the question was answered: its kind
    # (qa/question/forms.py: "factoid", a short answer; the others, by the cited sentences).
    notice_code: str | None = None
    kind: str = "factoid"
    # How the text is laid out (a list's items, a comparison's sides; empty: one paragraph), and a
    # yes/no question's verdict: "yes", "no" or "unclear" (None for other kinds).
    parts: tuple[Part, ...] = ()
    verdict: str | None = None
    trace: Trace = field(default_factory=Trace, repr=False, compare=False)

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict, citations and passages included (not the trace)."""
        out = asdict(self)
        del out["trace"]
        out["reader"] = str(self.reader)
        return out


@dataclass(frozen=True)
class Choice:
    """Which of a question's options the articles support: the model's probability of each."""

    question: str
    options: tuple[str, ...]
    probabilities: tuple[float, ...]
    best: int  # the option with the highest probability
    passages: tuple[Passage, ...] = ()  # the retrieved passages
    read: tuple[Passage, ...] = ()  # the sentences the model weighed the options against

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict."""
        return asdict(self)
