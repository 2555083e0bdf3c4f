"""The evaluation harness end to end on three questions, and the RealTime QA loader and scorer."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from eval import rtqa
from eval.__main__ import main
from eval.cache import CachingEmbedder

KEYS = ["article_hit@1", "article_hit@3", "article_hit@5", "article_mrr@10", "article_ndcg@10",
        "evidence_hit@1", "evidence_hit@5", "evidence_mrr@10", "evidence_ndcg@10", "contains", "f1",
        "citation_precision", "citation_recall", "refusal_precision", "refusal_recall", "false_refusal_rate"]


@pytest.mark.slow
def test_harness_smoke(tmp_path: Path) -> None:
    assert main(["--limit", "3", "--modes", "hybrid,bm25", "--out", str(tmp_path)]) == 0
    result = json.loads((tmp_path / "results.json").read_text())
    for mode in ("hybrid", "bm25"):
        summary = result["summary"][mode]
        for key in KEYS:
            assert 0.0 <= summary[key] <= 1.0, (mode, key)
        assert summary["latency_p95_ms"] >= summary["latency_p50_ms"] > 0
    assert (tmp_path / "report.md").read_text().startswith("# Evaluation report")
    assert (tmp_path / "hit_at_k.png").stat().st_size > 0


@pytest.mark.slow
@pytest.mark.skipif(not (rtqa.rtqa_dir() / "questions.jsonl.gz").exists(), reason="no RealTime QA data")
def test_rtqa_two_questions(tmp_path: Path, real_qa) -> None:  # noqa: ANN001 - conftest fixture
    questions = rtqa.load(limit=2)
    assert len(questions) == 2 and all(q["gold"] in q["choices"] for q in questions)
    # Two short articles each keep the test fast; the full articles are for `python -m eval`.
    questions = [{**q, "articles": [a[:2000] for a in q["articles"][:2]]} for q in questions]
    embedder = CachingEmbedder(real_qa.embedder, tmp_path / "cache.sqlite")
    records = [rtqa.ask(q, embedder, min_evidence=0.42) for q in questions]
    summary = rtqa.summarize(records)
    assert summary["scored"] == 2
    for policy in summary["policies"].values():
        assert 0.0 <= policy["em"] <= 1.0 and 0.0 <= policy["f1"] <= 1.0
    assert 0.0 <= summary["answer_bearing"] <= 1.0 and 0.0 <= summary["mc_accuracy"] <= 1.0
    # A second pass embeds nothing: every vector comes from the cache.
    before = embedder.misses
    rtqa.ask(questions[0], embedder, min_evidence=0.42)
    assert embedder.misses == before
