"""The answer: short answer, cited sentences, evidence and refusal, as every surface shows it."""

from __future__ import annotations

import re
from dataclasses import asdict, dataclass, field

from qa.passage import Passage

NOT_COVERED = "The articles don't cover this."


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
    notice: str | None = None
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
    reader: str = "spans"
    model: str = ""
    reading: bool = False

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict, citations and passages included."""
        return asdict(self)


def contains_span(text: str, span: str) -> bool:
    """True when span's words occur in text as a run (case and punctuation ignored)."""
    words = re.findall(r"\w+", span.lower())
    return bool(words) and re.search(r"\b" + r"\W+".join(map(re.escape, words)) + r"\b",
                                     text.lower()) is not None
