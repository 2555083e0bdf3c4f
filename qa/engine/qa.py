"""The engine: one object that owns the settings, the library (articles and index), the language
model and its queue, and the answering pipeline over the current index."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from functools import cached_property

from qa.answer import Answer, Choice
from qa.answering.answerer import Answerer
from qa.answering.draft import Drafter
from qa.articles.load import Article
from qa.config import Config, ReaderName
from qa.embedding.base import Embedder
from qa.engine.library import Library
from qa.generation.generate import generate
from qa.index.build import BuildReport
from qa.index.load import Index
from qa.llm.base import Runtime
from qa.llm.queue import FairQueue
from qa.llm.runtimes import LazyRuntime, configured_runtime, generation_runtime
from qa.passage import Passage
from qa.readers.base import ReaderUnavailable
from qa.readers.factory import make_readers
from qa.readers.lm.prompt import default_prompt
from qa.retrieval.retrieve import Mode, Retriever, clean_question, day, valid_text
from qa.sentences.gather import Gatherer
from qa.text.nlp import Tagger


class QA:
    """Question answering over the articles in ``config.seeds_dir``."""

    def __init__(self, config: Config | None = None, embedder: Embedder | None = None,
                 tagger: Tagger | None = None, runtime: Runtime | None = None) -> None:
        self.config = config or Config.from_env()
        # The language model the "lm" reader runs, loaded on first use, and the jobs waiting for
        # it (readings, multiple choice, generation), reader_slots at a time, in turn across users.
        # Its cache starts with the reader's fixed instruction, restored from the cache folder.
        self.runtime: Runtime = runtime or LazyRuntime(
            lambda: configured_runtime(self.config, default_prompt().warm_messages()))
        self.queue = FairQueue(self.config.reading.reader_slots)
        self.library = Library(self.config, embedder, tagger, on_index=self._answer_from)

    @property
    def index(self) -> Index:
        """The loaded index, built or updated first when it is missing or stale."""
        return self.library.index

    @property
    def embedder(self) -> Embedder:
        """The embedder that builds the index, loaded on first use."""
        return self.library.embedder

    @property
    def query_embedder(self) -> Embedder:
        """The embedder for questions: the torch-free ONNX twin when the index allows it."""
        return self.library.query_embedder(self.index)

    def build(self, force: bool = False, progress: bool = False, articles: list[Article] | None = None,
              then: Callable[[], None] | None = None) -> BuildReport:
        """Bring the index up to date with the articles, embedding only what changed (``then`` runs
        once the new index is on disk, before it is answered from)."""
        return self.library.build(force, progress, articles, then)

    def refresh(self) -> BuildReport | None:
        """Index what changed in the articles folder since it was last read; None when nothing did."""
        return self.library.refresh()

    def use_index(self, index: Index) -> None:
        """Answer from this loaded index from now on (one built elsewhere, say on a cluster);
        questions already running finish on the old one."""
        self.library.use_index(index)

    def add_article(self, name: str, data: bytes,
                    progress: Callable[[float, str], None] | None = None) -> BuildReport:
        """Index an uploaded file's articles, then save it under its safe name; on failure neither changes."""
        return self.library.add_article(name, data, progress)

    def _answer_from(self, index: Index) -> None:
        """Make the pipeline over a new index before the library publishes it: no question waits."""
        self.__dict__["answerer"] = self._answerer_for(index)

    @cached_property
    def answerer(self) -> Answerer:
        """The answering pipeline over the current index."""
        return self._answerer_for(self.index)

    def _answerer_for(self, index: Index) -> Answerer:
        c = self.config
        retriever = Retriever(index, self.library.query_embedder(index), c.retrieval.fusion_depth,
                              c.retrieval.rrf_k)
        drafter = Drafter(retriever, Gatherer(index, retriever.passage), c)
        return Answerer(drafter, make_readers(c, self.runtime, self.queue), c)

    def warm(self) -> ReaderName:
        """Load the index and the reader before the first question; the reader that will read
        (the fallback's name when the configured one cannot be loaded: the log says why)."""
        answerer = self.answerer
        try:
            answerer.reader.warm()
        except ReaderUnavailable:
            return answerer.fallback.name
        return answerer.reader.name

    def retrieve(self, question: str, k: int | None = None, mode: Mode = "hybrid",
                 since: object = None, until: object = None) -> list[Passage]:
        """The k passages that best match the question (of articles dated since..until, if given)."""
        c = self.config.retrieval
        question = clean_question(valid_text(question), c.max_question_chars)
        return self.answerer.retriever.search(question, k or c.k, mode, day(since), day(until))

    def answer(self, question: str, history: Sequence[object] | None = None, mode: Mode = "hybrid",
               since: object = None, until: object = None, user: str = "", quick: bool = False,
               today: object = None) -> Answer:
        """A cited answer, or answered=False when the (dated since..until) articles don't cover it;
        ``quick`` skips the language model (the span reader reads); ``today``: the day it is asked."""
        return self.answerer.answer(valid_text(question), history, mode, day(since), day(until), user,
                                    quick, day(today))

    def choose(self, question: str, options: Sequence[str], mode: Mode = "hybrid", since: object = None,
               until: object = None, user: str = "", today: object = None) -> Choice:
        """Which option the articles support, by the language model's probability of each; raises
        ReaderUnavailable without the model."""
        return self.answerer.choose(valid_text(question), options, mode, day(since), day(until), user,
                                    day(today))

    def stream(self, question: str, history: Sequence[object] | None = None, mode: Mode = "hybrid",
               since: object = None, until: object = None, user: str = "") -> Iterator[Answer]:
        """The cited sentences at once (``provisional``) while the language model reads, then the
        answer; ``user`` takes turns with other users for the model."""
        return self.answerer.stream(valid_text(question), history, mode, day(since), day(until), user)

    def stream_llm(self, question: str, history: Sequence[object] | None = None, since: object = None,
                   until: object = None, user: str = "") -> Iterator[Answer]:
        """Provisional generative answers (verified sentences so far), the final answer last."""
        base = self.answer(question, history, since=since, until=until, user=user)
        c = self.config.generation
        return generate(base, generation_runtime(self.config, self.runtime), self.queue, self.index,
                        self.answerer.retriever.embed_query, c.llm_timeout, history, user,
                        c.llm_url or "in process")

    def answer_llm(self, question: str, history: Sequence[object] | None = None,
                   on_partial: Callable[[Answer], None] | None = None, since: object = None,
                   until: object = None) -> Answer:
        """A generated answer whose every sentence is verified, or the extractive one with a notice."""
        final = None
        for final in self.stream_llm(question, history, since, until):
            (on_partial or (lambda _: None))(final)
        assert final is not None
        return final
