"""The library: the articles folder and its index kept in step, and the embedders that built it."""

from __future__ import annotations

import contextlib
import logging
import threading
from collections.abc import Callable
from pathlib import Path

from qa.articles import uploads
from qa.articles.load import Article, folder_state, load_articles
from qa.config import Config
from qa.embedding import choose
from qa.embedding.base import Embedder
from qa.embedding.export import export_or_warn
from qa.embedding.onnx_runtime import OnnxEmbedder, onnx_available
from qa.errors import ArticleError, IndexProblem
from qa.index.build import BuildReport, build_index
from qa.index.load import Index, index_settings, load_index, stale_reason
from qa.text.nlp import Tagger, pipeline_id

log = logging.getLogger(__name__)


class Library:
    """The articles in ``config.seeds_dir`` and their index in ``config.index_dir``: built, updated
    and swapped in whole; ``on_index`` hears of each index it starts answering from."""

    def __init__(self, config: Config, embedder: Embedder | None = None, tagger: Tagger | None = None,
                 on_index: Callable[[Index], None] = lambda _: None) -> None:
        self.config = config
        self._embedder = embedder
        self._tagger = tagger
        self.on_index = on_index
        # An embedder given by the caller is used for questions too; only our own gets the twin.
        self._own_embedder = embedder is None
        self._query_embedder: Embedder | None = None
        self._index: Index | None = None
        self._seen: tuple | None = None  # the articles folder as last indexed (names, sizes, times)
        self._lock = threading.RLock()
        # The articles folder's lock, always taken before _lock (uploads.FolderLock).
        self._folder = uploads.FolderLock(config.index_dir)

    @property
    def embedder(self) -> Embedder:
        """The embedder that builds the index, loaded on first use."""
        if self._embedder is None:
            self._embedder = choose.build_embedder(self.config)
        return self._embedder

    def query_embedder(self, index: Index) -> Embedder:
        """The embedder for questions over an index: the torch-free ONNX twin when the index allows it."""
        if self._query_embedder is None:
            own = choose.query_embedder(self.config, index.meta) if self._own_embedder else None
            self._query_embedder = own or self.embedder
        return self._query_embedder

    def _settings(self) -> dict:
        """What the index must have been built with, known without loading the model."""
        name, kind, pooled = choose.identity(self.config, self._embedder, self._own_embedder)
        c = self.config.indexing
        nlp = self._tagger.name if self._tagger is not None else pipeline_id(c.nlp)
        return index_settings(name, kind, c.chunk_size, c.chunk_overlap, pooled, nlp)

    def _exported(self) -> None:
        """Export the packaged model to ONNX once per machine, and build with the export from then on."""
        c = self.config.indexing
        if self._own_embedder and onnx_available(c.model) and (c.onnx_queries or c.onnx_build):
            export_or_warn(self.config.cache_dir)
            float_export: Path | None = choose.float_export(self.config)
            if float_export and not isinstance(self._embedder, OnnxEmbedder):
                self._embedder = None  # just exported: build with it, not with torch

    def build(self, force: bool = False, progress: bool = False, articles: list[Article] | None = None,
              then: Callable[[], None] | None = None) -> BuildReport:
        """Bring the index up to date with the articles, embedding only what changed.

        ``then`` runs as soon as the new index is on disk, before it is loaded to answer from.
        The folder is read under its lock, so an upload in another process is seen whole or not at all.
        """
        with self._folder if articles is None else contextlib.nullcontext(), self._lock:
            if articles is None:
                self._seen = folder_state(self.config.seeds_dir)
            self._exported()
            c = self.config.indexing
            report = build_index(
                self.config.index_dir, self.load() if articles is None else articles,
                self.embedder, c.chunk_size, c.chunk_overlap, force=force, progress=progress,
                ann_threshold=c.ann_threshold, tagger=self._tagger or Tagger(c.nlp),
            )
            if then is not None:
                then()
            if self._index is None or report.path != self._index.path:
                self.use_index(load_index(self.config.index_dir))
            return report

    def refresh(self) -> BuildReport | None:
        """Index what changed in the articles folder since it was last read; None when nothing did."""
        if folder_state(self.config.seeds_dir) == self._seen:
            return None
        with self._folder, self._lock:
            if self._index is None or folder_state(self.config.seeds_dir) == self._seen:
                _ = self.index  # loading checks the folder anyway
                return None
            return self.build()  # a folder that fails to build is retried only once it changes again

    def use_index(self, index: Index) -> None:
        """Answer from this loaded index from now on; questions already running finish on the old one."""
        same = self._index is not None and all(
            self._index.meta.get(key) == index.meta.get(key) for key in ("model", "embedder", "dim"))
        if not same:
            self._query_embedder = None
        self.on_index(index)  # what answers from it is made before it is published
        self._index = index

    def load(self) -> list[Article]:
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
                index = self._open()
                if index is not self._index:  # a rebuild while opening already swapped it in
                    self.use_index(index)
            assert self._index is not None
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
        articles = self.load()
        if reason := stale_reason(index.meta, settings, articles):
            log.warning("index is out of date (%s); updating it", reason)
            self.build(articles=articles)
            return self._index or load_index(self.config.index_dir)
        return index

    def add_article(self, name: str, data: bytes,
                    progress: Callable[[float, str], None] | None = None) -> BuildReport:
        """Index an uploaded file's articles, then save it under its safe name; on failure neither changes."""
        c = self.config
        return uploads.add_file(self._folder, c.seeds_dir, c.team.max_articles, name, data, self.load,
                                self._build_with, progress)

    def _build_with(self, articles: list[Article], then: Callable[[], None]) -> BuildReport:
        try:
            return self.build(articles=articles, then=then)
        except ArticleError:
            self._index = None  # the index holds an article the folder lacks: the next use fixes it
            raise
