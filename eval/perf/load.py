"""Load on loopback: API clients ask for a fixed time while articles are uploaded.

Starts `app.py` on 127.0.0.1 with sign-in and uploads on, over a private copy of seeds/,
runs the clients (each signed in as its own user) and the uploads, checks every citation
against the article files, samples the server's memory, and writes the figures as JSON.

    .venv/bin/python -m eval load [--publish]         # 50 clients, 60 s, 3 uploads
    .venv/bin/python -m eval load --clients 8 --seconds 10 --uploads 2 --out /tmp/load.json
"""

from __future__ import annotations

import argparse
import json
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import httpx
import numpy as np

from eval.paths import ROOT, RUNS, questions
from eval.perf.processes import REQUEST_TIMEOUT, ask, rss_mb, signed_in, start_server
from eval.progress import Steps, bar
from qa.articles.load import article_from_bytes

SAMPLE_EVERY = 0.5
RESULTS = RUNS / "load.json"


def _questions() -> list[str]:
    return [r["question"] for r in questions() if r.get("question")]


def _article(i: int) -> tuple[str, str, str]:
    """An uploaded article with a fact no seed states: (file name, text, a question about it)."""
    town = ["Marrowdale", "Quenby", "Oxhollow", "Tarnwick", "Bellmere", "Corvane"][i % 6]
    loaves = 240 + 17 * i
    text = (f"Bakery Opens In {town}\n\nThe Quillfeather bakery in {town} sells {loaves} loaves of rye "
            f"bread every morning. Its owner, Hester Quill, trained in Vienna for six years before "
            f"opening the shop in {town}. The bakery employs nine people.\n")
    return f"load_bakery_{i}.txt", text, f"How many loaves does the Quillfeather bakery in {town} sell?"


class Texts:
    """Article texts read from the articles folder (as indexed), for checking citations."""

    def __init__(self, seeds: Path) -> None:
        self.seeds = seeds
        self._texts: dict[str, str] = {}

    def get(self, source: str) -> str | None:
        if source not in self._texts:
            path = self.seeds / source
            if not path.is_file():
                return None
            article = article_from_bytes(source, path.read_bytes())
            self._texts[source] = article.text if article else ""
        return self._texts[source]


def bad_citations(answer: dict, texts: Texts) -> list[str]:
    """Every citation or passage whose offsets do not give its text in its article."""
    bad = []
    for p in [*answer.get("citations", []), *answer.get("passages", [])]:
        text = texts.get(p["source"])
        if text is None or text[p["start"]:p["end"]] != p["text"]:
            bad.append(f"{p['source']} {p['start']}-{p['end']}")
    return bad


def _who_read(answer: dict) -> str:
    """Which reader gave the answer's short answer (a key of run()'s readers)."""
    notice = answer.get("notice") or ""
    if answer.get("reader") == "lm":
        return "lm"
    if "questions are ahead in line" in notice:
        return "spans_line_too_long"
    return "spans_with_notice" if "span reader" in notice else "not_read"


