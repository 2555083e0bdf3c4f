"""Shared fixtures: a deterministic fake embedder, tiny in-repo articles, the real engine."""

from __future__ import annotations

import atexit
import collections
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

# Under pytest-xdist (`make test`: four processes on two cores) each reading, embedding and BLAS
# call runs on one thread: llama.cpp's, ONNX Runtime's and OpenMP's threads wait for one another by
# spinning, and threads spinning on two shared cores wait on each other's time slices (a build's
# embedding: 30% more CPU on two threads than on one beside 3 busy processes). Set before torch and
# faiss are imported here, and inherited by every process a test starts.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for name in ("QA_READER_THREADS", "QA_BUILD_THREADS", "QA_ONNX_THREADS", "OMP_NUM_THREADS",
                 "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(name, "1")

import hypothesis  # noqa: F401 - before Ray's threads: imported at the summary after them, 3.11's parser can fail
import numpy as np
import pytest

os.environ["HF_HUB_OFFLINE"] = "1"
# The machine's model cache, where `make setup` joined the reader's model: read, never written.
MACHINE_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "qa"
# Before qa is imported: Config()'s default cache folder (and every other library's cache) is an
# empty temporary one, so no test writes into ~/.cache or finds the machine's model by accident.
_XDG = tempfile.mkdtemp(prefix="qa-tests-cache-")
atexit.register(shutil.rmtree, _XDG, True)
os.environ["XDG_CACHE_HOME"] = _XDG
os.environ["HYPOTHESIS_STORAGE_DIRECTORY"] = os.path.join(_XDG, "hypothesis")  # not the repo's .hypothesis/
# Seconds a real-model test's question may wait for the model: a loaded 2-core machine is slow,
# and a question past QA_READ_TIMEOUT is answered by the span reader (the tests say which read).
REAL_READ_TIMEOUT = 600.0

from qa import QA, Config  # noqa: E402 - once the cache folder is set
from qa.text.words import tokenize  # noqa: E402

DATA = Path(__file__).parent / "data"
SEEDS = Path(__file__).parent.parent / "seeds"
# The one refusal a question of any text may get (spaces or controls alone), word for word.
EMPTY = "the question is empty: type a question about the articles"


