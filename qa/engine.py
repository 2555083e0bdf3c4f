"""The engine: one object that owns the settings, embedder, index, retriever and answerer."""

from __future__ import annotations

import logging
import os
import threading
from collections.abc import Callable, Iterator, Sequence
from functools import cached_property
from pathlib import Path

from qa.answer import Answer
from qa.articles import uploads
from qa.articles.load import Article, folder_state, load_articles
from qa.config import Config
from qa.embedding.base import Embedder
from qa.embedding.export import export_or_warn, export_path, float_path
from qa.embedding.onnx_runtime import OnnxEmbedder, onnx_available
from qa.embedding.pooling import can_pool
from qa.embedding.transformer import SentenceTransformerEmbedder, get_embedder
from qa.errors import ArticleError, IndexProblem
from qa.generation.generate import stream_answer
from qa.index.build import BuildReport, build_index
from qa.index.load import Index, index_settings, load_index, stale_reason
from qa.llm.runtime import LazyRuntime, Runtime, configured_runtime
from qa.passage import Passage
from qa.reading.compose import Answerer
from qa.reading.lm_reader import LMReader
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
        # The language model the "lm" reader runs (qa/llm/runtime.py), loaded on first use.
        self.runtime = runtime or LazyRuntime(lambda: configured_runtime(self.config))
        # An embedder given by the caller is used for questions too; only our own gets the twin.
        self._own_embedder = embedder is None
        self._query_embedder: Embedder | None = None
        self._index: Index | None = None
        self._seen: tuple | None = None  # the articles folder as last indexed (names, sizes, times)
        self._lock = threading.RLock()

    @property
    def embedder(self) -> Embedder:
        """The embedder that builds the index, loaded on first use."""
        if self._embedder is None:
            exact = self._float_export()
            self._embedder = (OnnxEmbedder(self.config.model, os.cpu_count() or 1, exact) if exact
                              else get_embedder(self.config.model))
        return self._embedder

    def _float_export(self) -> Path | None:
        """The float32 ONNX export that builds without torch, when it applies and exists."""
        if not (self._own_embedder and self.config.onnx_build and onnx_available(self.config.model)):
            return None
        path = float_path(self.config.cache_dir)
        return path if path.is_file() else None

    @property
    def query_embedder(self) -> Embedder:
        """The embedder for questions: the torch-free ONNX twin when the index allows it."""
        return self._query_embedder_for(self.index)

    def _query_embedder_for(self, index: Index) -> Embedder:
        if self._query_embedder is None:
            meta = index.meta
            # Both embedders of the packaged model give its exact vectors (ST or the float export).
            if (self._own_embedder and self.config.onnx_queries and onnx_available(meta["model"])
                    and meta["embedder"] in {SentenceTransformerEmbedder.__name__, OnnxEmbedder.__name__}):
                self._query_embedder = OnnxEmbedder(meta["model"], self.config.onnx_threads,
                                                    export_path(self.config.cache_dir))
            else:
                self._query_embedder = self.embedder
        return self._query_embedder

    def _settings(self) -> dict:
        """What the index must have been built with, known without loading the model."""
        if not self._own_embedder and self._embedder is not None:
            name, kind, pooled = self._embedder.name, type(self._embedder).__name__, can_pool(self._embedder)
        else:
            onnx = (isinstance(self._embedder, OnnxEmbedder) if self._embedder is not None
                    else self._float_export() is not None)
            cls = OnnxEmbedder if onnx else SentenceTransformerEmbedder
            name, kind, pooled = self.config.model, cls.__name__, can_pool(cls)
        nlp = self._tagger.name if self._tagger is not None else pipeline_id(self.config.nlp)
        return index_settings(name, kind, self.config.chunk_size, self.config.chunk_overlap, pooled, nlp)

    def build(self, force: bool = False, progress: bool = False, articles: list[Article] | None = None,
              then: Callable[[], None] | None = None) -> BuildReport:
        """Bring the index up to date with the articles, embedding only what changed.

        ``then`` runs as soon as the new index is on disk, before it is loaded to answer from.
        """
        with self._lock:
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
        with self._lock:
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
        with self._lock:
            if self._index is None:
                self._index = self._open()
            return self._index

    def _open(self) -> Index:
        settings = self._settings()
        self._seen = folder_state(self.config.seeds_dir)
        try:
            index = load_index(self.config.index_dir)
        except IndexProblem as exc:
            log.warning("%s; building it now", exc)
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
        lm = (LMReader(index, self.runtime, c.reader_sentences, c.reader_budget) if c.reader == "lm"
              else None)
        return Answerer(retriever, c.min_evidence, c.k, max_question_chars=c.max_question_chars,
                        min_short=c.min_short, hinge_evidence=c.hinge_evidence, lm=lm,
                        decline=c.reader_decline)

    def retrieve(self, question: str, k: int | None = None, mode: Mode = "hybrid",
                 since: object = None, until: object = None) -> list[Passage]:
        """The k passages that best match the question (of articles dated since..until, if given)."""
        question = clean_question(valid_text(question), self.config.max_question_chars)
        return self.answerer.retriever.search(question, k or self.config.k, mode, day(since), day(until))

    def answer(self, question: str, history: Sequence[object] | None = None,
               mode: Mode = "hybrid", since: object = None, until: object = None) -> Answer:
        """A cited answer, or answered=False when the (dated since..until) articles don't cover it."""
        return self.answerer.answer(valid_text(question), history, mode, day(since), day(until))

    def stream(self, question: str, history: Sequence[object] | None = None,
               mode: Mode = "hybrid", since: object = None, until: object = None) -> Iterator[Answer]:
        """The cited sentences at once (``reading`` True) while the language model reads, then the answer."""
        return self.answerer.stream(valid_text(question), history, mode, day(since), day(until))

    def stream_llm(self, question: str, history: Sequence[object] | None = None, since: object = None,
                   until: object = None) -> Iterator[Answer]:
        """Provisional generative answers (verified sentences so far), the final answer last."""
        return stream_answer(self, valid_text(question), history, since, until)

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
        # The index is built with the upload before the file appears in the folder, so a crash mid-build
        # leaves both as they were; the file is published the moment the index is on disk, not after
        # it is loaded, so only a crash while it is linked in can split them.
        # Uploads take turns; progress(fraction, message) hears each step.
        filename = uploads.safe_name(name)
        new = uploads.check_upload(filename, data)
        folder, target = self.config.seeds_dir, self.config.seeds_dir / filename
        with uploads.upload_lock(self.config.index_dir):
            uploads.clean_staged(folder)
            uploads.refuse_existing(target)
            articles = uploads.room_for(folder, filename, new, self.config.max_articles, self._load)
            staged = uploads.stage(folder, data)
            if progress is not None:
                progress(0.2, f"indexing {len(new)} new article(s)")
            try:
                report = self.build(articles=[*articles, *new], then=lambda: uploads.publish(staged, target))
            except ArticleError:
                self._index = None  # the index holds an article the folder lacks: the next use fixes it
                raise
            finally:
                staged.unlink(missing_ok=True)  # already gone once published
            log.info("%s added (%d bytes, %d articles, %d chunks embedded)", filename, len(data), len(new),
                     report.embedded_chunks)
            return report
