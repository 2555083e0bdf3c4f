"""Speed benchmark: index build, warm answer() latency, cold `qa ask`; ratios measured in one run.

Run: .venv/bin/python -m eval bench [--publish] [--repeats 3] [--lm-questions N]
Each step says on stderr how far it is and about how long is left; the questions read by the
model (about 2-4 s each) show a bar of their own.
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
from pathlib import Path

from eval.paths import RUNS, eval_articles
from eval.perf.timing import (
    SETTINGS,
    BenchError,
    against_prebuilt,
    checked,
    cold_phases,
    lm_answers,
    pct,
    question_texts,
    reader_prompts,
    reader_settings,
    runtime_worker,
    wall,
    warm_answers,
    warm_only,
)
from eval.progress import Steps

os.environ.setdefault("HF_HUB_OFFLINE", "1")


def main() -> None:
    if sys.argv[1:2] == ["--warm-only"]:
        warm_only(Path(sys.argv[2]), Path(sys.argv[3]))
        return
    if sys.argv[1:2] == ["--cold-phases"]:
        cold_phases(Path(sys.argv[2]), Path(sys.argv[3]), sys.argv[4])
        return
    if sys.argv[1:2] == ["--runtime-worker"]:
        runtime_worker()
        return
    work = Path(tempfile.mkdtemp(prefix="qa-bench-"))
    try:
        run_reader(work) if "--only-reader" in sys.argv else run(work)
    except BenchError as exc:
        print(f"error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
    finally:
        shutil.rmtree(work, ignore_errors=True)


def plan(repeats: int, lm_questions: int, rounds: int) -> dict[str, float]:
    """The steps, with their expected seconds on 2 cores."""
    return {"load sentence-transformers": 15, "ONNX export (once per machine)": 5,
            "load the build embedder": 3, "index builds": 3 * repeats, "query embeddings": 10,
            "warm answers in this process": 5, "warm answers in a process of their own": 15,
            "cold `qa ask`": 8 * repeats, "cold `qa ask`, phase by phase": 10 * repeats,
            "cold `qa ask --reader spans`": 4 * repeats,
            "the reader runtime's settings side by side": 40 + 3 * 10 * rounds,
            "the installed runtime against the prebuilt wheel": 20 + 6 * rounds,
            "answers read by the model": 3 * lm_questions, "cold `qa build --force`": 6 * repeats,
            "import sentence_transformers": 6 * repeats}


def arguments() -> argparse.Namespace:
    """The command line's flags."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=RUNS / "bench.json")
    parser.add_argument("--repeats", type=int, default=3, help="Index builds and cold runs to time.")
    parser.add_argument("--lm-questions", type=int, default=115,
                        help="Questions answered with the language-model reader (about 2-4 s each).")
    parser.add_argument("--settings-rounds", type=int, default=6,
                        help="Prompts each variant of the reader runtime's settings reads (0: none).")
    parser.add_argument("--prebuilt-wheel", type=Path,
                        help="xllamacpp's prebuilt wheel (pip download --no-deps --only-binary :all: "
                        "xllamacpp==2026.10.11549): it reads side by side with the installed runtime")
    parser.add_argument("--model", type=Path,
                        help="Another GGUF of the reader's model (a Q4_0 requantized from the shipped "
                        "Q4_K_M: python -m eval.fit.requantize), read side by side with the configured one")
    parser.add_argument("--settings", action="append", choices=[*SETTINGS, "model"],
                        help="Only these groups of the runtime's settings (repeat the flag; default: all)")
    parser.add_argument("--only-reader", action="store_true",
                        help="Only the reader's figures (cold `qa ask`, its phases, the runtime's settings, "
                        "answers read by the model), written to bench_reader.json")
    return parser.parse_args()


