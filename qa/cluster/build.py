"""`qa build --ray`: Ray Data reads the corpus, an actor pool embeds it, this process writes the index."""

from __future__ import annotations

import contextlib
import logging
import math
import os
import socket
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import numpy as np

from qa.articles.load import Article
from qa.articles.uploads import FolderLock
from qa.cluster.corpus import Corpus, ray_module, read_corpus
from qa.cluster.replace import refuse_replacing
from qa.cluster.shards import SHARD_ROWS, reuse, write_shards
from qa.cluster.worker import ArticleWorker, Piece, Settings, unpack
from qa.config import Config
from qa.embedding.export import export_onnx, float_path
from qa.errors import IndexProblem, QAError
from qa.files import file_lock
from qa.index.build import BuildReport
from qa.index.load import FORMAT, Index, index_settings, load_index, stale_reason
from qa.index.write import Parts, write_folder
from qa.text.chunk import Chunk
from qa.text.nlp import pipeline_id

log = logging.getLogger(__name__)

ARTICLES_PER_BATCH = 8  # small batches: the pool stays balanced, and a killed actor redoes little


class ClusterError(QAError):
    """The Ray cluster cannot be reached or used."""


def connect(address: str) -> bool:
    """Join the Ray cluster at address ('auto': the one running here); True when this call joined."""
    ray = ray_module()
    if ray.is_initialized():
        return False
    _reachable(address)
    try:
        with _stderr_held():  # Ray's C++ client logs each retry there: a refusal would print 20 lines
            ray.init(address=address, logging_level=logging.WARNING, log_to_driver=False)
    except Exception as exc:  # ConnectionError, ValueError, RuntimeError by version
        if any("AuthenticationError" in text or "InvalidAuthToken" in text for text in _chain(exc)):
            raise ClusterError(f"the Ray cluster at {address} wants its token, and this process has none "
                               "or another: export RAY_AUTH_MODE=token and the cluster's token "
                               "(RAY_AUTH_TOKEN, or ~/.ray/auth_token); see docs/cluster.md") from None
        reason = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:200]
        raise ClusterError(f"no Ray cluster at {address!r} ({reason}): start one with "
                           "`ray start --head`, then pass its address (or auto)") from None
    return True


@contextlib.contextmanager
def _stderr_held() -> Iterator[None]:
    """Hold what is written to file descriptor 2 (C++ code writes there) during the block: shown
    after it when it succeeds, dropped when it raises (the caller says what went wrong)."""
    sys.stderr.flush()
    saved = os.dup(2)
    with tempfile.TemporaryFile() as held:
        os.dup2(held.fileno(), 2)
        try:
            yield
        finally:
            os.dup2(saved, 2)
            os.close(saved)
        held.seek(0)
        os.write(2, held.read())


def _chain(exc: BaseException | None) -> list[str]:
    """The type and message of an exception and of each one it came from."""
    texts: list[str] = []
    while exc is not None and len(texts) < 10:
        texts.append(f"{type(exc).__name__}: {exc}")
        exc = exc.__cause__ or exc.__context__
    return texts


def _reachable(address: str) -> None:
    """Fail fast when nothing listens at HOST:PORT: ray.init would retry for minutes."""
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        if address != "auto":
            raise ClusterError(f"--ray {address!r} is not HOST:PORT or auto")
        return
    try:
        socket.create_connection((host, int(port)), timeout=5).close()
    except OSError as exc:
        raise ClusterError(f"no Ray cluster at {address} ({exc.strerror or exc}): start one with "
                           "`ray start --head`, then pass its address (or auto)") from None


def build_on_ray(config: Config, address: str, corpus_path: Path | None = None, force: bool = False,
                 workers: int | None = None, progress: bool = False,
                 shard_rows: int = SHARD_ROWS, replace: bool = False) -> BuildReport:
    """Build or update the index on a Ray cluster, embedding only new or changed articles.

    Raises:
        IndexProblem: the index folder holds another corpus's articles, which this build would
            remove, and replace is False.
    """
    began = time.perf_counter()
    joined = connect(address)
    try:
        export_onnx(config.cache_dir)
        export = float_path(config.cache_dir)
        if not export.is_file():
            raise ClusterError(f"the ONNX export {export} is missing: run `qa build` once on this machine")
        c = config.indexing
        settings = Settings(c.model, export.resolve(), c.nlp, c.chunk_size, c.chunk_overlap)
        source = (corpus_path or config.seeds_dir).resolve()
        with FolderLock(config.index_dir):  # no upload lands between reading the folder and writing the index
            corpus = read_corpus(corpus_path or config.seeds_dir)
            if not replace:
                refuse_replacing(config, source, corpus)
            return _build(config, corpus, settings, force, workers, progress, shard_rows, began, source)
    finally:
        if joined:
            ray_module().shutdown()