def shipped_into(folder: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The span reader's fitted files (ranker, types) written into folder, not the package."""
    import dataclasses

    from eval.fit import shipped

    for name in ("ranker", "types"):
        monkeypatch.setitem(shipped.SHIPPED, name,
                            dataclasses.replace(shipped.SHIPPED[name], path=folder / f"{name}.json"))


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
    return Config.of(seeds_dir=seeds, index_dir=tmp_path / "index", chunk_size=200,
                  chunk_overlap=40, min_evidence=0.3, reader="spans")


@pytest.fixture
def fake_qa(tiny_config: Config, fake_embedder: FakeEmbedder) -> QA:
    return QA(tiny_config, embedder=fake_embedder)


@pytest.fixture(autouse=True)
def _private_model_cache(monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory) -> None:
    """Every test starts with QA_CACHE_DIR at an empty folder of its own and QA_READER=spans: none
    writes into ~/.cache/qa, none finds an export another test made, and none reads with the
    language model unless it asks for ``model_cache`` (or names the reader itself)."""
    monkeypatch.setenv("QA_CACHE_DIR", str(tmp_path_factory.mktemp("no-model-cache")))
    monkeypatch.setenv("QA_READER", "spans")
    for name in ("QA_HOME", "QA_SEEDS_DIR", "QA_INDEX_DIR", "QA_LLM_URL", "QA_READ_TIMEOUT"):
        monkeypatch.delenv(name, raising=False)


@pytest.fixture(autouse=True)
def _qa_logger_as_found() -> None:
    """The ``qa`` logger's level put back after each test: the CLI sets it (WARNING, or INFO with -v)."""
    import logging

    logger = logging.getLogger("qa")
    level = logger.level
    yield
    logger.setLevel(level)


@pytest.fixture(scope="session")
def onnx_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A private model cache: the ONNX exports (about 15 s), made once in the run by the first test
    that needs them (under pytest-xdist, one worker makes them while the others wait on its lock),
    and the reader's language model linked in read-only from the machine's cache (`make setup` joins
    it there) when it is installed; the environment is left alone (see ``model_cache``)."""
    from filelock import FileLock

    from qa.embedding.export import export_onnx
    from qa.llm.model_file import packaged_path

    base = tmp_path_factory.getbasetemp()
    root = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "model-cache"
    with FileLock(f"{root}.lock"):
        if not (root / ".made").is_file():
            shutil.rmtree(root, ignore_errors=True)
            root.mkdir()
            export_onnx(root)
            machine = packaged_path(MACHINE_CACHE)
            if machine.is_file():
                (root / "models").mkdir()
                for path in (machine, machine.with_name(machine.name + ".verified")):
                    if path.is_file():
                        (root / "models" / path.name).symlink_to(path)
            (root / ".made").touch()
    return root


@pytest.fixture
def model_cache(onnx_cache: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """QA_CACHE_DIR at the shared model cache and QA_READER=lm for this test only: engines made from
    the environment (the CLI's, a subprocess's) find the exports and the reader's model there, and
    read with it, instead of exporting again, rebuilding with torch, or reading with the span reader."""
    monkeypatch.setenv("QA_CACHE_DIR", str(onnx_cache))
    monkeypatch.setenv("QA_READER", "lm")
    monkeypatch.setenv("QA_READ_TIMEOUT", str(REAL_READ_TIMEOUT))
    return onnx_cache


class Replies:
    """How many of the real model's readings in this process were real and how many repeats, and
    whether a repeat may be answered from the run's replies (not in a test marked real_reading)."""

    def __init__(self) -> None:
        self.read = self.repeated = 0
        self.replay = True  # off in a test marked real_reading: it watches the page while the model reads

    def tally(self, replayed: bool) -> None:
        """Count one reading."""
        if replayed:
            self.repeated += 1
        else:
            self.read += 1


REPLIES = Replies()


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    """How many of the real model's replies were read, and how many repeated from this run's replies,
    counted by every process of the run (pytest-xdist's workers and what they started); the tests
    whose readings took longest."""
    from subprocess_site.replayed import READINGS

    # pytest-xdist gives each worker a folder in the controller's (tmp_path_factory's basetemp).
    factory = getattr(terminalreporter.config, "_tmp_path_factory", None)
    path = factory.getbasetemp() / "replies" / READINGS if factory else None
    if path is None or not path.is_file():
        return
    read, replayed, by_test = 0, 0, collections.Counter[str]()
    for line in path.read_text("utf-8").splitlines():
        how, seconds, test = (line.split("\t") + ["", ""])[:3]
        if how == "read":
            read += 1
            by_test[test] += float(seconds)
        else:
            replayed += 1
    longest = ", ".join(f"{test} {s:.0f} s" for test, s in by_test.most_common(5))
    terminalreporter.write_line(f"the real model: {read} prompts read in {sum(by_test.values()):.0f} s, "
                                f"{replayed} repeats answered from this run's replies; longest: {longest}")


@pytest.fixture(scope="session", autouse=True)
def _replies_within_the_run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Replies]:
    """One folder of the real model's replies for the run, shared by every runtime of every process:
    the tests' own (in pytest-xdist's workers), and those of the processes the tests start (`qa`
    commands, servers, Ray's nodes; tests/subprocess_site/replayed.py). The first reading of a
    prompt is real; a repeat, in any of them, is answered from the folder."""
    from subprocess_site.replayed import priming, replaying

    from qa.llm.llama import LlamaRuntime

    base = tmp_path_factory.getbasetemp()
    folder = (base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base) / "replies"
    folder.mkdir(parents=True, exist_ok=True)
    site = str(Path(__file__).parent / "subprocess_site")
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("PYTEST_QA_REPLIES", str(folder))
        patch.setenv("PYTHONPATH", os.pathsep.join(filter(None, [site, os.environ.get("PYTHONPATH")])))
        patch.setattr(LlamaRuntime, "complete", replaying(LlamaRuntime.complete, folder,
                                                          lambda: REPLIES.replay, REPLIES.tally))
        patch.setattr(LlamaRuntime, "_prime", priming(LlamaRuntime._prime))  # priming is always read
        yield REPLIES


