"""Load and faults on loopback, bounded: a short run of eval/load_bench.py and eval/faults.py."""

from __future__ import annotations

import json
import shutil
import tempfile
from pathlib import Path

import pytest

from eval import faults, load_bench

pytestmark = [pytest.mark.slow, pytest.mark.load]


def test_short_load_run_loses_nothing(real_qa, tmp_path: Path) -> None:
    """8 signed-in API clients for 10 s with 2 uploads: no failure, every citation exact."""
    out = tmp_path / "load.json"
    result = load_bench.run(clients=8, seconds=10, uploads=2, out=out, warmup=4)
    assert json.loads(out.read_text())["requests"] == result["requests"] > 0
    assert result["failed"] == 0, result["failures"]
    assert result["citations_checked"] > 0
    assert [u["ok"] and u["answered_from_it"] for u in result["upload_results"]] == [True, True]
    # Reported, not a timed assertion; memory must not run away even in a short run.
    print({k: result[k] for k in ("requests_per_s", "p50_ms", "p95_ms", "memory_growth")})
    assert result["memory_growth"] < 0.10


@pytest.fixture(scope="module")
def corpus_root(real_qa) -> Path:  # noqa: ANN001 - real_qa exports the ONNX models the builds use
    root = Path(tempfile.mkdtemp(prefix="qa-faults-"))
    root.joinpath("build_s").write_text(str(faults.prepare(root, articles=6)))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_kill_9_of_qa_build_keeps_a_whole_index(corpus_root: Path) -> None:
    build_s = float(corpus_root.joinpath("build_s").read_text())
    rows = faults.kill_builds(corpus_root, moments=3, build_s=build_s, seed=12, articles=6)
    assert len(rows) == 3  # each row passed the checksum check and `qa ask`


def test_kill_9_of_an_uploads_build_changes_nothing(corpus_root: Path) -> None:
    rows = faults.kill_uploads(corpus_root, moments=2, seed=12, lines=100)
    assert len(rows) == 2


def test_full_disk_gives_one_line_and_keeps_the_old_index(corpus_root: Path) -> None:
    result = faults.full_disk(corpus_root, articles=6)
    assert result["exit_code"] == 2 and result["stderr"].startswith("Error: the disk is full")


def test_bombs_are_refused_with_one_line_and_change_nothing(corpus_root: Path) -> None:
    rows = faults.expanding_files(corpus_root)  # each row passed its checks: one line, nothing changed
    assert [r["file"] for r in rows] == [*faults.BOMBS, "docx_bomb in seeds/"]
    assert all(r["peak_mb"] < 1200 for r in rows), rows
