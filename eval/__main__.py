"""`python -m eval`: score the question set (and optionally RealTime QA), write the report."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from eval import calibrate, harness, report, rtqa  # noqa: E402
from eval.cache import DEFAULT_CACHE, CachingEmbedder, CachingTagger  # noqa: E402
from qa import Config, Embedder  # noqa: E402
from qa.embedding.export import export_onnx, float_path  # noqa: E402
from qa.embedding.onnx_runtime import OnnxEmbedder  # noqa: E402
from qa.embedding.transformer import get_embedder  # noqa: E402
from qa.text.nlp import Tagger  # noqa: E402

RESULTS = Path(__file__).parent / "results"


def build_embedder() -> Embedder:
    """The embedder the product builds with: the float32 ONNX export (same vectors, no torch)."""
    cfg = Config.from_env()
    try:
        export_onnx(cfg.cache_dir)
        return OnnxEmbedder(cfg.model, os.cpu_count() or 1, float_path(cfg.cache_dir))
    except Exception:  # noqa: BLE001 - sentence-transformers gives the same vectors, slower
        return get_embedder(cfg.model)


def parse(argv: list[str] | None) -> argparse.Namespace:
    """The command-line flags."""
    p = argparse.ArgumentParser(prog="python -m eval", description=__doc__)
    p.add_argument("--modes", default="hybrid,dense,bm25", help="comma-separated retrieval modes")
    p.add_argument("--limit", type=int, help="only the first N questions of the hand-written set")
    p.add_argument("--out", type=Path, default=RESULTS, help="folder for report.md, results.json, plots")
    p.add_argument("--calibrate", action="store_true", help="print the fitted refusal thresholds")
    p.add_argument("--realtimeqa", action="store_true", help="also run RealTime QA 2022")
    p.add_argument("--rtqa-limit", type=int, help="only the first N RealTime QA questions")
    p.add_argument("--rtqa-only", action="store_true", help="skip the hand-written set")
    p.add_argument("--rtqa-records", type=Path, help="summarise a (partial) RealTime QA records log")
    p.add_argument("--cache", type=Path, default=DEFAULT_CACHE, help="sqlite file of cached embeddings")
    return p.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the evaluation; print the table and where the files went."""
    args = parse(argv)
    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    result: dict = {"min_evidence": Config.from_env().min_evidence, "summary": {}, "records": {}}
    calibration = None
    if not args.rtqa_only:
        began = time.perf_counter()
        result = harness.run(modes, args.limit)
        result["seconds"] = round(time.perf_counter() - began, 1)
        print(report.table(result["summary"]))
        # Calibrate on hybrid (the product's mode) when it ran, else on the first mode.
        base = result["records"].get("hybrid") or next(iter(result["records"].values()))
        if any(not r["answerable"] for r in base) and any(r["answerable"] for r in base):
            calibration = {"best": calibrate.best(base), "cross_validated": calibrate.cross_validate(base)}
            if args.calibrate:
                b, cv = calibration["best"], calibration["cross_validated"]
                print(f"\ncalibrated min_evidence = {b['min_evidence']}, hinge_evidence = "
                      f"{b['hinge_evidence']} (refusal recall {b['refusal_recall']:.3f}, false refusals "
                      f"{b['false_refusal_rate']:.3f}); out of fold: refusal recall "
                      f"{cv['refusal_recall']:.3f}, false refusals {cv['false_refusal_rate']:.3f}")
    rt = None
    if args.rtqa_records:
        records = [json.loads(line) for line in args.rtqa_records.read_text().splitlines() if line.strip()]
        rt = {"summary": {**rtqa.summarize(records), "seconds": None, "baselines": rtqa.BASELINES,
                          "answer_bearing_ceiling": rtqa.ANSWER_BEARING_CEILING,
                          "min_evidence": Config.from_env().min_evidence}, "records": records}
        print("\n" + report.rtqa_section(rt))
    elif args.realtimeqa or args.rtqa_only:
        args.out.mkdir(parents=True, exist_ok=True)
        log = args.out / "cache" / "rtqa_records.jsonl"
        log.parent.mkdir(parents=True, exist_ok=True)
        log.unlink(missing_ok=True)
        embedder = CachingEmbedder(build_embedder(), args.cache)
        tagger = CachingTagger(Tagger(Config.from_env().nlp), args.cache)
        rt = rtqa.run(embedder, args.rtqa_limit, log, tagger)
        print(f"embedding cache: {embedder.hits} hits, {embedder.misses} embedded", file=sys.stderr)
        print("\n" + report.rtqa_section(rt))
        (log.parent / "rtqa.json").write_text(json.dumps(rt, indent=1), encoding="utf-8")
    if result["summary"]:
        path = report.write(result, args.out, calibration, rt)
        print(f"\nwrote {path} and {args.out / 'results.json'}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
