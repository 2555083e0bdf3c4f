"""Benchmark inputs: RealTime QA articles and questions (read in place, never copied), vectors."""

from __future__ import annotations

import gzip
import hashlib
import json
import os
from pathlib import Path

import numpy as np

from eval.paths import ROOT, benchmark_dir

__all__ = ["ROOT", "cores", "grow", "percentiles", "rss_mb", "rtqa_articles", "rtqa_questions"]


def rss_mb() -> float:
    """This process's resident memory in MB."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return 0.0


def rtqa_articles(passages: int, chunk_size: int = 600, chunk_overlap: int = 120) -> list:
    """Distinct RealTime QA search-result articles, enough to make about `passages` chunks."""
    from qa.articles.load import Article, normalize_text
    from qa.text.chunk import chunk_article

    seen: set[str] = set()
    articles: list[Article] = []
    total = 0
    source = benchmark_dir("realtimeqa-2022") / "search_results.jsonl.gz"
    with gzip.open(source, "rt", encoding="utf-8") as fh:
        for line in fh:
            for result in json.loads(line)["search_result"]:
                text = normalize_text(result.get("text") or "").strip()
                if len(text) < 200 or result["url"] in seen:
                    continue
                seen.add(result["url"])
                name = hashlib.sha1(result["url"].encode()).hexdigest()[:16] + ".txt"
                article = Article(name, (result.get("title") or name)[:90], text,
                                  hashlib.sha256(text.encode()).hexdigest())
                total += len(chunk_article(article, chunk_size, chunk_overlap))
                articles.append(article)
                if total >= passages:
                    return articles
    return articles


def rtqa_questions(limit: int) -> list[str]:
    """The first `limit` RealTime QA question sentences."""
    with gzip.open(benchmark_dir("realtimeqa-2022") / "questions.jsonl.gz", "rt", encoding="utf-8") as fh:
        return [json.loads(line)["question_sentence"] for line in fh][:limit]


def grow(real: np.ndarray, n: int, seed: int = 0) -> np.ndarray:
    """n unit vectors: the real ones, then draws from a Gaussian with their mean and covariance.

    Renormalised, such draws spread like new passages. (Noisy copies of the real vectors do
    not: each real vector's hundreds of copies tie as neighbours, and recall@10 among ties
    measures luck, not the index.)
    """
    if n <= len(real):
        return np.ascontiguousarray(real[:n])
    rng = np.random.default_rng(seed)
    mean = real.mean(axis=0)
    values, vectors = np.linalg.eigh(np.cov(real, rowvar=False))
    scale = (vectors * np.sqrt(np.clip(values, 0, None))).T.astype(np.float32)
    out = np.empty((n, real.shape[1]), dtype=np.float32)
    out[: len(real)] = real
    for start in range(len(real), n, 100_000):  # in blocks: the draws stay small
        stop = min(start + 100_000, n)
        block = mean + rng.standard_normal((stop - start, real.shape[1]), dtype=np.float32) @ scale
        out[start:stop] = block / np.linalg.norm(block, axis=1, keepdims=True)
    return out


def percentiles(values: list[float]) -> dict[str, float]:
    """p50 and p95 in milliseconds of values in seconds."""
    ordered = sorted(values)

    def pct(q: float) -> float:
        pos = (len(ordered) - 1) * q
        lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
        return (ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)) * 1000

    return {"p50_ms": round(pct(0.5), 3), "p95_ms": round(pct(0.95), 3)}


def cores() -> int:
    """CPU cores available to this process."""
    return len(os.sched_getaffinity(0))
