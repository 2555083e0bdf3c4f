"""Which embedder builds the index and which embeds questions: decided from the settings, here."""

from __future__ import annotations

from pathlib import Path

from qa.config import Config
from qa.embedding.base import Embedder
from qa.embedding.export import export_path, float_path
from qa.embedding.onnx_runtime import OnnxEmbedder, onnx_available
from qa.embedding.pooling import can_pool
from qa.embedding.transformer import SentenceTransformerEmbedder, get_embedder


def float_export(config: Config) -> Path | None:
    """The float32 ONNX export that builds without torch, when it applies and exists."""
    if not (config.indexing.onnx_build and onnx_available(config.indexing.model)):
        return None
    path = float_path(config.cache_dir)
    return path if path.is_file() else None


def build_embedder(config: Config) -> Embedder:
    """The embedder that builds the index: the float32 export once made, else sentence-transformers."""
    exact = float_export(config)
    model = config.indexing.model
    return OnnxEmbedder(model, config.indexing.build_threads, exact) if exact else get_embedder(model)


def query_embedder(config: Config, meta: dict) -> Embedder | None:
    """The torch-free ONNX twin for questions when the index was built with the packaged model's
    exact vectors (by sentence-transformers or the float export), else None."""
    if (config.indexing.onnx_queries and onnx_available(meta["model"])
            and meta["embedder"] in {SentenceTransformerEmbedder.__name__, OnnxEmbedder.__name__}):
        return OnnxEmbedder(meta["model"], config.indexing.onnx_threads, export_path(config.cache_dir))
    return None


def identity(config: Config, embedder: Embedder | None, own: bool) -> tuple[str, str, bool]:
    """(model name, embedder class, token-pooled sentence vectors) an index must have been built
    with, known without loading the model: the caller's embedder, else ours."""
    if not own and embedder is not None:
        return embedder.name, type(embedder).__name__, can_pool(embedder)
    onnx = isinstance(embedder, OnnxEmbedder) if embedder is not None else float_export(config) is not None
    cls = OnnxEmbedder if onnx else SentenceTransformerEmbedder
    return config.indexing.model, cls.__name__, can_pool(cls)