def run(clients: int = 50, seconds: float = 60.0, uploads: int = 3, out: Path | None = RESULTS,
        warmup: float | None = None, seed: int = 0) -> dict:
    """Run the load and return (and write to out) its figures."""
    rng = random.Random(seed)
    questions = _questions()
    root = Path(tempfile.mkdtemp(prefix="qa-load-"))
    shutil.copytree(ROOT / "seeds", root / "seeds")
    users = {f"load{i}": f"pw-{i}-{rng.randrange(10**9)}" for i in range(clients)}
    users["uploader"] = "pw-uploader"
    steps = Steps("load", {"start app.py": 30, "sign in and ask the first question": 10 + clients * 0.2,
                           "the load": seconds, "the last answers and the server's exit": 10})
    steps.step("start app.py")
    proc, base = start_server(root, users, {"QA_RATE": "1000000"})
    texts = Texts(root / "seeds")
    warmup = seconds * 0.2 if warmup is None else warmup
    lock = threading.Lock()
    latencies: list[tuple[float, float]] = []  # (finished at, seconds)
    failures: list[str] = []
    checked = [0]
    # Who gave each answer: the language model, the span reader with its notice (the line was
    # longer than QA_READ_TIMEOUT), or no reader (refused or not covered before reading).
    readers = {"lm": 0, "spans_line_too_long": 0, "spans_with_notice": 0, "not_read": 0}
    upload_log: list[dict] = []
    memory: list[tuple[float, float]] = []
    try:
        steps.step("sign in and ask the first question", f"{clients} clients")
        names = [u for u in users if u != "uploader"]
        sessions = [signed_in(base, names[0], users[names[0]])]
        ask(sessions[0], questions[0])  # the first answer loads lazily-built caches; not timed
        # The others sign in after it: a connection left idle past uvicorn's keep-alive (5 s) while
        # the first answer loads is closed by the server, and a question sent on it as it closes
        # was reset (1 run of 4 on 2 cores), though the server never saw the question.
        sessions += [signed_in(base, u, users[u]) for u in names[1:]]
        # The load's clock starts now: signing in and the first answer can take longer than a
        # short run's seconds, which left no time for the load at all (0 answers in 10 s).
        began = time.monotonic()
        stop_at = began + seconds
        steps.step("the load", f"{clients} clients for {seconds:g} s, {uploads} uploads")
        shown = bar(total=int(seconds), desc="load", unit="s", every=1)

        def client_loop(session: httpx.Client, n: int) -> None:
            local = random.Random(seed * 1000 + n)
            while time.monotonic() < stop_at:
                with lock:
                    extra = [q for e in upload_log if e["ok"] for q in [e["question"]]]
                question = local.choice(questions + extra * 5)
                t0 = time.monotonic()
                try:
                    answer = ask(session, question)
                    bad = bad_citations(answer, texts)
                    with lock:
                        latencies.append((time.monotonic() - began, time.monotonic() - t0))
                        checked[0] += len(answer.get("citations", [])) + len(answer.get("passages", []))
                        readers[_who_read(answer)] += 1
                        if bad:
                            failures.append(f"inexact citation for {question!r}: {bad[:3]}")
                except Exception as exc:  # every failure is counted and reported
                    with lock:
                        failures.append(f"{type(exc).__name__}: {str(exc)[:200]}")

        def uploader() -> None:
            try:
                uploads_run()
            except Exception as exc:  # a failed upload is a failure of the run
                with lock:
                    failures.append(f"upload: {type(exc).__name__}: {str(exc)[:200]}")

        def uploads_run() -> None:
            from gradio_client import Client, handle_file

            # The server is busy by design: its answers wait for the model, so wait as long as a question.
            client = Client(base, auth=("uploader", users["uploader"]), verbose=False,
                            httpx_kwargs={"timeout": REQUEST_TIMEOUT})
            for i in range(uploads):
                time.sleep(max(0.0, began + seconds * (i + 1) / (uploads + 1) - time.monotonic()))
                name, text, question = _article(i)
                path = root / "upload" / name
                path.parent.mkdir(exist_ok=True)
                path.write_text(text)
                t0 = time.monotonic()
                status, _ = client.predict(handle_file(str(path)), api_name="/upload")
                ok = f"Added {name}" in status
                answer = ask(sessions[0], question) if ok else {}
                found = ok and any(c["source"] == name for c in answer.get("citations", []))
                with lock:
                    upload_log.append({"name": name, "ok": ok, "seconds": round(time.monotonic() - t0, 2),
                                       "answered_from_it": found, "question": question,
                                       "answer": str(answer.get("text", ""))[:200],
                                       "status": status[:200]})

        def sampler() -> None:
            while time.monotonic() < stop_at + 1:
                memory.append((time.monotonic() - began, rss_mb(proc.pid)))
                shown.update(max(0, min(shown.total, int(time.monotonic() - began)) - shown.n))
                shown.set_postfix(answers=len(latencies), failed=len(failures), refresh=False)
                time.sleep(SAMPLE_EVERY)

        sampling = threading.Thread(target=sampler)
        threads = [threading.Thread(target=client_loop, args=(s, n)) for n, s in enumerate(sessions)]
        threads += [threading.Thread(target=uploader), sampling]
        for t in threads:
            t.start()
        sampling.join(timeout=seconds + 60)
        shown.close()
        steps.step("the last answers and the server's exit")
        for t in threads:
            t.join(timeout=seconds + REQUEST_TIMEOUT + 60)
        elapsed = time.monotonic() - began
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            proc.kill()
    steps.finish()
    durations = np.array([d for _, d in latencies]) * 1000
    warm = [m for t, m in memory if t >= warmup]
    result = {
        "clients": clients, "seconds": seconds, "uploads": uploads, "elapsed_s": round(elapsed, 1),
        "requests": len(latencies), "failed": len(failures), "failures": failures[:20],
        "requests_per_s": round(len(latencies) / elapsed, 2),
        "p50_ms": round(float(np.percentile(durations, 50)), 1) if len(durations) else None,
        "p95_ms": round(float(np.percentile(durations, 95)), 1) if len(durations) else None,
        "max_ms": round(float(durations.max()), 1) if len(durations) else None,
        "citations_checked": checked[0], "readers": readers,
        "read_share": round(readers["lm"] / len(latencies), 4) if latencies else None,
        "rss_mb_after_warmup": round(warm[0], 1) if warm else None,
        "rss_mb_end": round(warm[-1], 1) if warm else None,
        "rss_mb_max": round(max(warm), 1) if warm else None,
        "memory_growth": round(warm[-1] / warm[0] - 1, 4) if warm else None,
        "warmup_s": warmup,
        "rss_mb_every_5s": [round(m, 1) for t, m in memory
                            if abs(t / 5 - round(t / 5)) * 5 < SAMPLE_EVERY / 2],
        "upload_results": upload_log,
        "machine": {"cpus": os.cpu_count(), "load_avg_after": os.getloadavg()},
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
    shutil.rmtree(root, ignore_errors=True)
    return result


def main() -> None:
    """Run the load from the command line and print its figures."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--clients", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0)
    parser.add_argument("--uploads", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    result = run(args.clients, args.seconds, args.uploads, args.out)
    for key in ("clients", "seconds", "requests", "failed", "requests_per_s", "p50_ms", "p95_ms", "max_ms",
                "citations_checked", "readers", "read_share", "rss_mb_after_warmup", "rss_mb_end",
                "memory_growth"):
        print(f"{key:>22}: {result[key]}")
    for entry in result["upload_results"]:
        print(f"{'upload':>22}: {entry['name']} ok={entry['ok']} in {entry['seconds']} s, "
              f"answered from it: {entry['answered_from_it']}")
    for failure in result["failures"][:5]:
        print(f"{'failure':>22}: {failure}")
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
