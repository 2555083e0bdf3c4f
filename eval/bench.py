"""Speed benchmark: index build, warm answer() latency, cold `qa ask`; ratios measured in one run.

Run: .venv/bin/python -m eval bench [--publish] [--lm-questions N]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from eval.paths import RUNS, eval_articles

ROOT = Path(__file__).resolve().parent.parent
os.environ.setdefault("HF_HUB_OFFLINE", "1")


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q
    lo, hi = int(pos), min(int(pos) + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _questions() -> list[str]:
    rows = [json.loads(line) for line in (ROOT / "eval/questions.jsonl").read_text().splitlines() if line]
    return [r["question"] for r in rows]


class BenchError(Exception):
    """A step of the benchmark failed; the message says which, and why."""


def _checked(cmd: list[str], env: dict[str, str]) -> str:
    """Run a step's subprocess and return its stdout; when it fails, show what it printed and
    raise BenchError naming the command and its last line of error."""
    out = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=ROOT)
    if out.returncode != 0:
        tail = out.stderr.strip().splitlines()
        print("\n".join(tail[-20:]), file=sys.stderr)
        shown = " ".join(Path(cmd[0]).name if i == 0 else a for i, a in enumerate(cmd[:4]))
        raise BenchError(f"`{shown} …` exited with {out.returncode}: {tail[-1] if tail else 'no output'}")
    return out.stdout


def _wall(cmd: list[str], env: dict[str, str]) -> float:
    began = time.perf_counter()
    _checked(cmd, env)
    return time.perf_counter() - began


def _warm_answers(engine: object, questions: list[str]) -> list[float]:
    """Seconds per answer() of each question, each paying for its query embedding."""
    times = []
    for question in questions:
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
    times = _warm_answers(engine, _questions())
    print(json.dumps({"seconds": times, "torch": "torch" in sys.modules}))


class _Counting:
    """The real runtime, remembering the prompt and written tokens of each reply."""

    def __init__(self, inner: object) -> None:
        self.inner, self.name, self.replies = inner, inner.name, []  # type: ignore[attr-defined]

    def complete(self, *args: object, **kwargs: object) -> object:
        reply = self.inner.complete(*args, **kwargs)  # type: ignore[attr-defined]
        self.replies.append(reply)
        return reply


def lm_answers(seeds: Path, index: Path, questions: list[str]) -> dict:
    """Warm answers read by the language model: latency, reading time, prompt and written tokens."""
    from qa import QA, Config
    from qa.llm.runtime import configured_runtime

    config = Config.from_env(seeds_dir=seeds, index_dir=index, reader="lm")
    began = time.perf_counter()
    runtime = _Counting(configured_runtime(config))
    load_s = time.perf_counter() - began
    engine = QA(config, runtime=runtime)  # type: ignore[arg-type]
    engine.answer("How many prisoners will be freed?")  # the fixed instruction is now cached
    runtime.replies.clear()
    times, read = [], []
    for question in questions:
        engine.answerer.retriever._cache.clear()  # type: ignore[attr-defined]
        began = time.perf_counter()
        answer = engine.answer(question)
        times.append(time.perf_counter() - began)
        if "read_ms" in answer.timings:
            read.append(answer.timings["read_ms"] / 1000)
    prompt = [r.prompt_tokens for r in runtime.replies]
    cached = [r.cached_tokens for r in runtime.replies]
    written = [r.completion_tokens for r in runtime.replies]
    return {"model": runtime.name, "threads": config.reader_threads, "model_load_s": load_s,
            "questions": len(times), "read": len(read),
            "warm_answer_ms": {"p50": statistics.median(times) * 1000, "p95": _pct(times, 0.95) * 1000},
            "read_ms": ({"p50": statistics.median(read) * 1000, "p95": _pct(read, 0.95) * 1000}
                        if read else {}),
            "prompt_tokens": {"median": statistics.median(prompt), "max": max(prompt)} if prompt else {},
            "cached_prompt_tokens_median": statistics.median(cached) if cached else 0,
            "written_tokens": {"median": statistics.median(written), "max": max(written)} if written else {}}


def main() -> None:
    if sys.argv[1:2] == ["--warm-only"]:
        warm_only(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    work = Path(tempfile.mkdtemp(prefix="qa-bench-"))
    try:
        run(work)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run(work: Path) -> None:
    """Every measurement, in the scratch folder work, written to --out and printed."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=RUNS / "bench.json")
    parser.add_argument("--repeats", type=int, default=3, help="Index builds and cold runs to time.")
    parser.add_argument("--lm-questions", type=int, default=115,
                        help="Questions answered with the language-model reader (about 2-4 s each).")
    args = parser.parse_args()

    from qa import QA, Config
    from qa.embedding.export import export_onnx
    from qa.embedding.onnx_runtime import OnnxEmbedder
    from qa.embedding.transformer import get_embedder

    load_before = os.getloadavg()
    shutil.copytree(eval_articles(), work / "seeds", ignore=shutil.ignore_patterns("SHA256SUMS"))
    began = time.perf_counter()
    embedder = get_embedder()  # sentence-transformers: the reference for one encode
    model_load_s = time.perf_counter() - began
    embedder.embed(["warm up"])
    # The ONNX exports are made once per machine (qa build does it); time that once here.
    began = time.perf_counter()
    export = export_onnx(Config.from_env().cache_dir)
    export_s = time.perf_counter() - began
    began = time.perf_counter()
    builder = QA(Config.from_env()).embedder  # what qa build uses: the float32 export
    builder.embed(["warm up"])
    builder_load_s = time.perf_counter() - began

    builds = []
    for i in range(args.repeats):
        config = Config.from_env(seeds_dir=work / "seeds", index_dir=work / f"index{i}")
        began = time.perf_counter()
        report = QA(config, embedder=builder).build()
        builds.append(time.perf_counter() - began)
    # The default engine, as users get it: questions are embedded by the ONNX twin.
    engine = QA(Config.from_env(seeds_dir=work / "seeds", index_dir=work / "index0"))

    questions = _questions()
    model = embedder._model  # the raw SentenceTransformer, as the reference
    raw, onnx, onnx1 = [], [], []
    engine.answer("warm up question")
    # For comparison: the same export on one thread, and the int8-stored twin (the fallback).
    one_thread = OnnxEmbedder(threads=1, export=export)
    int8 = OnnxEmbedder(threads=1)
    for other in (one_thread, int8):
        other.embed(["warm up"])
    onnx_int8 = []
    # One loop per path, not interleaved: torch's worker threads keep spinning for a while
    # after an encode and would steal the second core from the ONNX runs that follow it.
    for question in questions:
        began = time.perf_counter()
        model.encode(question)
        raw.append(time.perf_counter() - began)
    for times, embed in ((onnx, engine.query_embedder), (onnx1, one_thread), (onnx_int8, int8)):
        time.sleep(0.5)
        for question in questions:
            began = time.perf_counter()
            embed.embed([question])  # the query embedding alone: answer()'s floor
            times.append(time.perf_counter() - began)
    in_torch_process = _warm_answers(engine, questions)
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    # As users get it: answering never imports torch, but this process holds two torch models
    # (the reference above), whose threads and memory slow answer() down. Time it again alone.
    out = _checked([sys.executable, "-m", "eval.bench", "--warm-only", str(work / "seeds"),
                    str(work / "index0")], env)
    alone = json.loads(out.splitlines()[-1])
    warm = alone["seconds"]
    qa_bin = str(Path(sys.executable).parent / "qa")
    ask = [qa_bin, "--seeds", str(work / "seeds"), "--index", str(work / "index0"), "ask",
           "How many Taliban prisoners will be released every day?"]
    cold = [_wall(ask, env) for _ in range(args.repeats)]
    cold_spans = [_wall(ask + ["--reader", "spans"], env) for _ in range(args.repeats)]
    lm = lm_answers(work / "seeds", work / "index0", questions[: args.lm_questions])
    # A cold `qa build --force` of the seeds, as a user runs it: model, tagger and all.
    cold_build = [_wall([qa_bin, "--seeds", str(work / "seeds"), "--index", str(work / f"cold{i}"), "build",
                         "--force"], env) for i in range(args.repeats)]
    import_st = [_wall([sys.executable, "-c", "import sentence_transformers"], env)
                 for _ in range(args.repeats)]

    raw_p50 = statistics.median(raw)
    result = {
        "machine": {"cores": os.cpu_count(), "python": sys.version.split()[0],
                    "loadavg_before": load_before, "loadavg_after": os.getloadavg()},
        "seeds": {"articles": len(engine.index.articles), "chunks": len(engine.index.chunks),
                  "sentences": len(engine.index.sent_sources)},
        "model_load_s": model_load_s,
        "build_embedder": type(builder).__name__,
        "build_embedder_load_s": builder_load_s,
        "build_s_after_model_load": {"median": statistics.median(builds), "all": builds},
        "build_embedded": {"chunks": report.embedded_chunks, "sentences": report.embedded_sentences},
        "query_embedder": type(engine.query_embedder).__name__,
        "query_embedder_source": getattr(engine.query_embedder, "source", ""),
        "query_embedder_threads": engine.config.onnx_threads,
        "onnx_export_s": export_s,
        "raw_query_embedding_ms": {"p50": raw_p50 * 1000, "p95": _pct(raw, 0.95) * 1000},
        "warm_answer_ms": {"questions": len(warm), "p50": statistics.median(warm) * 1000,
                           "p95": _pct(warm, 0.95) * 1000, "process_imported_torch": alone["torch"]},
        "warm_answer_in_this_torch_process_ms": {"p50": statistics.median(in_torch_process) * 1000,
                                                 "p95": _pct(in_torch_process, 0.95) * 1000},
        "query_embedding_ms": {"p50": statistics.median(onnx) * 1000, "p95": _pct(onnx, 0.95) * 1000},
        "query_embedding_1_thread_ms": {"p50": statistics.median(onnx1) * 1000,
                                        "p95": _pct(onnx1, 0.95) * 1000},
        "query_embedding_int8_twin_1_thread_ms": {"p50": statistics.median(onnx_int8) * 1000,
                                                  "p95": _pct(onnx_int8, 0.95) * 1000},
        # What answer() adds to embedding the question (both timed in this process): retrieval,
        # scoring, composing.
        "warm_answer_minus_embedding_p50_ms":
            (statistics.median(in_torch_process) - statistics.median(onnx)) * 1000,
        "warm_answer_ratio_to_raw_embedding": {"p50": statistics.median(warm) / raw_p50,
                                               "p95": _pct(warm, 0.95) / raw_p50},
        "cold_qa_ask_s": {"median": statistics.median(cold), "all": cold},
        "cold_qa_ask_span_reader_s": {"median": statistics.median(cold_spans), "all": cold_spans},
        "lm_reader": {**lm, "warm_answer_ratio_to_span_reader_p50":
                      lm["warm_answer_ms"]["p50"] / 1000 / statistics.median(warm)},
        "cold_qa_build_s": {"median": statistics.median(cold_build), "all": cold_build},
        "import_sentence_transformers_s": statistics.median(import_st),
        "cold_qa_ask_ratio_to_import_st": statistics.median(cold) / statistics.median(import_st),
        "targets": {"warm_answer_p50<=5ms": statistics.median(warm) <= 0.005,
                    "cold_qa_ask_span_reader<=0.3x_import_st":
                        statistics.median(cold_spans) / statistics.median(import_st) <= 0.3,
                    "lm_warm_answer_p50<=2s": lm["warm_answer_ms"]["p50"] <= 2000,
                    "lm_warm_answer_p95<=4s": lm["warm_answer_ms"]["p95"] <= 4000,
                    "cold_qa_ask_lm<=4s": statistics.median(cold) <= 4.0,
                    "warm_answer_p50_ratio<=2": statistics.median(warm) / raw_p50 <= 2,
                    "build_under_1s": statistics.median(builds) < 1.0,
                    "cold_qa_build<=3s": statistics.median(cold_build) <= 3.0},
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    print(f"model load                 {model_load_s:8.2f} s (sentence-transformers); "
          f"{type(builder).__name__} for builds {builder_load_s:.2f} s")
    build_s = result['build_s_after_model_load']['median']
    print(f"index build (4 seeds)      {build_s:8.2f} s after model load")
    print(f"raw query embedding p50    {raw_p50 * 1000:8.1f} ms (SentenceTransformer.encode, reference)")
    print(f"ONNX export (once/machine) {export_s:8.2f} s")
    print(f"query embedder             {result['query_embedder']} on {engine.config.onnx_threads} "
          f"thread(s): p50 {result['query_embedding_ms']['p50']:.1f} ms; answer() adds "
          f"{result['warm_answer_minus_embedding_p50_ms']:.1f} ms; 1 thread "
          f"{result['query_embedding_1_thread_ms']['p50']:.1f} ms; int8 twin, 1 thread "
          f"{result['query_embedding_int8_twin_1_thread_ms']['p50']:.1f} ms")
    print(f"warm answer() p50 / p95    {result['warm_answer_ms']['p50']:8.1f} / "
          f"{result['warm_answer_ms']['p95']:.1f} ms  = "
          f"{result['warm_answer_ratio_to_raw_embedding']['p50']:.2f}x / "
          f"{result['warm_answer_ratio_to_raw_embedding']['p95']:.2f}x raw embedding "
          f"(a process without torch, as `qa ask`; in this one, with torch models loaded: p50 "
          f"{result['warm_answer_in_this_torch_process_ms']['p50']:.1f} ms)")
    print(f"cold `qa ask`              {result['cold_qa_ask_s']['median']:8.2f} s with the language-model "
          f"reader (model load included); {statistics.median(cold_spans):.2f} s with the span reader "
          f"= {statistics.median(cold_spans) / statistics.median(import_st):.2f}x `import "
          f"sentence_transformers` ({result['import_sentence_transformers_s']:.2f} s)")
    print(f"language-model reader      warm answer p50 / p95 {lm['warm_answer_ms']['p50']:.0f} / "
          f"{lm['warm_answer_ms']['p95']:.0f} ms over {lm['questions']} questions "
          f"({result['lm_reader']['warm_answer_ratio_to_span_reader_p50']:.0f}x the span reader's), "
          f"{lm['threads']} threads; prompt tokens median {lm['prompt_tokens'].get('median')} "
          f"({lm['cached_prompt_tokens_median']} of them cached), written tokens median "
          f"{lm['written_tokens'].get('median')}")
    print(f"cold `qa build --force`    {result['cold_qa_build_s']['median']:8.2f} s "
          "(4 seeds, tagging included)")
    print(f"load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