def _build(config: Config, corpus: Corpus, settings: Settings, force: bool, workers: int | None,
           progress: bool, shard_rows: int, began: float, source: Path) -> BuildReport:
    """Diff against the old index, embed what changed on the cluster, write and swap in."""
    index_dir = config.index_dir
    c = config.indexing
    wanted = index_settings(c.model, "OnnxEmbedder", c.chunk_size, c.chunk_overlap, True, pipeline_id(c.nlp))
    articles = sorted(corpus.articles, key=lambda a: a.source)
    index_dir.mkdir(parents=True, exist_ok=True)
    with file_lock(index_dir / ".lock"):  # one build at a time per index folder
        old = None if force else _old_index(index_dir, wanted)
        old_hashes: dict[str, str] = old.meta["articles"] if old else {}
        same = {a.source for a in articles if old_hashes.get(a.source) == a.sha256}
        if old is not None and stale_reason(old.meta, wanted, articles) is None:
            return BuildReport(old.path, [], [], [], sorted(same), 0, 0, time.perf_counter() - began)
        kept = reuse(old, same) if old is not None and same else {}
        todo = [a for a in articles if a.source not in kept]
        pieces = embed_on_ray(todo, settings, workers, progress)
        parts = _parts(articles, kept, pieces)
        meta = {"format": FORMAT, **wanted, "dim": 384, "corpus": str(source),
                "articles": {a.source: a.sha256 for a in articles}}

        def extra(folder: Path, parts: Parts) -> dict:
            return write_shards(folder, parts, shard_rows)

        path = write_folder(index_dir, articles, parts, meta, config.indexing.ann_threshold, extra)
    log.info("cluster build wrote %s: %d articles embedded, %d reused", path, len(todo), len(kept))
    embedded = (sum(len(p.chunks) for p in pieces.values()), sum(len(p.sentences) for p in pieces.values()))
    return BuildReport.compare(path, articles, old_hashes, same, embedded, began, unchanged=set(kept))


def _old_index(index_dir: Path, wanted: dict) -> Index | None:
    """The index to update, or None when there is none usable (then everything is embedded)."""
    try:
        old = load_index(index_dir)
    except IndexProblem as exc:
        log.info("not reusing the old index: %s", exc)
        return None
    if reason := stale_reason(old.meta, wanted):
        log.info("rebuilding from scratch: %s", reason)
        return None
    return old


def embed_on_ray(articles: list[Article], settings: Settings, workers: int | None,
                 progress: bool) -> dict[str, Piece]:
    """Each article's Piece, computed by a pool of ArticleWorker actors, one per CPU by default."""
    if not articles:
        return {}
    ray = ray_module()
    context = ray.data.DataContext.get_current()
    context.enable_progress_bars = progress
    workers = workers or max(1, int(ray.cluster_resources().get("CPU", 1)))
    rows = [{"source": a.source, "title": a.title, "text": a.text, "sha256": a.sha256} for a in articles]
    dataset = ray.data.from_items(rows, override_num_blocks=math.ceil(len(rows) / ARTICLES_PER_BATCH))
    embedded = dataset.map_batches(
        ArticleWorker, fn_constructor_kwargs={"settings": settings}, batch_size=ARTICLES_PER_BATCH,
        batch_format="numpy", compute=ray.data.ActorPoolStrategy(size=workers), num_cpus=1,
    )
    pieces: dict[str, Piece] = {}
    for batch in embedded.iter_batches(batch_size=None, batch_format="numpy"):
        for source, payload in zip(batch["source"], batch["payload"], strict=True):
            pieces[str(source)] = unpack(payload)
    missing = {a.source for a in articles} - set(pieces)
    if missing:
        raise ClusterError(f"the cluster returned no result for {len(missing)} article(s): "
                           "run the build again")
    return pieces


def _parts(articles: list[Article], kept: dict, pieces: dict[str, Piece]) -> Parts:
    """The whole index's rows in article order: reused rows for kept articles, new ones for the rest."""
    chunks: list[Chunk] = []
    sentences: list[tuple[str, int, int]] = []
    chunk_vectors: list[np.ndarray] = []
    sent_vectors: list[np.ndarray] = []
    annotations: dict[str, list] = {}
    for a in articles:
        if a.source in kept:
            spans, c_vec, sents, s_vec, annotations[a.source] = kept[a.source]
        else:
            p = pieces[a.source]
            spans, c_vec, sents, s_vec, annotations[a.source] = (p.chunks, p.chunk_vectors, p.sentences,
                                                                 p.sent_vectors, p.spans)
        chunks.extend(Chunk(a.source, s, e, a.text[s:e]) for s, e in spans)
        sentences.extend((a.source, int(s), int(e)) for s, e in sents)
        chunk_vectors.append(np.asarray(c_vec, np.float32).reshape(-1, 384))
        sent_vectors.append(np.asarray(s_vec, np.float32).reshape(-1, 384))
    return Parts(
        chunks=chunks,
        chunk_vectors=np.concatenate(chunk_vectors),
        sentences=sentences,
        # float16: half the disk and page cache, at the cost eval/perf/cluster.py measures.
        sent_vectors=np.concatenate(sent_vectors).astype(np.float16),
        embedded_chunks=sum(len(p.chunks) for p in pieces.values()),
        embedded_sentences=sum(len(p.sentences) for p in pieces.values()),
        new_sentences={},
        annotations=annotations,
    )
