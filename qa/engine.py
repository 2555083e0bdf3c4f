"""The engine: one object that owns the settings, embedder, index, retriever and answerer."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import Path

from qa.answer import Answer, Choice
from qa.answering.compose import Answerer
from qa.answering.policy import AnswerPolicy
from qa.articles import uploads
from qa.articles.load import Article, folder_state, load_articles
from qa.config import Config, ReaderName
from qa.embedding import choose
from qa.embedding.base import Embedder
from qa.embedding.export import export_or_warn
from qa.embedding.onnx_runtime import OnnxEmbedder, onnx_available
from qa.errors import ArticleError, IndexProblem
from qa.generation.generate import generate
from qa.index.build import BuildReport, build_index
from qa.index.load import Index, index_settings, load_index, stale_reason
from qa.llm.base import Runtime
from qa.llm.queue import FairQueue
from qa.llm.runtimes import LazyRuntime, configured_runtime, generation_runtime
from qa.passage import Passage
from qa.readers.base import ReaderUnavailable
from qa.readers.factory import make_readers
from qa.readers.lm.prompt import default_prompt
from qa.retrieval.retrieve import Mode, Retriever, clean_question, day, valid_text
from qa.text.nlp import Tagger, pipeline_id

log = logging.getLogger(__name__)


class QA:
    """Question answering over the articles in ``config.seeds_dir``."""

    def __init__(self, config: Config | None = None, embedder: Embedder | None = None,
                 tagger: Tagger | None = None, runtime: Runtime | None = None) -> None:
        self.config = config or Config.from_env()
        self._embedder = embedder
        self._tagger = tagger
        # The language model the "lm" reader runs, loaded on first use, and the jobs waiting for
        # it (readings, multiple choice, generation), reader_slots at a time, in turn across users.
        # Its cache starts with the reader's fixed instruction, restored from the cache folder.
        self.runtime: Runtime = runtime or LazyRuntime(
            lambda: configured_runtime(self.config, default_prompt().warm_messages()))
        self.queue = FairQueue(self.config.reader_slots)
        # An embedder given by the caller is used for questions too; only our own gets the twin.
        self._own_embedder = embedder is None
        self._query_embedder: Embedder | None = None
        self._index: Index | None = None
        self._seen: tuple | None = None  # the articles folder as last indexed (names, sizes, times)
        self._lock = threading.RLock()
        # The articles folder's lock, always taken before _lock (uploads.FolderLock).
        self._folder = uploads.FolderLock(self.config.index_dir)

    @property
    def embedder(self) -> Embedder:
        """The embedder that builds the index, loaded on first use."""
        if self._embedder is None:
            self._embedder = choose.build_embedder(self.config)
        return self._embedder

    def _float_export(self) -> Path | None:
        return choose.float_export(self.config) if self._own_embedder else None

    @property
    def query_embedder(self) -> Embedder:
        """The embedder for questions: the torch-free ONNX twin when the index allows it."""
        return self._query_embedder_for(self.index)

    def _query_embedder_for(self, index: Index) -> Embedder:
        if self._query_embedder is None:
            own = choose.query_embedder(self.config, index.meta) if self._own_embedder else None
            self._query_embedder = own or self.embedder
        return self._query_embedder

    def _settings(self) -> dict:
        """What the index must have been built with, known without loading the model."""
        name, kind, pooled = choose.identity(self.config, self._embedder, self._own_embedder)
        nlp = self._tagger.name if self._tagger is not None else pipeline_id(self.config.nlp)
        return index_settings(name, kind, self.config.chunk_size, self.config.chunk_overlap, pooled, nlp)

    def build(self, force: bool = False, progress: bool = False, articles: list[Article] | None = None,
              then: Callable[[], None] | None = None) -> BuildReport:
        """Bring the index up to date with the articles, embedding only what changed.

        ``then`` runs as soon as the new index is on disk, before it is loaded to answer from.
        The folder is read under its lock, so an upload in another process is seen whole or not at all.
        """
        with self._folder if articles is None else contextlib.nullcontext(), self._lock:
            if articles is None:
                self._seen = folder_state(self.config.seeds_dir)
            if self._own_embedder and onnx_available(self.config.model) and (
                    self.config.onnx_queries or self.config.onnx_build):
                export_or_warn(self.config.cache_dir)
                if self._float_export() and not isinstance(self._embedder, OnnxEmbedder):
                    self._embedder = None  # just exported: build with it, not with torch
            report = build_index(
                self.config.index_dir,
                self._load() if articles is None else articles,
                self.embedder, self.config.chunk_size, self.config.chunk_overlap, force=force,
                progress=progress, ann_threshold=self.config.ann_threshold,
                tagger=self._tagger or Tagger(self.config.nlp),
            )
            if then is not None:
                then()
            if self._index is None or report.path != self._index.path:
                self._swap(load_index(self.config.index_dir))
            return report

    def refresh(self) -> BuildReport | None:
        """Index what changed in the articles folder since it was last read; None when nothing did."""
        state = folder_state(self.config.seeds_dir)
        if state == self._seen:
            return None
        with self._folder, self._lock:
            state = folder_state(self.config.seeds_dir)
            if self._index is None or state == self._seen:
                _ = self.index  # loading checks the folder anyway
                return None
            return self.build()  # a folder that fails to build is retried only once it changes again

    def _swap(self, index: Index) -> None:
        """Answer from index from now on; questions already running finish on the old one."""
        same = self._index is not None and all(
            self._index.meta.get(key) == index.meta.get(key) for key in ("model", "embedder", "dim"))
        if not same:
            self._query_embedder = None
        # The new answerer is made before it is published, so a question never waits for it.
        self._index = index
        self.__dict__["answerer"] = self._answerer_for(index)

    def _load(self) -> list[Article]:
        """The folder's articles; text extracted from HTML, PDF, Word and feeds is kept by the index."""
        return load_articles(self.config.seeds_dir, self.config.index_dir / "extracted")

    @property
    def index(self) -> Index:
        """The loaded index, built or updated first when it is missing or stale."""
        index = self._index  # no lock once loaded: pages render while an upload builds
        if index is not None:
            return index
        with self._folder, self._lock:
            if self._index is None:
                self._index = self._open()
            return self._index

    def _open(self) -> Index:
        settings = self._settings()
        self._seen = folder_state(self.config.seeds_dir)
        try:
            index = load_index(self.config.index_dir)
        except IndexProblem as exc:
            log.warning("%s; rebuilding it now", exc.problem)
            self.build(force=True)
            return self._index or load_index(self.config.index_dir)
        articles = self._load()
        if reason := stale_reason(index.meta, settings, articles):
            log.warning("index is out of date (%s); updating it", reason)
            self.build(articles=articles)
            return self._index or load_index(self.config.index_dir)
        return index

    @cached_property
    def answerer(self) -> Answerer:
        """The answerer over the current index."""
        return self._answerer_for(self.index)

    def _answerer_for(self, index: Index) -> Answerer:
        c = self.config
        retriever = Retriever(index, self._query_embedder_for(index), c.fusion_depth, c.rrf_k)
        readers = make_readers(c, index, self.runtime, self.queue)
        return Answerer(retriever, readers.reader, readers.fallback, AnswerPolicy.from_config(c),
                        readers.choice)

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
        question = clean_question(valid_text(question), self.config.max_question_chars)
        return self.answerer.retriever.search(question, k or self.config.k, mode, day(since), day(until))

    def answer(self, question: str, history: Sequence[object] | None = None, mode: Mode = "hybrid",
               since: object = None, until: object = None, user: str = "",
               reader: ReaderName | None = None, today: object = None) -> Answer:
        """A cited answer, or answered=False when the (dated since..until) articles don't cover it;
        ``reader=ReaderName.SPANS`` skips the model; ``today``: the day it is asked (default: now)."""
        return self.answerer.answer(valid_text(question), history, mode, day(since), day(until), user,
                                    reader, day(today))

    def choose(self, question: str, options: Sequence[str], mode: Mode = "hybrid", since: object = None,
               until: object = None, user: str = "", today: object = None) -> Choice:
        """Which option the articles support, by the language model's probability of each; raises
        ReaderUnavailable without the model."""
        return self.answerer.choose(valid_text(question), options, mode, day(since), day(until), user,
                                    day(today))

    def stream(self, question: str, history: Sequence[object] | None = None, mode: Mode = "hybrid",
               since: object = None, until: object = None, user: str = "") -> Iterator[Answer]:
        """The cited sentences at once (``reading`` True) while the language model reads, then the
        answer; ``user`` takes turns with other users for the model."""
        return self.answerer.stream(valid_text(question), history, mode, day(since), day(until), user)

    def stream_llm(self, question: str, history: Sequence[object] | None = None, since: object = None,
                   until: object = None, user: str = "") -> Iterator[Answer]:
        """Provisional generative answers (verified sentences so far), the final answer last."""
        base = self.answer(question, history, since=since, until=until, user=user)
        c = self.config
        return generate(base, generation_runtime(c, self.runtime), self.queue, self.index,
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

    def add_article(self, name: str, data: bytes,
                    progress: Callable[[float, str], None] | None = None) -> BuildReport:
        """Index an uploaded file's articles, then save it under its safe name; on failure neither changes."""
        c = self.config
        return uploads.add_file(self._folder, c.seeds_dir, c.max_articles, name, data, self._load,
                                self._build_with, progress)

    def _build_with(self, articles: list[Article], then: Callable[[], None]) -> BuildReport:
        try:
            return self.build(articles=articles, then=then)
        except ArticleError:
            self._index = None  # the index holds an article the folder lacks: the next use fixes it
            raise
