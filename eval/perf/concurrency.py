"""Answers per second with the language-model reader at 1, 4 and 16 questions at once, in one run.

One engine, one model with 16 slots (llama.cpp decodes the slots' sequences together, in one
batch); 1, 4 and 16 threads, each a user of its own, ask questions of their own (different
ones at each level: asked again, a question's prompt would come from the model's cache, which
is not what batching buys). The ratios to one question at a time say what batching buys on
this machine.

Run: .venv/bin/python -m eval concurrency [--questions 32] [--publish]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from tqdm import tqdm

from eval.paths import RUNS, eval_articles, questions
from eval.progress import Steps, bar

os.environ.setdefault("HF_HUB_OFFLINE", "1")
LEVELS = (1, 4, 16)


def _questions(limit: int) -> list[str]:
    return [r["question"] for r in questions() if r["answerable"] and not r.get("conversation")][:limit]


def run(texts: list[str], levels: tuple[int, ...] = LEVELS) -> dict:
    """answers/s, p50 and p95 seconds, and the share read by the model, at each level."""
    from qa import QA, Config

    each = len(texts) // len(levels)
    steps = Steps("concurrency", {"build and load the model": 40,
                                  **{f"{n} at once": 3.0 * each / min(n, 2) for n in levels}})
    steps.step("build and load the model")
    with tempfile.TemporaryDirectory(prefix="qa-concurrency-") as tmp:
        shutil.copytree(eval_articles(), Path(tmp) / "seeds", ignore=shutil.ignore_patterns("SHA256SUMS"))
        config = Config.from_env(seeds_dir=Path(tmp) / "seeds", index_dir=Path(tmp) / "index",
                                 reader="lm", reader_slots=max(levels), read_timeout=600.0)
        engine = QA(config)
        engine.build()
        engine.answer("How many prisoners will be freed?")  # the model loads, the instruction is cached
        out: dict = {"questions": each, "slots": config.reader_slots,
                     "threads": config.reader_threads, "model": engine.runtime.name, "levels": {}}
        for n, level in enumerate(levels):
            steps.step(f"{level} at once", f"{each} questions")
            mine = texts[n * each:(n + 1) * each]
            shown = bar(total=each, desc=f"{level} at once", every=1)

            def ask(i: int, level: int = level, mine: list[str] = mine,
                    shown: tqdm = shown) -> tuple[float, str]:
                began = time.perf_counter()
                answer = engine.answer(mine[i], user=f"user{i % level}")
                shown.update()
                return time.perf_counter() - began, answer.reader

            began = time.perf_counter()
            with ThreadPoolExecutor(level) as pool:
                done = list(pool.map(ask, range(each)))
            wall = time.perf_counter() - began
            shown.close()
            latencies = sorted(t for t, _ in done)
            out["levels"][str(level)] = {
                "answers_per_s": len(done) / wall, "seconds": wall,
                "p50_s": statistics.median(latencies),
                "p95_s": latencies[int(0.95 * (len(latencies) - 1))],
                "read_by_lm": sum(r == "lm" for _, r in done) / len(done)}
            print(f"{level:>2} at once: {len(done) / wall:.2f} answers/s, "
                  f"p50 {statistics.median(latencies):.1f} s", file=sys.stderr)
    steps.finish()
    base = out["levels"]["1"]["answers_per_s"]
    out["ratio_to_one"] = {k: v["answers_per_s"] / base for k, v in out["levels"].items()}
    out["targets"] = {"4_at_once>=1.5x_one": out["ratio_to_one"].get("4", 0.0) >= 1.5}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=16, help="questions asked at each level")
    parser.add_argument("--out", type=Path, default=RUNS / "concurrency.json")
    args = parser.parse_args()
    load_before = os.getloadavg()
    result = run(_questions(args.questions * len(LEVELS)))
    result["machine"] = {"cores": os.cpu_count(), "loadavg_before": load_before,
                         "loadavg_after": os.getloadavg()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), "utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "levels"}, indent=2))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