def reader_figures(work: Path, index: Path, args: argparse.Namespace, steps: Steps) -> dict:
    """What the language-model reader costs: cold `qa ask` phase by phase (the first run after the
    instruction's saved state is removed, so it reads and saves it; the next ones restore it), and
    the runtime's settings side by side on the reader's own prompts."""
    from qa import Config

    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    steps.step("cold `qa ask`, phase by phase", f"{args.repeats} runs")
    for saved in (Config.from_env().cache_dir / "kv").glob("*.bin"):
        saved.unlink()
    cmd = [sys.executable, "-m", "eval.perf.bench", "--cold-phases", str(work / "seeds"), str(index), ASKED]
    phases = [json.loads(checked(cmd, env).splitlines()[-1]) for _ in range(args.repeats)]
    restored = [p for p in phases if p["primed"] == "restored"] or phases
    median = {k: statistics.median(p[k] for p in restored) for k, v in phases[0].items()
              if isinstance(v, float)}
    out = {"cold_phases": phases, "cold_phases_restored_median": median}
    if args.settings_rounds:
        steps.step("the reader runtime's settings side by side", f"{args.settings_rounds} prompts each")
        prompts = reader_prompts(work / "seeds", index, question_texts())[: args.settings_rounds]
        groups: dict[str, list[dict[str, object]]] = dict(SETTINGS)
        if args.model:
            groups["model"] = [{}, {"model": str(args.model)}]
        out["settings"] = reader_settings(prompts, {g: v for g, v in groups.items()
                                                    if not args.settings or g in args.settings})
        if args.prebuilt_wheel:
            steps.step("the installed runtime against the prebuilt wheel", f"{len(prompts)} prompts")
            lib = work / "prebuilt"
            shutil.unpack_archive(args.prebuilt_wheel, lib, "zip")
            out["against_prebuilt"] = against_prebuilt(prompts, lib)
    return out


def print_reader(figures: dict) -> None:
    """The reader's figures, a line each."""
    first, median = figures["cold_phases"][0], figures["cold_phases_restored_median"]
    shown = ", ".join(f"{name} {median[f'{name}_s']:.2f} s ({median[f'{name}_cpu_s']:.2f} CPU-s)"
                      for name in ("import", "index", "query_embedder", "model", "question"))
    print(f"cold `qa ask` phases       {shown} = {median['total_s']:.2f} s "
          f"({median['total_cpu_s']:.2f} CPU-s); "
          f"of the model's, the instruction restored in {median['instruction_s']:.3f} s; the question's "
          f"reading {median['read_ms'] / 1000:.2f} s; with no saved state the instruction was "
          f"{first['primed']} in {first['instruction_s']:.2f} s")
    for group, variants in figures.get("settings", {}).items():
        shown = ", ".join(f"{_variant(v)} {v['median_s']:.2f} s ({v['ratio_to_default']:.2f}x, "
                          f"{v['prompt_tokens_per_s']:.0f} tok/s, "
                          f"{v['same_answers_as_default']}/{v['readings']} same)" for v in variants)
        print(f"reader {group:19s} {shown}")
    if ab := figures.get("against_prebuilt"):
        speed = ab["prompt_tokens_per_s"]
        print(f"reader runtime             installed {speed['installed']:.1f} tok/s, prebuilt wheel "
              f"{speed['prebuilt']:.1f} tok/s: {ab['ratio_installed_to_prebuilt']:.2f}x, "
              f"{ab['same_answers']}/{ab['prompts']} same answers")


def _variant(v: dict) -> str:
    shown = [Path(str(v[k])).stem if k == "model" else str(v[k]) for k in v
             if k in ("threads", "batch", "ubatch", "flash", "context", "model")]
    return "/".join(shown) or "default"


ASKED = "How many Taliban prisoners will be released every day?"


