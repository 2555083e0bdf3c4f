"""What the speed benchmark times: subprocesses it checks, warm answers with either reader, the
reader runtime's settings side by side, and the phases of a cold `qa ask`."""

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
    return {"model": engine.runtime.name, "threads": config.reading.reader_threads, "model_load_s": load_s,
            "questions": len(times), "read": len(read),
            "warm_answer_ms": {"p50": statistics.median(times) * 1000, "p95": pct(times, 0.95) * 1000},
            "read_ms": ({"p50": statistics.median(read) * 1000, "p95": pct(read, 0.95) * 1000}
                        if read else {}),
            "prompt_tokens": {"median": statistics.median(prompt), "max": max(prompt)} if prompt else {},
            "cached_prompt_tokens_median": statistics.median(cached) if cached else 0,
            "written_tokens": {"median": statistics.median(written), "max": max(written)} if written else {}}


class _Recorder:
    """A runtime that only records the prompts the reader would send (and writes nothing)."""

    name = "recorder"

    def __init__(self) -> None:
        self.prompts: list[list[dict[str, str]]] = []

    def complete(self, messages: list[dict[str, str]], *args: object, **kwargs: object) -> object:
        from qa.llm.base import Completion

        self.prompts.append(messages)
        return Completion("")


# The reader runtime's load-time settings, each group measured side by side: every variant of a
# group loaded at once, the same real prompts read by each in turn (the first is the default).
SETTINGS: dict[str, list[dict[str, object]]] = {
    "threads": [{"threads": 2}, {"threads": 1}],
    "batch/micro-batch": [{"batch": 2048, "ubatch": 512}, {"batch": 2048, "ubatch": 1024},
                          {"batch": 256, "ubatch": 256}],
    "flash attention": [{"flash": "auto"}, {"flash": "off"}],
    "context per slot": [{"context": 2048}, {"context": 1024}, {"context": 4096}],
}


def reader_prompts(seeds: Path, index: Path, texts: list[str]) -> list[list[dict[str, str]]]:
    """The prompts the language-model reader sends for these questions (one each, when it reads)."""
    from qa import QA, Config

    recorder = _Recorder()
    config = Config.from_env(seeds_dir=seeds, index_dir=index, reader="lm")
    engine = QA(config, runtime=recorder)  # type: ignore[arg-type]
    prompts = []
    for text in texts:
        before = len(recorder.prompts)
        engine.answer(text)
        prompts += recorder.prompts[before:before + 1]
    return prompts


def reader_settings(prompts: list[list[dict[str, str]]], groups: dict[str, list[dict[str, object]]]
                    = SETTINGS) -> dict:
    """Seconds per reading, prompt tokens read per second and the ratio to the default, for each
    group's variants, loaded at once and taking turns on the same prompts (the order rotates). A
    variant's "model" is another GGUF file read in place of the configured one."""
    import gc

    from qa import Config
    from qa.llm.llama import LlamaRuntime
    from qa.llm.model_file import model_path
    from qa.readers.lm.prompt import default_prompt
    from qa.readers.lm.reader import MAX_PHRASE_TOKENS

    config = Config.from_env()
    path = model_path(config.cache_dir, config.reading.reader_model)
    base = {"threads": config.reading.reader_threads, "context": config.reading.reader_context}
    out: dict = {}
    for group, variants in groups.items():
        prefix = default_prompt().warm_messages()
        runtimes = []
        for v in variants:
            settings = {**base, **v}
            model = Path(str(settings.pop("model", path)))
            runtimes.append(LlamaRuntime(model, **settings, prefix=prefix))  # type: ignore[arg-type]
        seconds: list[list[float]] = [[] for _ in variants]
        speeds: list[list[float]] = [[] for _ in variants]
        texts: list[list[str]] = [[] for _ in variants]
        for r, prompt in enumerate(bar(prompts, desc=group)):
            turns = list(range(len(variants)))
            for i in turns[r % len(turns):] + turns[:r % len(turns)]:
                began = time.perf_counter()
                reply = runtimes[i].complete(prompt, max_tokens=MAX_PHRASE_TOKENS, stop=["\n"],
                                             top_logprobs=10)
                took = time.perf_counter() - began
                seconds[i].append(took)
                speeds[i].append((reply.prompt_tokens - reply.cached_tokens) / took)
                texts[i].append(reply.text)
        default = statistics.median(seconds[0])
        out[group] = [{**v, "median_s": statistics.median(seconds[i]),
                       "ratio_to_default": statistics.median(seconds[i]) / default,
                       "prompt_tokens_per_s": statistics.median(speeds[i]),
                       "same_answers_as_default": sum(map(str.__eq__, texts[i], texts[0])),
                       "readings": len(seconds[i]), "all_s": seconds[i]} for i, v in enumerate(variants)]
        del runtimes
        gc.collect()
    return out


