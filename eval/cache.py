"""An embedder wrapper that keeps every vector in sqlite, keyed by sha256 of model and text."""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path

import numpy as np

from qa import Embedder

DEFAULT_CACHE = Path(__file__).parent / "results" / "cache" / "embeddings.sqlite"


class CachingEmbedder:
    """Delegates to an embedder, embedding only texts whose vectors are not stored yet."""

    def __init__(self, inner: Embedder, path: Path = DEFAULT_CACHE) -> None:
        # Same name and dim as the wrapped model, so indexes built through it stay valid.
        self.inner = inner
        self.name = inner.name
        self.dim = inner.dim
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
        found: dict[str, np.ndarray] = {}
        with self._lock:
            for i in range(0, len(keys), 500):
                batch = keys[i : i + 500]
                marks = ",".join("?" * len(batch))
                for key, blob in self._db.execute(f"SELECT key, v FROM vec WHERE key IN ({marks})", batch):
                    found[key] = np.frombuffer(blob, dtype=np.float32)
        missing = sorted({k: i for i, k in enumerate(keys) if k not in found}.values())
        self.hits += len(texts) - len(missing)
        self.misses += len(missing)
        if missing:
            vectors = self.inner.embed([texts[i] for i in missing], show_progress=show_progress)
            with self._lock, self._db:
                self._db.executemany(
                    "INSERT OR REPLACE INTO vec VALUES (?, ?)",
                    [(keys[i], v.astype(np.float32).tobytes())
                     for i, v in zip(missing, vectors, strict=True)],
                )
            for i, v in zip(missing, vectors, strict=True):
                found[keys[i]] = v
        for i, key in enumerate(keys):
            out[i] = found[key]
        return out