def run_reader(work: Path) -> None:
    """The reader's figures alone (--only-reader): an index of the eval articles, cold `qa ask`,
    its phases, the runtime's settings and warm answers read by the model; bench_reader.json."""
    from qa import QA, Config

    args = arguments()
    out = args.out.with_name("bench_reader.json")  # never over a whole bench's bench.json
    steps = Steps("bench", {"index": 30, "cold `qa ask`": 8 * args.repeats,
                            "cold `qa ask`, phase by phase": 10 * args.repeats,
                            "the reader runtime's settings side by side": 40 + 30 * args.settings_rounds,
                            "the installed runtime against the prebuilt wheel": 20 + 6 * args.settings_rounds,
                            "answers read by the model": 3 * args.lm_questions})
    load_before = os.getloadavg()
    shutil.copytree(eval_articles(), work / "seeds", ignore=shutil.ignore_patterns("SHA256SUMS"))
    steps.step("index")
    QA(Config.from_env(seeds_dir=work / "seeds", index_dir=work / "index0")).build()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    ask = [str(Path(sys.executable).parent / "qa"), "--seeds", str(work / "seeds"), "--index",
           str(work / "index0"), "ask", ASKED]
    steps.step("cold `qa ask`", f"{args.repeats} runs")
    cold = [wall(ask, env) for _ in range(args.repeats)]
    figures = reader_figures(work, work / "index0", args, steps)
    steps.step("answers read by the model", f"{args.lm_questions} questions")
    lm = lm_answers(work / "seeds", work / "index0", question_texts()[: args.lm_questions])
    steps.finish()
    result = {"machine": {"cores": os.cpu_count(), "loadavg_before": load_before,
                          "loadavg_after": os.getloadavg()},
              "cold_qa_ask_s": {"median": statistics.median(cold), "all": cold}, "reader": figures,
              "lm_reader": lm}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=2))
    print(f"cold `qa ask`              {statistics.median(cold):8.2f} s (each: "
          f"{', '.join(f'{c:.2f}' for c in cold)})")
    print_reader(figures)
    print(f"language-model reader      warm answer p50 / p95 {lm['warm_answer_ms']['p50']:.0f} / "
          f"{lm['warm_answer_ms']['p95']:.0f} ms over {lm['questions']} questions, {lm['threads']} threads")
    print(f"load average {load_before[0]:.1f} before, {os.getloadavg()[0]:.1f} after")
    print(f"written to {out}")


