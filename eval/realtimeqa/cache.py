"""An embedder wrapper that keeps every vector in sqlite, keyed by sha256 of model and text."""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from eval.paths import CACHE
from qa import Config, Embedder
from qa.embedding.export import export_onnx, float_path
from qa.embedding.onnx_runtime import OnnxEmbedder
from qa.embedding.pooling import can_pool
from qa.embedding.transformer import get_embedder
from qa.text.nlp import Span, Tagger

DEFAULT_CACHE = CACHE / "embeddings.sqlite"


def records_log(year: str) -> Path:
    """Where a RealTime QA run logs each question's record (it quotes the benchmark: git-ignored)."""
    return DEFAULT_CACHE.parent / ("rtqa_records.jsonl" if year == "2022" else f"rtqa_{year}_records.jsonl")


class CachingEmbedder:
    """Delegates to an embedder, embedding only texts whose vectors are not stored yet."""

    def __init__(self, inner: Embedder, path: Path = DEFAULT_CACHE) -> None:
        # Same name and dim as the wrapped model, so indexes built through it stay valid.
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
        if not can_pool(inner):
            self.embed_spans = None  # type: ignore[assignment]  # builds embed sentences alone
        path.parent.mkdir(parents=True, exist_ok=True)
        # timeout: a background RealTime QA run and a foreground run may share the file.
        self._db = sqlite3.connect(str(path), timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS vec (key TEXT PRIMARY KEY, v BLOB)")
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def _key(self, text: str) -> str:
        return hashlib.sha256(f"{self.name}\0{text}".encode()).hexdigest()

    def embed(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        """Return stored vectors, embedding and storing the missing ones in one batch."""
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        keys = [self._key(t) for t in texts]
        found = self._lookup(keys, lambda missing: self.inner.embed(
            [texts[i] for i in missing], show_progress=show_progress))
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out

    def embed_spans(self, texts: list[str], spans: list[list[tuple[int, int]]]
                    ) -> tuple[np.ndarray, list[np.ndarray]]:
        """The inner embed_spans, stored per text and its spans: a row for the text, one per span."""
        keys = [self._key(f"{t}\0spans\0{s}") for t, s in zip(texts, spans, strict=True)]

        def compute(missing: list[int]) -> list[np.ndarray]:
            vectors, pooled = self.inner.embed_spans([texts[i] for i in missing],  # type: ignore[attr-defined]
                                                     [spans[i] for i in missing])
            return [np.vstack([v[None], p]) for v, p in zip(vectors, pooled, strict=True)]

        found = self._lookup(keys, compute)
        rows = [found[k].reshape(-1, self.dim) for k in keys]
        return np.stack([r[0] for r in rows]), [r[1:] for r in rows]

    def _lookup(self, keys: list[str], compute: Callable[[list[int]], Sequence[np.ndarray]]
                ) -> dict[str, np.ndarray]:
        """Stored arrays by key; the missing ones computed (by index into keys) and stored."""
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                batch = keys[i : i + 500]
                marks = ",".join("?" * len(batch))
                for key, blob in self._db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", batch):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        missing = sorted({k: i for i, k in enumerate(keys) if k not in found}.values())
        self.hits += len(keys) - len(missing)
        self.misses += len(missing)
        if missing:
            vectors = compute(missing)
            with self._lock, self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vec VALUES (?, ?)",
                    [(keys[i], v.astype(np.float32).tobytes())
                     for i, v in zip(missing, vectors, strict=True)],
                )
            for i, v in zip(missing, vectors, strict=True):
                found[keys[i]] = v
        return found


class CachingTagger:
    """Delegates to a Tagger, tagging only texts whose spans are not stored yet (same sqlite file)."""

    def __init__(self, inner: Tagger, path: Path = DEFAULT_CACHE) -> None:
        self.inner = inner
        self.name = inner.name
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), timeout=60, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("CREATE TABLE IF NOT EXISTS tags (key TEXT PRIMARY KEY, spans TEXT)")
        self._lock = threading.Lock()

    def tag(self, texts: Sequence[str], sentences: Sequence[Sequence[tuple[int, int]]],
            progress: bool = False) -> list[list[Span]]:
        """Stored spans per text; the missing texts tagged in one batch and stored."""
        keys = [hashlib.sha256(f"{self.name}\0{t}\0{list(s)}".encode()).hexdigest()
                for t, s in zip(texts, sentences, strict=True)]
        with self._lock:
            found = {k: [tuple(x) for x in json.loads(v)] for k, v in self._db.execute(
                f"SELECT key, spans FROM tags WHERE key IN ({','.join('?' * len(keys))})", keys)}
        missing = [i for i, k in enumerate(keys) if k not in found]
        if missing:
            tagged = self.inner.tag([texts[i] for i in missing], [sentences[i] for i in missing],
                                    progress=progress)
            with self._lock, self._db:
                self._db.executemany("INSERT OR REPLACE INTO tags VALUES (?, ?)",
                                     [(keys[i], json.dumps(s)) for i, s in zip(missing, tagged, strict=True)])
            found.update({keys[i]: s for i, s in zip(missing, tagged, strict=True)})
        return [list(found[k]) for k in keys]


def build_embedder() -> Embedder:
    """The embedder the product builds with: the float32 ONNX export (same vectors, no torch)."""
    cfg = Config.from_env()
    try:
        export_onnx(cfg.cache_dir)
        return OnnxEmbedder(cfg.indexing.model, os.cpu_count() or 1, float_path(cfg.cache_dir))
    except Exception:  # sentence-transformers gives the same vectors, slower
        return get_embedder(cfg.indexing.model)

