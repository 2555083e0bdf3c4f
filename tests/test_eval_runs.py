"""The eval measurements run, on small inputs, and write the figures they promise: formats,
scale, llm, concurrency, cluster and fit-reader (bench, fit-lm, load and faults have tests of
their own). Each runs as a user runs it, `python -m eval COMMAND`, into a temporary folder."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from conftest import shipped_into

pytestmark = [pytest.mark.slow, pytest.mark.timeout(1200)]
ROOT = Path(__file__).parent.parent


def run_eval(tmp_path: Path, *args: str, timeout: float = 900) -> dict:
    """`python -m eval ARGS` writing into tmp_path; the JSON it wrote."""
    # Benchmarks: every prompt read by the model, none answered from the run's replies.
    env = {**{k: v for k, v in os.environ.items() if k != "PYTEST_QA_REPLIES"}, "QA_EVAL_OUT": str(tmp_path),
           "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-m", "eval", *args], cwd=ROOT, env=env, capture_output=True,
                          text=True, timeout=timeout)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Traceback" not in done.stderr, done.stderr[-3000:]
    written = list(tmp_path.glob("*.json"))
    assert len(written) == 1, written
    return json.loads(written[0].read_text("utf-8"))


def test_eval_formats_times_each_format_against_its_text(tmp_path: Path) -> None:
    rows = run_eval(tmp_path, "formats")["formats"]
    assert set(rows) == {".html", ".pdf", ".docx", ".rss"}
    assert rows[".rss"]["articles"] == 4  # the four seed articles in one feed
    assert all(r["articles"] >= 1 and r["chars"] > 1000 and r["median_ms"] > 0 and r["ratio_to_txt"] > 0
               for r in rows.values()), rows


def test_eval_scale_builds_passages_and_sizes_vector_indexes(tmp_path: Path, model_cache: Path) -> None:
    result = run_eval(tmp_path, "scale", "--only", "build,vectors", "--passages", "60", "--sizes", "10000",
                      "--queries", "12")
    build = result["build"]
    # Articles enough for about 60 passages (chunks), embedded and tagged.
    assert build["articles"] >= 1 and build["passages"] >= 60 and build["passages_per_s"] > 0
    assert 0 < build["share_of_raw_passage_rate"]
    (row,) = result["vectors"]["sizes"]
    assert row["vectors"] == 10000 and row["dense_type_chosen"] in ("flat", "ivf")
    assert row["ivf"]["sweep"] and all(0 <= s["recall@10"] <= 1 for s in row["ivf"]["sweep"])
    assert row["ivf"]["chosen"]["recall@10"] >= 0.95 or row["ivf"]["chosen"] == row["ivf"]["sweep"][-1]
    assert "bench" not in result and "peer" not in result  # --only ran only those two


def test_eval_llm_answers_both_ways_with_the_readers_model(tmp_path: Path, model_cache: Path) -> None:
    # Time enough for its one generated reply on a loaded machine (past --timeout it is a fallback,
    # with no sentence to check).
    result = run_eval(tmp_path, "llm", "--limit", "1", "--timeout", "600")
    assert result["questions"] == len(result["rows"]) >= 1
    assert result["writer"].startswith("qwen2.5-coder-1.5b-instruct")  # in process, no server
    rows, llm = result["rows"], result["llm"]
    assert any(row["extractive"]["answered"] for row in rows)
    # A generated answer is shown only with a verified sentence; otherwise the notice says why.
    assert all((row["method"] == "llm") == (row["notice"] is None) for row in rows), rows
    assert llm["generated_answers_shown"] == sum(row["method"] == "llm" for row in rows)
    assert sum(llm["fallbacks"].values()) == sum(row["method"] != "llm" for row in rows)
    assert llm["sentences_kept"] + llm["sentences_dropped"] >= 1 and llm["llm_ms_mean"] > 0


def test_eval_concurrency_reads_every_cell_with_the_model(tmp_path: Path, model_cache: Path) -> None:
    # One server, decoding 4 slots together (the default, 1 slot, is what every other real test reads
    # with); `python -m eval concurrency` serves both.
    result = run_eval(tmp_path, "concurrency", "--questions", "1", "--slots", "4")
    cells = result["cells"]
    assert set(cells) == {f"slots4_clients{c}" for c in (1, 4)}
    # No reading deadline in this benchmark: the model reads every answer, none is the fallback's.
    assert all(c["answers"] == 1 and c["read_by_lm"] == 1.0 and c["model_read_per_s"] > 0
               for c in cells.values()), cells
    assert set(result["model_read_ratio_4_to_1"]) == {"slots4"}
    assert set(result["targets"]) == {"slots4_4_clients>=1_client"}


def test_eval_cluster_builds_on_ray_nodes(tmp_path: Path, model_cache: Path) -> None:
    pytest.importorskip("ray", reason="the cluster extra is not installed: pip install -e '.[cluster]'")
    # Two nodes only: the head is started and a node added, as for 1,2 (the default), with one build
    # on Ray fewer.
    result = run_eval(tmp_path, "cluster", "--only", "build", "--passages", "60", "--nodes", "2",
                      timeout=1100)
    build = result["build"]
    # The same corpus (the eval articles and 60 RealTime QA passages) on one machine and on 2 nodes.
    passages = build["single_machine"]["passages"]
    assert passages > 60 and build["single_machine"]["passages_per_s"] > 0
    assert set(build) == {"single_machine", "ray_2_node"}, build
    assert build["ray_2_node"]["passages"] == passages and build["ray_2_node"]["vs_single_machine"] > 0, build
    assert "http" not in result and "quality" not in result
    assert result["nodes"].startswith("ray start")


def test_eval_fit_reader_fits_and_writes_the_span_readers_files(tmp_path: Path, model_cache: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    from eval.fit import reader
    from qa.readers.spans.ranker import default_ranker
    from qa.readers.spans.types import type_table

    shipped_into(tmp_path, monkeypatch)  # the package's own files are never touched by a test
    try:
        assert reader.main(["--limit", "60", "--work", str(tmp_path / "work"),
                            "--out", str(tmp_path / "reader_fit.json")]) == 0
        report = json.loads((tmp_path / "reader_fit.json").read_text())
        ranker = json.loads((tmp_path / "ranker.json").read_text())
        types = json.loads((tmp_path / "types.json").read_text())
    finally:
        default_ranker.cache_clear()  # later tests read the shipped files again
        type_table.cache_clear()
    assert report["questions"] == 60 and report["candidates"] > report["positives"] > 0
    assert 0 < report["candidate_recall"] <= 1 and 0 <= report["top1_em_oof"] <= report["candidate_recall"]
    assert len(ranker["weights"]) == len(ranker["features"]) and "60 RealTime QA" in ranker["fitted"]
    assert types["kinds"] and report["typed_questions"] > 0
