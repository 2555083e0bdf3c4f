"""One factory for the readers: which reads the short answer, and which answers when it cannot."""

from __future__ import annotations

from dataclasses import dataclass

from qa.config import Config, ReaderName
from qa.llm.base import Runtime
from qa.llm.queue import FairQueue
from qa.readers.base import Reader
from qa.readers.lm.choice import MultipleChoice
from qa.readers.lm.reader import LMReader
from qa.readers.lm.verdict import VerdictReader
from qa.readers.queued import QueuedChoice, QueuedReader
from qa.readers.spans.reader import SpanReader


@dataclass(frozen=True)
class Readers:
    """The configured reader, the span reader that stands in for it, multiple choice, and the reader
    of yes/no verdicts (None without the language model)."""

    reader: Reader
    fallback: Reader
    choice: QueuedChoice
    verdict: Reader | None = None


def make_readers(config: Config, runtime: Runtime, queue: FairQueue) -> Readers:
    """The readers ``config.reading.reader`` names: the language model's behind the queue, each with the
    thresholds calibrated for it."""
    reading = config.reading
    spans = SpanReader(min_short=reading.min_short)
    timeout = reading.read_timeout
    sentences, budget = reading.reader_sentences, reading.reader_budget
    choice = QueuedChoice(MultipleChoice(runtime, sentences, budget), queue, timeout)
    if reading.reader is ReaderName.SPANS:
        return Readers(spans, spans, choice)
    lm = LMReader(runtime, sentences, budget, reading.reader_min_short, reading.reader_decline)
    verdict = VerdictReader(runtime, sentences, budget, reading.verdict_sure, reading.verdict_no)
    return Readers(QueuedReader(lm, queue, timeout), spans, choice, QueuedReader(verdict, queue, timeout))
