"""Lexical scoring at retrieval time: a BM25 index over chunks and idf term weights for sentences."""

from __future__ import annotations

import json
import logging
import math
from collections import Counter
from pathlib import Path

import numpy as np

from qa.text.words import tokenize


def _bm25s():  # the bm25s module
    """Import bm25s, which sets its own logger to DEBUG on import; keep it quiet."""
    import bm25s

    logging.getLogger("bm25s").setLevel(logging.WARNING)
    return bm25s


class BM25Index:
    """BM25 over chunk texts (bm25s), saved to and loaded from a folder."""

    def __init__(self, model: object) -> None:
        self._model = model

    @classmethod
    def build(cls, texts: list[str]) -> BM25Index:
        """Index texts (one per chunk)."""
        model = _bm25s().BM25()
        model.index([tokenize(t) or ["\u2205"] for t in texts], show_progress=False)
        return cls(model)

    @classmethod
    def load(cls, folder: Path) -> BM25Index:
        """Load an index saved by save()."""
        return cls(_bm25s().BM25.load(str(folder), show_progress=False))

    def save(self, folder: Path) -> None:
        """Write the index files into folder."""
        self._model.save(str(folder))  # type: ignore[attr-defined]

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every chunk for the query (zeros when no term is known)."""
        terms = [t for t in tokenize(query) if t in self._model.vocab_dict]  # type: ignore[attr-defined]
        if not terms:
            return np.zeros(self._model.scores["num_docs"], dtype=np.float32)  # type: ignore[attr-defined]
        return np.asarray(self._model.get_scores(terms), dtype=np.float32)  # type: ignore[attr-defined]


class TermWeights:
    """Inverse document frequency of each stem over the indexed sentences."""

    def __init__(self, idf: dict[str, float], default: float) -> None:
        self.idf = idf
        self.default = default

    @classmethod
    def build(cls, texts: list[str]) -> TermWeights:
        """Count in how many texts each stem appears."""
        df: Counter[str] = Counter()
        for text in texts:
            df.update(set(tokenize(text)))
        n = max(len(texts), 1)
        idf = {t: math.log(1 + (n - c + 0.5) / (c + 0.5)) for t, c in df.items()}
        return cls(idf, math.log(1 + (n + 0.5) / 0.5))

    def weight(self, term: str) -> float:
        """The idf of a stem, the rarest-term value when unseen."""
        return self.idf.get(term, self.default)

    def to_json(self) -> str:
        """Serialise for the index folder."""
        return json.dumps({"default": self.default, "idf": self.idf}, ensure_ascii=False)

    @classmethod
    def from_json(cls, raw: str) -> TermWeights:
        """Read what to_json wrote."""
        data = json.loads(raw)
        return cls(data["idf"], data["default"])
