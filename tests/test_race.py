"""Two processes on one folder: `qa build` started while `qa add` is indexing never writes an index
that misses the added article (the folder is read under the lock the upload holds).

The overlap is made, not hoped for: `qa add` is held inside its indexing (a startup hook in its
process) until `qa build` is seen blocked on the folder's lock; a build that did not wait for it
fails the test."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qa.index.load import load_index

pytestmark = pytest.mark.slow
QA_BIN = str(Path(sys.executable).with_name("qa"))
# Loaded by `qa add`'s interpreter (PYTHONPATH): its index build waits, holding the folder's lock,
# until the test lets it go; the file `held` says it is there.
HOOK = """import os, pathlib, time
if os.environ.get("QA_TEST_HOLD"):
    import qa.engine.library
    gate = pathlib.Path(os.environ["QA_TEST_HOLD"])
    build = qa.engine.library.build_index

    def held(*args, **kwargs):
        (gate / "held").touch()
        deadline = time.monotonic() + 300
        while not (gate / "go").exists() and time.monotonic() < deadline:
            time.sleep(0.02)
        return build(*args, **kwargs)

    qa.engine.library.build_index = held
"""


def _article() -> str:
    """An article of a few paragraphs, for `qa add`."""
    return "Race Report\n\n" + "\n\n".join(
        f"Paragraph {n}. " + " ".join(f"The race line {n}-{m} names Quorvale item {n * 31 + m}."
                                      for m in range(6))
        for n in range(20))


def _blocked_on(lock: Path, pid: int) -> bool:
    """True when process pid waits in flock on lock (a "->" line of /proc/locks)."""
    inode = f":{lock.stat().st_ino} "
    return any(line.split()[1] == "->" and f" {pid} " in line and inode in line
               for line in Path("/proc/locks").read_text().splitlines())


def _wait(until, process: subprocess.Popen, what: str, seconds: float = 300) -> None:
    deadline = time.monotonic() + seconds
    while not until():
        assert process.poll() is None, f"{what}: {process.communicate()}"
        assert time.monotonic() < deadline, f"never saw: {what}"
        time.sleep(0.02)


def test_qa_build_during_qa_add_keeps_the_added_article(real_copy: dict[str, str], tmp_path: Path) -> None:
    seeds, index_dir = Path(real_copy["QA_SEEDS_DIR"]), Path(real_copy["QA_INDEX_DIR"])
    upload = tmp_path / "race_article.txt"
    upload.write_text(_article())
    hook, gate = tmp_path / "hook", tmp_path / "gate"
    hook.mkdir()
    gate.mkdir()
    (hook / "sitecustomize.py").write_text(HOOK)
    path = os.pathsep.join(filter(None, [str(hook), real_copy.get("PYTHONPATH")]))
    adding = subprocess.Popen([QA_BIN, "add", str(upload)], env={**real_copy, "PYTHONPATH": path,
                                                                  "QA_TEST_HOLD": str(gate)},
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    building = None
    try:
        # `qa add` has checked the file and holds the folder: it is indexing, and waits there.
        _wait(lambda: (gate / "held").exists(), adding, "qa add holding the folder")
        assert list(seeds.glob(".*.upload")), "the staged copy of the upload is not there"
        building = subprocess.Popen([QA_BIN, "build"], env=real_copy, stdout=subprocess.PIPE,
                                    stderr=subprocess.PIPE, text=True)
        # The event: `qa build` waits on the lock `qa add` holds, inside its indexing.
        _wait(lambda: _blocked_on(index_dir / ".uploads.lock", building.pid), building,
              "qa build waiting on the folder's lock")
        assert adding.poll() is None  # still inside: the build is held inside the upload
    finally:
        (gate / "go").touch()
    added, _ = adding.communicate(timeout=600)
    built, errors = building.communicate(timeout=600)
    assert adding.returncode == 0 and "Added 1 article(s)" in added
    assert building.returncode == 0, errors
    assert "removed" not in built or " 0 removed" in built, built
    index = load_index(index_dir)
    on_disk = {p.name for p in seeds.iterdir() if p.suffix == ".txt"}
    assert "race_article.txt" in on_disk
    assert set(index.articles) == on_disk