@pytest.fixture(autouse=True)
def _real_reading(request: pytest.FixtureRequest) -> Iterator[None]:
    """A test marked real_reading has every prompt read by the model, none replayed."""
    REPLIES.replay = request.node.get_closest_marker("real_reading") is None
    yield
    REPLIES.replay = True


@pytest.fixture(scope="session")
def real_runtime(onnx_cache: Path):  # qa.llm.llama.LlamaRuntime
    """The reader's real language model, loaded once for the session with the reader's fixed
    instruction in its cache, as an engine loads it: every engine over ``onnx_cache`` in this
    process gets this same runtime (one per model file and settings)."""
    from qa.llm.runtimes import configured_runtime
    from qa.readers.lm.prompt import default_prompt

    return configured_runtime(Config.from_env(cache_dir=onnx_cache), default_prompt().warm_messages())


@pytest.fixture(scope="session")
def real_qa(tmp_path_factory: pytest.TempPathFactory, onnx_cache: Path, real_runtime) -> QA:
    """The real packaged models over a copy of the real seeds, in a private index folder, built
    with the ONNX exports of ``onnx_cache`` (the CLI tests over it ask for ``model_cache``)."""
    root = tmp_path_factory.mktemp("real")
    shutil.copytree(SEEDS, root / "seeds")
    engine = QA(Config.from_env(seeds_dir=root / "seeds", index_dir=root / "index", cache_dir=onnx_cache,
                                reader="lm", read_timeout=REAL_READ_TIMEOUT), runtime=real_runtime)
    engine.build()
    return engine


@pytest.fixture
def real_copy(real_qa: QA, model_cache: Path, tmp_path: Path) -> dict[str, str]:
    """The environment of a `qa` process over a copy of the real seeds and their built index."""
    shutil.copytree(real_qa.config.seeds_dir, tmp_path / "seeds")
    shutil.copytree(real_qa.config.index_dir, tmp_path / "index", symlinks=True)
    return {**os.environ, "QA_SEEDS_DIR": str(tmp_path / "seeds"), "QA_INDEX_DIR": str(tmp_path / "index"),
            "QA_CACHE_DIR": str(model_cache)}


@pytest.fixture(scope="session")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Where the browser tests save their screenshots: a temporary folder of the session (pytest
    keeps the last three runs' under its base temp folder, e.g. /tmp/pytest-of-$USER/pytest-N/shots0)."""
    return tmp_path_factory.mktemp("shots")


REAL = {"real_qa", "real_runtime", "onnx_cache", "model_cache", "real_copy"}


# The longest files, longest first (seconds in a `make test` run, 6 Dec 2026: 490, 324, 310, 254,
# 250, 221, 200, 197, 194, 161, 149, 121). `make test` hands files to its processes in collection
# order (`--dist loadfile --no-loadscope-reorder`), so these start first and none is left running
# alone at the end; xdist's own order, by number of tests, left a three-test Ray file for last.
LONGEST_FIRST = ("test_eval_runs.py", "test_cluster.py", "test_real.py", "test_load.py",
                 "test_cluster_docs.py", "test_app.py", "test_readme.py", "test_lm_real.py", "test_eval.py",
                 "test_fuzz.py", "test_lint.py", "test_page.py")


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test that uses the real models or drives Chromium is slow, whatever its file says:
    `-m "not slow"` stays fast. The longest files go first, the rest in pytest-randomly's order."""
    for item in items:
        if REAL & set(getattr(item, "fixturenames", ())) or item.get_closest_marker("browser"):
            item.add_marker(pytest.mark.slow)
    rank = {name: n for n, name in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda item: rank.get(item.path.name, len(rank)))  # stable: the shuffle stays
