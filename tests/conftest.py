"""Shared fixtures: a deterministic fake embedder, tiny in-repo articles, the real engine."""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"

from qa import QA, Config  # noqa: E402
from qa.text.words import tokenize  # noqa: E402

DATA = Path(__file__).parent / "data"
SEEDS = Path(__file__).parent.parent / "seeds"


class FakeEmbedder:
    """Hashes content-word stems into buckets: texts sharing words get similar vectors."""

    name = "fake-hash"
    dim = 64

    def __init__(self) -> None:
        self.calls: list[int] = []

    def embed(self, texts: list[str], show_progress: bool = False) -> np.ndarray:
        self.calls.append(len(texts))
        out = np.zeros((len(texts), self.dim), dtype=np.float32)
        for row, text in enumerate(texts):
            for term in tokenize(text) or ["<empty>"]:
                bucket = int(hashlib.md5(term.encode()).hexdigest(), 16) % self.dim
                out[row, bucket] += 1.0
            out[row] /= np.linalg.norm(out[row])
        return out

    @property
    def embedded(self) -> int:
        return sum(self.calls)


@pytest.fixture
def fake_embedder() -> FakeEmbedder:
    return FakeEmbedder()


@pytest.fixture
def tiny_config(tmp_path: Path) -> Config:
    """A config over a private copy of the tiny articles, with its own index folder."""
    seeds = tmp_path / "seeds"
    shutil.copytree(DATA, seeds)
    return Config(seeds_dir=seeds, index_dir=tmp_path / "index", chunk_size=200,
                  chunk_overlap=40, min_evidence=0.3, reader="spans")


@pytest.fixture
def fake_qa(tiny_config: Config, fake_embedder: FakeEmbedder) -> QA:
    return QA(tiny_config, embedder=fake_embedder)


@pytest.fixture(scope="session")
def real_runtime():  # noqa: ANN201 - qa.llm.runtime.LlamaRuntime
    """The reader's real language model, loaded once for the session from the machine's cache
    (`make setup` joins it there)."""
    from qa.llm.runtime import configured_runtime

    return configured_runtime(Config())


@pytest.fixture(scope="session")
def real_qa(tmp_path_factory: pytest.TempPathFactory, real_runtime) -> Iterator[QA]:  # noqa: ANN001
    """The real packaged model over a copy of the real seeds, in a private index folder."""
    root = tmp_path_factory.mktemp("real")
    shutil.copytree(SEEDS, root / "seeds")
    # A private cache too, so that the build really exports the ONNX models (qa/embedding/export.py);
    # engines the tests make from the environment (the CLI's) share it.
    before = os.environ.get("QA_CACHE_DIR")
    os.environ["QA_CACHE_DIR"] = str(root / "cache")
    engine = QA(Config.from_env(seeds_dir=root / "seeds", index_dir=root / "index"), runtime=real_runtime)
    engine.build()
    yield engine
    if before is None:
        os.environ.pop("QA_CACHE_DIR", None)
    else:
        os.environ["QA_CACHE_DIR"] = before


@pytest.fixture
def real_copy(real_qa: QA, tmp_path: Path) -> dict[str, str]:
    """The environment of a `qa` process over a copy of the real seeds and their built index."""
    shutil.copytree(real_qa.config.seeds_dir, tmp_path / "seeds")
    shutil.copytree(real_qa.config.index_dir, tmp_path / "index", symlinks=True)
    return {**os.environ, "QA_SEEDS_DIR": str(tmp_path / "seeds"), "QA_INDEX_DIR": str(tmp_path / "index")}
