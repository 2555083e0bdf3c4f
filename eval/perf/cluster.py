"""The cluster on this machine: build rate on 1 and 2 Ray nodes against the single-machine build,
HTTP answers per second with 1 and 2 Serve replicas, and the answer quality the cluster index keeps.

    .venv/bin/python -m eval cluster                      # 10,000 passages -> eval/runs/cluster.json
    .venv/bin/python -m eval cluster --passages 2000 --seconds 10
    .venv/bin/python -m eval cluster --publish            # -> eval/results/cluster.json

Every node is started here with `ray start` (one CPU each, 127.0.0.1) and stopped after.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import tempfile
import threading
import time
from pathlib import Path

import numpy as np

from eval.paths import add_publish, counts, eval_articles, output_file, questions
from eval.perf.scale_data import percentiles, rtqa_articles
from eval.progress import Steps, bar

log = logging.getLogger(__name__)


def _write_corpus(articles: list, path: Path) -> None:
    """The articles as JSON Lines rows (id, title, text), what a cluster build reads."""
    with path.open("w", encoding="utf-8") as fh:
        for a in articles:
            fh.write(json.dumps({"id": a.source, "title": a.title, "text": a.text}) + "\n")


def _rate(report) -> dict:  # report: a BuildReport
    return {"passages": report.embedded_chunks, "sentences": report.embedded_sentences,
            "seconds": round(report.seconds, 1),
            "passages_per_s": round(report.embedded_chunks / report.seconds, 1)}


def build_rates(work: Path, articles: list, cluster, nodes: tuple[int, ...] = (1, 2)) -> dict:
    """Passages per second: single-machine build, then the cluster build on each count of nodes
    (cluster: a LocalCluster of one node, grown as the counts ask)."""
    from qa import QA, Config
    from qa.cluster.build import build_on_ray

    corpus = work / "corpus.jsonl"
    _write_corpus(articles, corpus)
    single = QA(Config.from_env(index_dir=work / "single")).build(articles=articles)
    out = {"single_machine": _rate(single)}
    for count in sorted(nodes):
        while len(cluster.groups) < count:
            cluster.add_node()
        report = build_on_ray(Config.from_env(index_dir=work / f"nodes{count}"), cluster.address, corpus)
        out[f"ray_{count}_node"] = {**_rate(report), "vs_single_machine": round(
            report.embedded_chunks / report.seconds / out["single_machine"]["passages_per_s"], 2)}
    return out


def _load(url: str, questions: list[str], clients: int, seconds: float,
          read: list[int] | None = None) -> tuple[list[float], int, float]:
    """Each client posts /ask in turn until time is up: answered latencies, errors, elapsed seconds;
    read counts the answers the language model read (the rest came from the span reader)."""
    import httpx

    latencies: list[float] = []
    errors = [0]
    read = read if read is not None else [0]
    stop = time.monotonic() + seconds

    def client(n: int) -> None:
        with httpx.Client(timeout=120) as http:
            i = n
            while time.monotonic() < stop:
                began = time.perf_counter()
                reply = http.post(url + "/ask", json={"question": questions[i % len(questions)]})
                if reply.status_code == 200:
                    latencies.append(time.perf_counter() - began)
                    read[0] += reply.json().get("reader") == "lm"
                else:
                    errors[0] += 1
                i += clients

    began = time.monotonic()
    threads = [threading.Thread(target=client, args=(n,)) for n in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return latencies, errors[0], time.monotonic() - began


def http_load(index_dir: Path, cluster, seconds: float, clients: int) -> dict:
    """POST /ask from `clients` threads for `seconds`, with 1 replica and then 2."""
    from qa import Config
    from qa.cluster.local import free_port
    from qa.cluster.serve import start_service, stop_service

    texts = [r["question"] for r in questions()]
    port = free_port()
    out = {}
    try:
        for replicas in (1, 2):
            url = start_service(Config.from_env(index_dir=index_dir), cluster.address, replicas,
                                "127.0.0.1", port)
            read = [0]
            latencies, errors, elapsed = _load(url, texts, clients, seconds, read)
            out[f"{replicas}_replica"] = {"answers": len(latencies), "errors": errors, "read_by_lm": read[0],
                                          "answers_per_s": round(len(latencies) / elapsed, 3),
                                          "elapsed_s": round(elapsed, 1),
                                          **percentiles(latencies)}
    finally:
        stop_service()
    return out


def quality(work: Path, cluster) -> dict:  # cluster: a LocalCluster
    """The hand-written set on the normal seeds index, the cluster's (float16 sentence vectors), and
    on int8 sentence vectors (the next step down), each scored by eval/quality/harness.py."""
    from eval.quality.harness import ask_all, load_questions, summarize
    from qa import QA, Config
    from qa.cluster.build import build_on_ray
    from qa.index.load import load_index

    questions = load_questions()
    keep = ("contains", "f1", "em", "evidence_hit@5", "evidence_mrr@10", "citation_precision",
            "citation_recall", "refusal_precision", "refusal_recall", "false_refusal_rate")
    texts: dict[str, list[str]] = {}

    def score(index_dir: Path, change=None) -> dict:  # change: vectors -> vectors
        engine = QA(Config.from_env(index_dir=index_dir))
        index = load_index(index_dir)
        if change is not None:
            index.sent_vectors = change(np.asarray(index.sent_vectors, np.float32))
        engine.use_index(index)
        shown = bar(total=len(questions), desc=f"hand-written set, {index_dir.name}")
        records = ask_all(engine, questions, "hybrid", shown)
        shown.close()
        summary = summarize(records)
        mine = texts.setdefault(str(index_dir) + str(change is not None), [r["text"] for r in records])
        first = next(iter(texts.values()))  # the normal index's answers, scored first
        same = sum(a == b for a, b in zip(mine, first, strict=True)) / len(first)
        return {**{k: round(summary[k], 4) for k in keep if k in summary}, "same_answer_as_float32": same}

    normal = QA(Config.from_env(index_dir=work / "seeds-normal", seeds_dir=eval_articles()))
    normal.build()
    build_on_ray(Config.from_env(index_dir=work / "seeds-cluster"), cluster.address, eval_articles())

    def int8(v: np.ndarray) -> np.ndarray:
        # Symmetric scalar quantisation per dimension, as a PQ-free 4x shrink would store it.
        scale = np.abs(v).max(axis=0, keepdims=True) / 127
        return (np.round(v / scale).astype(np.int8) * scale).astype(np.float32)

    return {"questions": len(questions), "normal_float32": score(work / "seeds-normal"),
            "cluster_float16": score(work / "seeds-cluster"),
            "int8_sentences": score(work / "seeds-normal", int8)}


def requery_cost(index_dir: Path, chunks: int = 10, rounds: int = 20) -> dict:
    """What keeping no sentence vectors would cost: re-pooling a question's chunks on the ONNX model."""
    from qa import Config
    from qa.embedding.export import float_path
    from qa.embedding.onnx_runtime import OnnxEmbedder
    from qa.index.load import load_index

    index = load_index(index_dir)
    embedder = OnnxEmbedder(index.meta["model"], 1, float_path(Config.from_env().cache_dir))
    rng = np.random.default_rng(0)
    times = []
    for _ in range(rounds):
        picked = rng.choice(len(index.chunks), chunks, replace=False)
        texts = [index.chunks[i].text for i in picked]
        spans = [[(0, len(t))] for t in texts]
        began = time.perf_counter()
        embedder.embed_spans(texts, spans)
        times.append(time.perf_counter() - began)
    return {"chunks_per_question": chunks, "threads": 1, **percentiles(times)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--passages", type=int, default=10_000, help="RealTime QA passages to build")
    parser.add_argument("--seconds", type=float, default=30, help="load time per replica count")
    parser.add_argument("--clients", type=int, default=20, help="concurrent HTTP clients")
    parser.add_argument("--only", default="build,http,quality", help="sections to run")
    parser.add_argument("--nodes", type=counts("node", "1,2"), default=(1, 2),
                        help="Ray node counts to build on (default 1,2)")
    add_publish(parser)
    parser.add_argument("--out", type=Path, help="the results file (default: cluster.json in eval/runs/)")
    args = parser.parse_args(argv)
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    logging.basicConfig(level=logging.WARNING)
    from qa.articles.load import load_articles
    from qa.cluster.local import LocalCluster

    only = set(args.only.split(","))
    result: dict = {"machine": {"cores": len(os.sched_getaffinity(0)), "loadavg": os.getloadavg()},
                    "nodes": "ray start on 127.0.0.1, 1 CPU each"}
    built_on = f"build on one machine, then on {' and '.join(map(str, sorted(args.nodes)))} Ray node(s)"
    plan = {"start a Ray node": (None, 30),
            built_on: ("build", args.passages * 0.15 * len(args.nodes)),
            "serve HTTP with 1 and 2 replicas": ("http", 2 * args.seconds + 90),
            "the hand-written set on three indexes": ("quality", 1000)}
    steps = Steps("cluster", {k: t for k, (part, t) in plan.items() if part is None or part in only})
    steps.step("start a Ray node")
    with tempfile.TemporaryDirectory(prefix="qa-cluster-bench-") as tmp, LocalCluster() as cluster:
        work = Path(tmp)
        articles = load_articles(eval_articles()) + rtqa_articles(args.passages)
        if "build" in only:
            steps.step(built_on, f"{len(articles):,} articles")
            result["build"] = build_rates(work, articles, cluster, args.nodes)
            print(json.dumps(result["build"]), flush=True)
        elif "http" in only:
            from qa.cluster.build import build_on_ray
            from qa.config import Config

            _write_corpus(articles, work / "corpus.jsonl")
            build_on_ray(Config.from_env(index_dir=work / "nodes2"), cluster.address, work / "corpus.jsonl")
        if len(cluster.groups) < 2 and only & {"http", "quality"}:
            cluster.add_node()
        if "http" in only:
            steps.step("serve HTTP with 1 and 2 replicas", f"{args.clients} clients, {args.seconds:g} s each")
            result["http"] = {"clients": args.clients, "seconds": args.seconds,
                              **http_load(work / "nodes2", cluster, args.seconds, args.clients)}
            print(json.dumps(result["http"]), flush=True)
        if "quality" in only:
            steps.step("the hand-written set on three indexes")
            result["quality"] = quality(work, cluster)
            result["requery"] = requery_cost(work / "seeds-normal")
            print(json.dumps(result["quality"]), flush=True)
    steps.finish()
    result["machine"]["loadavg_after"] = os.getloadavg()
    out = args.out or output_file("cluster.json", args.publish)
    if out.is_file():  # the sections --only left out keep their last figures
        for key, value in json.loads(out.read_text()).items():
            result.setdefault(key, value)
    out.write_text(json.dumps(result, indent=2) + "\n")
    print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
