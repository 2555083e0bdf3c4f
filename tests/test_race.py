"""Two processes on one folder: `qa build` started while `qa add` is indexing never writes an index
that misses the added article (the folder is read under the lock the upload holds)."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from qa.index.load import load_index

pytestmark = pytest.mark.slow
QA_BIN = str(Path(sys.executable).with_name("qa"))


def _article() -> str:
    """An article long enough that indexing it takes seconds."""
    return "Race Report\n\n" + "\n\n".join(
        f"Paragraph {n}. " + " ".join(f"The race line {n}-{m} names Quorvale item {n * 31 + m}."
                                      for m in range(6))
        for n in range(150))


def test_qa_build_during_qa_add_keeps_the_added_article(real_copy: dict[str, str], tmp_path: Path) -> None:
    seeds, index_dir = Path(real_copy["QA_SEEDS_DIR"]), Path(real_copy["QA_INDEX_DIR"])
    upload = tmp_path / "race_article.txt"
    upload.write_text(_article())
    adding = subprocess.Popen([QA_BIN, "add", str(upload)], env=real_copy, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, text=True)
    # The staged copy appears once `qa add` has checked the file and holds the folder: it is indexing now.
    deadline = time.monotonic() + 120
    while not list(seeds.glob(".*.upload")):
        assert adding.poll() is None, adding.communicate()
        assert time.monotonic() < deadline, "qa add never started indexing"
        time.sleep(0.05)
    building = subprocess.Popen([QA_BIN, "build"], env=real_copy, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
    added, _ = adding.communicate(timeout=600)
    built, errors = building.communicate(timeout=600)
    assert adding.returncode == 0 and "Added 1 article(s)" in added
    assert building.returncode == 0, errors
    assert "removed" not in built or " 0 removed" in built, built
    index = load_index(index_dir)
    on_disk = {p.name for p in seeds.iterdir() if p.suffix == ".txt"}
    assert "race_article.txt" in on_disk
    assert set(index.articles) == on_disk
