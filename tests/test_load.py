"""Load and faults on loopback, bounded: a short run of eval/perf/load.py and eval/perf/faults.py."""

from __future__ import annotations

import json
import shutil
import sys
import tempfile
from pathlib import Path

import pytest

from eval.perf import faults
from eval.perf import load as load_bench

pytestmark = [pytest.mark.slow, pytest.mark.load]


@pytest.fixture(autouse=True)
def span_reader(model_cache: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The servers and `qa` commands these tests start read with the span reader: what they check
    (no failure, exact offsets, whole indexes) does not depend on the reader, and the language
    model would let a 10 s run finish a handful of requests. Set after ``model_cache``, which sets
    QA_READER=lm (set before it, the servers read with the model: 0.3 answers a second)."""
    monkeypatch.setenv("QA_READER", "spans")


def test_short_load_run_loses_nothing(tmp_path: Path, model_cache: Path) -> None:
    """8 signed-in API clients for 10 s with 2 uploads: no failure, every citation exact."""
    out = tmp_path / "load.json"
    result = load_bench.run(clients=8, seconds=10, uploads=2, out=out, warmup=4)
    assert json.loads(out.read_text())["requests"] == result["requests"] > 0
    assert result["failed"] == 0, result["failures"]
    assert result["citations_checked"] > 0
    assert result["readers"]["lm"] == 0  # the span reader's load, as this file sets it
    assert [u["ok"] and u["answered_from_it"] for u in result["upload_results"]] == [True, True]
    # Reported, not asserted: memory growth over seconds depends on the machine's scheduling; the
    # minute-long `python -m eval load` measures it (docs/team.md quotes it).
    print({k: result[k] for k in ("requests_per_s", "p50_ms", "p95_ms", "memory_growth")})


@pytest.fixture(scope="module")
def corpus_root(onnx_cache: Path) -> Path:
    """The eval articles plus a corpus, built by `qa build` (which, like the kills, finds the exports)."""
    root = Path(tempfile.mkdtemp(prefix="qa-faults-"))
    with pytest.MonkeyPatch.context() as env:
        env.setenv("QA_CACHE_DIR", str(onnx_cache))
        env.setenv("QA_READER", "spans")
        root.joinpath("build_s").write_text(str(faults.prepare(root, articles=6)))
    yield root
    shutil.rmtree(root, ignore_errors=True)


def test_kill_9_of_qa_build_keeps_a_whole_index(corpus_root: Path, model_cache: Path) -> None:
    build_s = float(corpus_root.joinpath("build_s").read_text())
    # One kill at a random moment and one at the moment it saved its first vectors (`python -m eval
    # faults` kills at more random moments).
    rows = faults.kill_builds(corpus_root, moments=1, build_s=build_s, seed=12, articles=6, mid_batch=1)
    print(rows)
    assert len(rows) == 2  # each row passed the checksum check and `qa ask`
    # The last kill landed while the build ran: the moment it had saved its first vectors.
    mid = rows[-1]
    assert mid["moment"] == "first saved batch" and mid["had_finished"] is False, rows
    for row in rows:
        # Whatever a kill left (a half-written .tmp- folder), the next build cleared: one index.
        assert len(row["index_dirs_after_ask"]) == 1 and row["index_dirs_after_ask"][0].startswith("v-"), row
        assert [d for d in row["index_dirs_after_kill"] if d.startswith("v-")], row


def test_kill_9_of_an_uploads_build_changes_nothing(corpus_root: Path, model_cache: Path) -> None:
    from eval.perf.processes import kill_at

    rows = faults.kill_uploads(corpus_root, moments=1, seed=12, lines=100)
    # Each row passed its checks; a kill at a random moment may land once the upload is done.
    assert len(rows) == 1 and all(r["unchanged"] or r["committed"] for r in rows), rows
    # The kill this test makes sure of: mid-way through the upload's build, the moment it saved its
    # first vectors (a new file in index/.partial/), so the upload was never published.
    big = corpus_root / "big_upload.txt"  # two batches of vectors and more: the kill lands inside
    big.write_text("\n\n".join(f"Paragraph {n}. " + " ".join(
        f"The upload test line {n}-{m} names Quorvale item {n * 31 + m}." for m in range(6))
        for n in range(600)))
    partial = corpus_root / "index" / ".partial"
    old = set(partial.glob("*.np*"))
    before = faults.snapshot(corpus_root)
    finished = kill_at([sys.executable, "-c", faults.UPLOAD, str(big)], corpus_root, 600,
                       lambda: bool(set(partial.glob("*.np*")) - old))
    assert not finished and set(partial.glob("*.np*")) - old, "the kill did not land mid-build"
    assert faults.snapshot(corpus_root) == before  # nothing of the upload, the same index in use
    assert "killed_upload.txt" not in faults.check_ask(corpus_root)["text"]


def test_full_disk_gives_one_line_and_keeps_the_old_index(corpus_root: Path, model_cache: Path) -> None:
    result = faults.full_disk(corpus_root, articles=6)
    assert result["exit_code"] == 2 and result["stderr"].startswith("Error: the disk is full")


def test_bombs_are_refused_with_one_line_and_change_nothing(corpus_root: Path, model_cache: Path) -> None:
    # All but the slow PDF, which spends the worker's whole 30 s of CPU: test_bombs.py runs it into
    # a 3 s limit (`python -m eval faults` adds it with the 30 s one).
    kinds = tuple(kind for kind in faults.BOMBS if kind != "pdf_slow")
    rows = faults.expanding_files(corpus_root, kinds)  # each row passed its checks: one line, nothing changed
    assert [r["file"] for r in rows] == [*kinds, "docx_bomb in seeds/"]
    assert all(r["peak_mb"] < 1200 for r in rows), rows
