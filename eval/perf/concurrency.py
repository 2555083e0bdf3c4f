"""Answers per second through /ask with the language-model reader: 1 and 4 clients at once, with
the runtime decoding 1 and 4 slots together, in one run.

For each slot count, app.py serves a private copy of the eval articles on a loopback port (the
language-model reader, QA_READER_SLOTS slots, no reading deadline); 1, then 4 clients, each signed
in as a user of its own, ask questions no other cell asks (asked again, a prompt would come from
the model's cache, which is not what concurrency buys). The figure that counts is answers read by
the model per second; the ratios of 4 clients to 1 say what asking at once costs or buys.

Run: .venv/bin/python -m eval concurrency [--questions 8] [--slots 1,4]
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

from eval.paths import RUNS, counts, eval_articles, questions
from eval.perf.processes import ask, signed_in, start_server
from eval.progress import Steps, bar

os.environ.setdefault("HF_HUB_OFFLINE", "1")
SLOTS = (1, 4)
CLIENTS = (1, 4)


def _questions(limit: int) -> list[str]:
    return [r["question"] for r in questions() if r["answerable"] and not r.get("conversation")][:limit]


def cell(base: str, users: dict[str, str], clients: int, texts: list[str]) -> dict:
    """texts asked through /ask by `clients` users at once: answers/s, those read by the model per
    second, p50 and p95 seconds."""
    sessions = [signed_in(base, user, users[user]) for user in list(users)[:clients]]
    shown = bar(total=len(texts), desc=f"{clients} at once", every=1)

    def one(i: int) -> tuple[float, str]:
        began = time.perf_counter()
        answer = ask(sessions[i % clients], texts[i])
        shown.update()
        return time.perf_counter() - began, answer.get("reader") or ""

    began = time.perf_counter()
    with ThreadPoolExecutor(clients) as pool:
        done = list(pool.map(one, range(len(texts))))
    wall = time.perf_counter() - began
    shown.close()
    for session in sessions:
        session.close()
    latencies = sorted(t for t, _ in done)
    read = sum(r == "lm" for _, r in done)
    return {"answers": len(done), "seconds": wall, "answers_per_s": len(done) / wall,
            "model_read_per_s": read / wall, "read_by_lm": read / len(done),
            "p50_s": statistics.median(latencies), "p95_s": latencies[int(0.95 * (len(latencies) - 1))]}


def run(each: int, slot_counts: tuple[int, ...] = SLOTS) -> dict:
    """Every cell (slots x clients), each with questions of its own."""
    texts = _questions(each * len(slot_counts) * len(CLIENTS))
    if len(texts) < each * len(slot_counts) * len(CLIENTS):
        raise SystemExit(f"error: only {len(texts)} distinct questions for {len(slot_counts) * len(CLIENTS)} "
                         f"cells of {each}: ask fewer with --questions")
    users = {f"c{i}": f"pw-{i}" for i in range(max(CLIENTS))}
    plan = {f"start app.py with {s} slot(s)": 40 for s in slot_counts}
    plan |= {f"{s} slot(s), {c} at once": 4.0 * each for s in slot_counts for c in CLIENTS}
    steps = Steps("concurrency", plan)
    out: dict = {"questions_per_cell": each, "cells": {}}
    n = 0
    for slots in slot_counts:
        steps.step(f"start app.py with {slots} slot(s)")
        with tempfile.TemporaryDirectory(prefix="qa-concurrency-") as tmp:
            root = Path(tmp)
            shutil.copytree(eval_articles(), root / "seeds", ignore=shutil.ignore_patterns("SHA256SUMS"))
            env = {"QA_READER": "lm", "QA_READER_SLOTS": str(slots), "QA_READ_TIMEOUT": "600",
                   "QA_RATE": "1000000"}
            proc, base = start_server(root, users, env, timeout=600)
            try:
                warm = signed_in(base, "c0", users["c0"])
                ask(warm, "How many prisoners will be freed?")  # caches built on the first answer
                warm.close()
                for clients in CLIENTS:
                    steps.step(f"{slots} slot(s), {clients} at once", f"{each} questions")
                    result = cell(base, users, clients, texts[n:n + each])
                    n += each
                    out["cells"][f"slots{slots}_clients{clients}"] = result
                    print(f"{slots} slot(s), {clients} client(s): {result['answers_per_s']:.3f} answers/s, "
                          f"{result['model_read_per_s']:.3f} read by the model/s, "
                          f"p50 {result['p50_s']:.1f} s", file=sys.stderr)
            finally:
                proc.terminate()
                proc.wait(timeout=60)
    steps.finish()
    cells = out["cells"]
    out["model_read_ratio_4_to_1"] = {
        f"slots{s}": cells[f"slots{s}_clients4"]["model_read_per_s"] / max(cells[f"slots{s}_clients1"]
                                                                          ["model_read_per_s"], 1e-9)
        for s in slot_counts}
    out["targets"] = {f"slots{s}_4_clients>=1_client": ratio >= 1.0
                      for s, ratio in zip(slot_counts, out["model_read_ratio_4_to_1"].values(), strict=True)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--questions", type=int, default=8, help="questions asked in each cell")
    parser.add_argument("--slots", type=counts("slot", "1,4"), default=SLOTS,
                        help="the runtime's slot counts to serve with, comma-separated (default 1,4)")
    parser.add_argument("--out", type=Path, default=RUNS / "concurrency.json")
    args = parser.parse_args()
    load_before = os.getloadavg()
    result = run(args.questions, args.slots)
    result["machine"] = {"cores": os.cpu_count(), "loadavg_before": load_before,
                         "loadavg_after": os.getloadavg()}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2), "utf-8")
    print(json.dumps({k: v for k, v in result.items() if k != "cells"}, indent=2))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