def run(work: Path) -> None:
    """Every measurement, in the scratch folder work, written to --out and printed."""
    args = arguments()

    from qa import QA, Config
    from qa.embedding.export import export_onnx
    from qa.embedding.onnx_runtime import OnnxEmbedder
    from qa.embedding.transformer import get_embedder

    steps = Steps("bench", plan(args.repeats, args.lm_questions, args.settings_rounds))
    load_before = os.getloadavg()
    shutil.copytree(eval_articles(), work / "seeds", ignore=shutil.ignore_patterns("SHA256SUMS"))
    steps.step("load sentence-transformers")
    began = time.perf_counter()
    embedder = get_embedder()  # sentence-transformers: the reference for one encode
    model_load_s = time.perf_counter() - began
    embedder.embed(["warm up"])
    # The ONNX exports are made once per machine (qa build does it); time that once here.
    steps.step("ONNX export (once per machine)")
    began = time.perf_counter()
    export = export_onnx(Config.from_env().cache_dir)
    export_s = time.perf_counter() - began
    steps.step("load the build embedder")
    began = time.perf_counter()
    builder = QA(Config.from_env()).embedder  # what qa build uses: the float32 export
    builder.embed(["warm up"])
    builder_load_s = time.perf_counter() - began

    steps.step("index builds", f"{args.repeats} of them")
    builds = []
    for i in range(args.repeats):
        config = Config.from_env(seeds_dir=work / "seeds", index_dir=work / f"index{i}")
        began = time.perf_counter()
        report = QA(config, embedder=builder).build()
        builds.append(time.perf_counter() - began)
    # The default engine, as users get it: questions are embedded by the ONNX twin. It reads with
    # the span reader, as the `--warm-only` process does: these figures are what answer() adds to
    # embedding the question (retrieval, scoring, composing); the model's reading is timed below.
    engine = QA(Config.from_env(seeds_dir=work / "seeds", index_dir=work / "index0", reader="spans"))

    steps.step("query embeddings")
    questions = question_texts()
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
    steps.step("warm answers in this process")
    in_torch_process = warm_answers(engine, questions, desc="warm answers, span reader")
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    # As users get it: answering never imports torch, but this process holds two torch models
    # (the reference above), whose threads and memory slow answer() down. Time it again alone.
    steps.step("warm answers in a process of their own")
    out = checked([sys.executable, "-m", "eval.perf.bench", "--warm-only", str(work / "seeds"),
                   str(work / "index0")], env)
    alone = json.loads(out.splitlines()[-1])
    warm = alone["seconds"]
    qa_bin = str(Path(sys.executable).parent / "qa")
    ask = [qa_bin, "--seeds", str(work / "seeds"), "--index", str(work / "index0"), "ask", ASKED]
    steps.step("cold `qa ask`", f"{args.repeats} runs, the model loaded by each")
    cold = [wall(ask, env) for _ in range(args.repeats)]
    reader = reader_figures(work, work / "index0", args, steps)
    steps.step("cold `qa ask --reader spans`", f"{args.repeats} runs")
    cold_spans = [wall(ask + ["--reader", "spans"], env) for _ in range(args.repeats)]
    steps.step("answers read by the model", f"{min(args.lm_questions, len(questions))} questions")
    lm = lm_answers(work / "seeds", work / "index0", questions[: args.lm_questions])
    # A cold `qa build --force` of the seeds, as a user runs it: model, tagger and all.
    steps.step("cold `qa build --force`", f"{args.repeats} runs")
    cold_build = [wall([qa_bin, "--seeds", str(work / "seeds"), "--index", str(work / f"cold{i}"), "build",
                        "--force"], env) for i in range(args.repeats)]
    steps.step("import sentence_transformers", f"{args.repeats} runs")
    import_st = [wall([sys.executable, "-c", "import sentence_transformers"], env)
                 for _ in range(args.repeats)]
    steps.finish()

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
        "query_embedder_threads": engine.config.indexing.onnx_threads,
        "onnx_export_s": export_s,
        "raw_query_embedding_ms": {"p50": raw_p50 * 1000, "p95": pct(raw, 0.95) * 1000},
        "warm_answer_ms": {"questions": len(warm), "p50": statistics.median(warm) * 1000,
                           "p95": pct(warm, 0.95) * 1000, "process_imported_torch": alone["torch"]},
        "warm_answer_in_this_torch_process_ms": {"p50": statistics.median(in_torch_process) * 1000,
                                                 "p95": pct(in_torch_process, 0.95) * 1000},
        "query_embedding_ms": {"p50": statistics.median(onnx) * 1000, "p95": pct(onnx, 0.95) * 1000},
        "query_embedding_1_thread_ms": {"p50": statistics.median(onnx1) * 1000,
                                        "p95": pct(onnx1, 0.95) * 1000},
        "query_embedding_int8_twin_1_thread_ms": {"p50": statistics.median(onnx_int8) * 1000,
                                                  "p95": pct(onnx_int8, 0.95) * 1000},
        # What answer() adds to embedding the question (both timed in this process): retrieval,
        # scoring, composing.
        "warm_answer_minus_embedding_p50_ms":
            (statistics.median(in_torch_process) - statistics.median(onnx)) * 1000,
        "warm_answer_ratio_to_raw_embedding": {"p50": statistics.median(warm) / raw_p50,
                                               "p95": pct(warm, 0.95) / raw_p50},
        "cold_qa_ask_s": {"median": statistics.median(cold), "all": cold},
        "reader": reader,
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
    print(f"query embedder             {result['query_embedder']} on {engine.config.indexing.onnx_threads} "
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
    print_reader(reader)
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
