"""One factory for the readers: which reads the short answer, and which answers when it cannot."""

from __future__ import annotations

from dataclasses import dataclass

from qa.config import Config, ReaderName
from qa.index.load import Index
from qa.llm.base import Runtime
from qa.llm.queue import FairQueue
from qa.readers.base import Reader
from qa.readers.lm.choice import MultipleChoice
from qa.readers.lm.reader import LMReader
from qa.readers.queued import QueuedChoice, QueuedReader
from qa.readers.spans.reader import SpanReader


@dataclass(frozen=True)
class Readers:
    """The configured reader, the span reader that stands in for it, and multiple choice."""

    reader: Reader
    fallback: Reader
    choice: QueuedChoice


def make_readers(config: Config, index: Index, runtime: Runtime, queue: FairQueue) -> Readers:
    """The readers ``config.reader`` names over one index: the language model's behind the queue."""
    spans = SpanReader(index)
    timeout = config.read_timeout
    choice = QueuedChoice(MultipleChoice(index, runtime, config.reader_sentences, config.reader_budget),
                          queue, timeout)
    if config.reader is ReaderName.SPANS:
        return Readers(spans, spans, choice)
    lm = LMReader(index, runtime, config.reader_sentences, config.reader_budget)
    return Readers(QueuedReader(lm, queue, timeout), spans, choice)