def cold_phases(seeds: Path, index: Path, question: str) -> None:
    """Print, as JSON, what a cold `qa ask` with the language model waits on, phase by phase: wall
    seconds, and the process's CPU seconds (all its threads), which a loaded machine inflates less."""
    began, cpu = time.perf_counter(), time.process_time()
    from qa import QA, Config
    from qa.surfaces import cli  # noqa: F401 - what `qa ask` imports too

    phases: dict[str, object] = {"import_s": time.perf_counter() - began,
                                 "import_cpu_s": time.process_time() - cpu}
    engine = QA(Config.from_env(seeds_dir=seeds, index_dir=index, reader="lm"))
    runtime: dict = {}
    for name, load in (("index", lambda: engine.index), ("query_embedder", lambda: engine.query_embedder),
                       ("model", lambda: runtime.setdefault("r", engine.runtime.get())),  # type: ignore[attr-defined]
                       ("question", lambda: runtime.setdefault("answer", engine.answer(question)))):
        mark, mark_cpu = time.perf_counter(), time.process_time()
        load()
        phases[f"{name}_s"] = time.perf_counter() - mark
        phases[f"{name}_cpu_s"] = time.process_time() - mark_cpu
    loaded, answer = runtime["r"], runtime["answer"]
    phases.update(model_load_s=loaded.load_seconds, instruction_s=loaded.prime_seconds, primed=loaded.primed,
                  read_ms=answer.timings.get("read_ms", 0.0), reader=answer.reader,
                  total_s=time.perf_counter() - began, total_cpu_s=time.process_time() - cpu)
    print(json.dumps(phases))


def runtime_worker() -> None:
    """(A child process) load the reader's runtime, then read each JSON prompt from stdin and
    answer a JSON line: seconds, prompt tokens read (not cached), the text, the build's features."""
    import xllamacpp

    from qa import Config
    from qa.llm.llama import LlamaRuntime
    from qa.llm.model_file import model_path
    from qa.readers.lm.prompt import default_prompt
    from qa.readers.lm.reader import MAX_PHRASE_TOKENS

    config = Config.from_env()
    runtime = LlamaRuntime(model_path(config.cache_dir, config.reading.reader_model),
                           config.reading.reader_threads,
                           context=config.reading.reader_context, prefix=default_prompt().warm_messages())
    print(json.dumps({"system_info": xllamacpp.get_system_info()}), flush=True)
    for line in sys.stdin:
        began = time.perf_counter()
        reply = runtime.complete(json.loads(line), max_tokens=MAX_PHRASE_TOKENS, stop=["\n"], top_logprobs=10)
        print(json.dumps({"s": time.perf_counter() - began, "read": reply.prompt_tokens - reply.cached_tokens,
                          "text": reply.text}), flush=True)


def against_prebuilt(prompts: list[list[dict[str, str]]], prebuilt: Path) -> dict:
    """The installed runtime and the prebuilt wheel (unpacked at prebuilt) side by side: each in a
    process of its own, taking turns on the same prompts; prompt tokens read per second, the ratio."""
    import os
    import subprocess

    workers = {}
    for name, path in (("installed", ""), ("prebuilt", str(prebuilt))):
        env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, (path, str(ROOT))))}
        workers[name] = subprocess.Popen([sys.executable, "-m", "eval.perf.bench", "--runtime-worker"],
                                         env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                         cwd=ROOT)
    info = {n: json.loads(w.stdout.readline())["system_info"] for n, w in workers.items()}  # type: ignore[union-attr]
    speeds: dict[str, list[float]] = {n: [] for n in workers}
    texts: dict[str, list[str]] = {n: [] for n in workers}
    for r, prompt in enumerate(bar(prompts, desc="installed and prebuilt runtimes")):
        for name in (list(workers) if r % 2 == 0 else list(workers)[::-1]):
            w = workers[name]
            w.stdin.write(json.dumps(prompt) + "\n")  # type: ignore[union-attr]
            w.stdin.flush()  # type: ignore[union-attr]
            got = json.loads(w.stdout.readline())  # type: ignore[union-attr]
            speeds[name].append(got["read"] / got["s"])
            texts[name].append(got["text"])
    for w in workers.values():
        w.stdin.close()  # type: ignore[union-attr]
        w.wait(timeout=60)
    medians = {n: statistics.median(v) for n, v in speeds.items()}
    return {"system_info": info, "prompt_tokens_per_s": medians, "all": speeds,
            "ratio_installed_to_prebuilt": medians["installed"] / medians["prebuilt"],
            "same_answers": sum(map(str.__eq__, texts["installed"], texts["prebuilt"])),
            "prompts": len(prompts)}
