"""Embedders: text to L2-normalised float32 vectors, behind one small interface."""

from __future__ import annotations

import logging
import os
from functools import lru_cache

import numpy as np

from qa.config import DEFAULT_MODEL
from qa.embedding.base import Embedder, length_batches, resolve_model
from qa.errors import QAError, require

log = logging.getLogger(__name__)


class SentenceTransformerEmbedder:
    """Embeds with sentence-transformers, imported only when first needed."""

    def __init__(self, model: str = DEFAULT_MODEL, batch_size: int = 128,
                 batch_chars: int = 16_000) -> None:
        # Texts go to the model shortest first, in batches of at most batch_size texts and
        # batch_chars characters counted as if every text were as long as the batch's longest:
        # a batch of short sentences is big, a batch of passages small, and neither pads much.
        self.name = model
        self.batch_size = batch_size
        self.batch_chars = batch_chars
        self._model = _load(resolve_model(model))
        self.dim = int(self._model.get_embedding_dimension())

    def embed(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Encode texts in batches of similar length into normalised float32 vectors."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch in length_batches(texts, self.batch_size, self.batch_chars):
            out[batch] = self._model.encode(
                [texts[i] for i in batch],
                batch_size=len(batch),
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return out

    def embed_spans(self, texts: list[str], spans: list[list[tuple[int, int]]]
                    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Each text's unit vector, and for each span of it the mean of its tokens' vectors."""
        from qa.embedding.pooling import pool_text

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        pooled = [np.zeros((len(s), self.dim), dtype=np.float32) for s in spans]
        for batch in length_batches(texts, self.batch_size, self.batch_chars):
            chunk = [texts[i] for i in batch]
            # The token vectors that sentence-transformers mean-pools into each text's vector,
            # and where each token lies in the text (special tokens lie at (0, 0)).
            tokens = self._model.encode(chunk, batch_size=len(batch), output_value="token_embeddings",
                                        convert_to_numpy=False, show_progress_bar=False)
            offsets = self._model.tokenizer(chunk, return_offsets_mapping=True, truncation=True,
                                            max_length=self._model.max_seq_length)["offset_mapping"]
            for i, vectors, where in zip(batch, tokens, offsets, strict=True):
                out[i], pooled[i] = pool_text(vectors.float().numpy(),
                                              np.asarray(where, dtype=np.int64).reshape(-1, 2), spans[i])
        return out, pooled


@lru_cache(maxsize=4)
def _load(path: str):  # returns a SentenceTransformer, imported lazily
    """Load a SentenceTransformer once per process, offline."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    require("sentence_transformers", "default")
    from sentence_transformers import SentenceTransformer

    log.info("loading embedding model %s", path)
    # transformers draws a progress bar while loading weights; the library never prints.
    from transformers.utils import logging as hf_logging

    hf_logging.disable_progress_bar()
    try:
        return SentenceTransformer(path, device="cpu")
    except OSError as exc:
        raise QAError(
            f"cannot load embedding model {path!r} offline: set QA_MODEL to a local model "
            "folder, or unset it to use the packaged all-MiniLM-L6-v2"
        ) from exc


def get_embedder(model: str = DEFAULT_MODEL) -> Embedder:
    """The embedder for a model name or path."""
    return SentenceTransformerEmbedder(model)
