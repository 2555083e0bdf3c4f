"""What the speed benchmark times: subprocesses it checks, warm answers with either reader."""

from __future__ import annotations

import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

from eval.paths import ROOT, questions
from eval.progress import bar


def pct(values: list[float], q: float) -> float:
    """The q-quantile (0 to 1) of values, interpolated."""
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def question_texts() -> list[str]:
    """The hand-written questions, in file order."""
    return [r["question"] for r in questions()]


class BenchError(Exception):
    """A step of the benchmark failed; the message says which, and why."""


def checked(cmd: list[str], env: dict[str, str]) -> str:
    """Run a step's subprocess and return its stdout; when it fails, show what it printed and
    raise BenchError naming the command and its last line of error."""
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        tail = out.stderr.strip().splitlines()
        print("\n".join(tail[-20:]), file=sys.stderr)
        shown = " ".join(Path(cmd[0]).name if i == 0 else a for i, a in enumerate(cmd[:4]))
        raise BenchError(f"`{shown} …` exited with {out.returncode}: {tail[-1] if tail else 'no output'}")
    return out.stdout


def wall(cmd: list[str], env: dict[str, str]) -> float:
    """Seconds a checked subprocess takes."""
    began = time.perf_counter()
    checked(cmd, env)
    return time.perf_counter() - began


def warm_answers(engine: object, texts: list[str], desc: str = "") -> list[float]:
    """Seconds per answer() of each question, each paying for its query embedding."""
    times = []
    for question in bar(texts, desc=desc) if desc else texts:
        engine.answerer.retriever._cache.clear()  # type: ignore[attr-defined]
        began = time.perf_counter()
        engine.answer(question)  # type: ignore[attr-defined]
        times.append(time.perf_counter() - began)
    return times


def warm_only(seeds: Path, index: Path) -> None:
    """Print, as JSON, warm answer() times in a process that loads what `qa ask` loads."""
    from qa import QA, Config

    engine = QA(Config.from_env(seeds_dir=seeds, index_dir=index, reader="spans"))
    engine.answer("warm up question")
    times = warm_answers(engine, question_texts())
    print(json.dumps({"seconds": times, "torch": "torch" in sys.modules}))


def lm_answers(seeds: Path, index: Path, texts: list[str]) -> dict:
    """Warm answers read by the language model: latency, reading time, prompt and written tokens
    (from each answer's trace)."""
    from qa import QA, Config

    config = Config.from_env(seeds_dir=seeds, index_dir=index, reader="lm")
    engine = QA(config)
    began = time.perf_counter()
    engine.warm()  # the model loads and reads the fixed instruction into its cache
    load_s = time.perf_counter() - began
    engine.answer("How many prisoners will be freed?")
    times, read, stats = [], [], []
    for question in bar(texts, desc="answers read by the model"):
        engine.answerer.retriever._cache.clear()
        began = time.perf_counter()
        answer = engine.answer(question)
        times.append(time.perf_counter() - began)
        if "read_ms" in answer.timings:
            read.append(answer.timings["read_ms"] / 1000)
        if answer.trace.stats:
            stats.append(answer.trace.stats)
    prompt = [s["prompt_tokens"] for s in stats]
    cached = [s["cached_tokens"] for s in stats]
    written = [s["output_tokens"] for s in stats]
    return {"model": engine.runtime.name, "threads": config.reader_threads, "model_load_s": load_s,
            "questions": len(times), "read": len(read),
            "warm_answer_ms": {"p50": statistics.median(times) * 1000, "p95": pct(times, 0.95) * 1000},
            "read_ms": ({"p50": statistics.median(read) * 1000, "p95": pct(read, 0.95) * 1000}
                        if read else {}),
            "prompt_tokens": {"median": statistics.median(prompt), "max": max(prompt)} if prompt else {},
            "cached_prompt_tokens_median": statistics.median(cached) if cached else 0,
            "written_tokens": {"median": statistics.median(written), "max": max(written)} if written else {}}
