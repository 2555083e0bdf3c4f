"""`python -m eval [COMMAND]`: every measurement of the product, one entry point, one report.

\b
Commands (each writes its JSON into eval/runs/, or eval/results/ with --publish, then
rebuilds report.md in that folder from every results file there):
  quality      the hand-written question set in three retrieval modes (the default)
  realtimeqa   RealTime QA 2022 (QA_RTQA_DIR, else ../shared/benchmarks/realtimeqa-2022), or
               --year 2025 (with its "none of the above" variant)
  bench        build time, warm answer() and cold `qa ask` on the eval articles
  scale        bench plus builds of 10,000 RealTime QA passages, 1M-vector indexes, LangChain
  load         50 chat clients for a minute, with uploads
  faults       kill -9 during builds and uploads, a full disk
  llm          generative answers from the local LLM against the extractive ones
  formats      extraction time per article format, against reading plain text
  cluster      build and serve on a local two-node Ray cluster against one machine
  concurrency  answers/s with the language-model reader at 1, 4 and 16 questions at once
  fit-reader   refit the span reader on RealTime QA back numbers (writes qa/readers/spans/*.json)
  fit-evidence fit what the language model reads first, on RealTime QA 2022 (writes
               qa/sentences/evidence.json with --write)
  embedders    whether nomic-embed-text-v1.5 or EmbeddingGemma-300M (fetched from PyPI on demand)
               would put the answer in the passages read more often than MiniLM
  fit-lm       calibrate the language-model reader on a RealTime QA 2022 run's records
               (--write: qa/readers/lm/calibration.json)
  broad        the broad questions (overview, summary, list, yes/no, compare, ...) on the seeds and two
               RealTime QA stories, scored by nuggets; --peer rag: the standard recipe beside it
  ablate       every hand-written rule (qa/rules.toml) turned off in turn: the change on the
               hand-written set and on RealTime QA 2025's first 100 questions, replies replayed
  loss         where each answer is lost (not in the articles, not retrieved, not read, misread,
               not shown), per question and in all: --set handwritten, 2022 or 2025
  report       only rebuild report.md (and, with --publish, the figures quoted in docs/)
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import time

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from eval.paths import MissingData, add_publish, out_dir, require_eval_extra, rtqa_file

require_eval_extra()  # every command ends by drawing the report: one line before any traceback
from eval.quality import calibrate  # noqa: E402
from eval.report import figures, markdown  # noqa: E402

# Commands run by a module's own main(), with the file each writes.
DELEGATED = {"bench": ("eval.perf.bench", "bench.json"), "scale": ("eval.perf.scale", "scale.json"),
             "load": ("eval.perf.load", "load.json"), "faults": ("eval.perf.faults", "faults.json"),
             "llm": ("eval.perf.llm", "llm_compare.json"),
             "fit-reader": ("eval.fit.reader", "reader_fit.json"), "fit-lm": ("eval.fit.lm", "lm_fit.json"),
             "fit-evidence": ("eval.fit.evidence", "evidence_fit.json"),
             "formats": ("eval.perf.formats", "formats.json"),
             "cluster": ("eval.perf.cluster", "cluster.json"),
             "concurrency": ("eval.perf.concurrency", "concurrency.json"),
             "embedders": ("eval.fit.embedders", "embedders.json"),
             "ablate": ("eval.ablate.run", "ablation.json"),
             "broad": ("eval.broad.run", "broad.json")}
COMMANDS = ["quality", "realtimeqa", *DELEGATED, "loss", "report"]


def parse(argv: list[str]) -> tuple[argparse.Namespace, list[str]]:
    """The command and its flags; flags of delegated commands pass through."""
    p = argparse.ArgumentParser(prog="python -m eval", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("command", nargs="?", default="quality", choices=COMMANDS)
    add_publish(p)
    p.add_argument("--modes", default="hybrid,dense,bm25", help="quality: comma-separated retrieval modes")
    p.add_argument("--limit", type=int, help="quality, realtimeqa: only the first N questions")
    p.add_argument("--calibrate", action="store_true", help="quality: print the fitted refusal thresholds")
    p.add_argument("--records", help="realtimeqa: summarise a (partial) records log instead of running")
    p.add_argument("--year", default="2022", choices=["2022", "2025"], help="realtimeqa: which year")
    p.add_argument("--set", default="2022", choices=["handwritten", "2022", "2025"],
                   help="loss: which questions")
    p.add_argument("--resume", action="store_true",
                   help="realtimeqa: keep the questions an interrupted run logged, ask the rest")
    args, rest = p.parse_known_args(argv)
    if rest and args.command not in DELEGATED:
        p.error(f"unrecognized arguments: {' '.join(rest)}")
    return args, rest


def quality(args: argparse.Namespace) -> dict:
    """Score the hand-written set; results.json holds summaries, records and the calibration."""
    from eval.quality import harness
    from qa import Config

    modes = [m.strip() for m in args.modes.split(",") if m.strip()]
    began = time.perf_counter()
    result = harness.run(modes, args.limit)
    result["seconds"] = round(time.perf_counter() - began, 1)
    result["min_evidence"] = Config.from_env().answering.min_evidence
    print(markdown.table(result["summary"]))
    base = result["records"].get("hybrid") or next(iter(result["records"].values()))
    result["calibration"] = None
    if any(not r["answerable"] for r in base) and any(r["answerable"] for r in base):
        result["calibration"] = {"best": calibrate.best(base),
                                 "cross_validated": calibrate.cross_validate(base)}
        if args.calibrate:
            print("\n" + markdown.calibration_text(result["calibration"]))
    return result


def realtimeqa(args: argparse.Namespace) -> dict:
    """Run (or summarise the records of) RealTime QA 2022; only the summary is published."""
    from eval.realtimeqa import cache, data, run, summary
    from qa import Config
    from qa.text.nlp import Tagger

    year = args.year
    if args.records:
        with open(args.records, encoding="utf-8") as fh:
            records = [json.loads(line) for line in fh if line.strip()]
        rt = {"summary": {**summary.summarize(records), "seconds": None, "year": year}, "records": records}
    else:
        data.rtqa_dir(year)  # a missing benchmark is one line, before any model loads
        log = cache.records_log(year)  # quotes the benchmark: git-ignored
        log.parent.mkdir(parents=True, exist_ok=True)
        if not args.resume:
            log.unlink(missing_ok=True)
        embedder = cache.CachingEmbedder(cache.build_embedder(), cache.DEFAULT_CACHE)
        tagger = cache.CachingTagger(Tagger(Config.from_env().indexing.nlp), cache.DEFAULT_CACHE)
        rt = run.run(embedder, args.limit, log, tagger, year)
        print(f"embedding cache: {embedder.hits} hits, {embedder.misses} embedded", file=sys.stderr)
    rt["summary"].update(baselines=data.BASELINES[year],
                         min_evidence=Config.from_env().answering.min_evidence,
                         answer_bearing_ceiling=data.ANSWER_BEARING_CEILING[year])
    print(markdown.rtqa_section(rt["summary"]))
    return {"summary": rt["summary"], "records": rt["records"]}


# The hand-written set's answer figures printed beside its loss table.
HANDWRITTEN_METRICS = ("em", "contains", "citation_precision", "refusal_recall", "false_refusal_rate",
                       "latency_p50_ms")


def loss_breakdown(args: argparse.Namespace) -> dict:
    """Run (or read the records of) a question set through the product, and say where each answer is lost."""
    from eval.report import loss

    if args.set == "handwritten":
        from eval.quality import harness

        ran = harness.run(["hybrid"], args.limit)
        records = [r for r in ran["records"]["hybrid"] if r["answerable"]]
        buckets = {r["id"]: r["loss"] for r in records}
        # The same run's answer figures, so a change is judged on both at once.
        metrics = {k: round(ran["summary"]["hybrid"][k], 3) for k in HANDWRITTEN_METRICS}
    else:
        args.year = args.set
        if args.records:
            with open(args.records, encoding="utf-8") as fh:
                records = [json.loads(line) for line in fh if line.strip()]
        else:
            records = realtimeqa(args)["records"]
        buckets = {r["id"]: loss.rtqa_bucket(r) for r in records}
        metrics = {}
    for qid, where in buckets.items():
        print(f"{qid}\t{where}")
    summary = loss.table(list(buckets.values()))
    print("\n" + loss.text(f"Where answers are lost: {args.set}", summary))
    if metrics:
        print(", ".join(f"{k} {v}" for k, v in metrics.items()))
    return {"set": args.set, "summary": summary, "metrics": metrics, "questions": buckets}


def delegate(command: str, rest: list[str], out: str) -> int:
    """Run a benchmark module's main() with its own flags and our output file; its exit status."""
    module, _ = DELEGATED[command]
    sys.argv = [f"python -m eval {command}", *rest, *([] if "--out" in rest else ["--out", out])]
    return importlib.import_module(module).main() or 0


def main(argv: list[str] | None = None) -> int:
    """Run one command, then rebuild the report of the folder it wrote into."""
    argv = sys.argv[1:] if argv is None else argv
    if argv and argv[0] in DELEGATED:  # their own flags (and --help) pass through untouched
        args = argparse.Namespace(command=argv[0], publish="--publish" in argv)
        rest = [a for a in argv[1:] if a != "--publish"]
    else:
        args, rest = parse(argv)
    folder = out_dir(args.publish)
    try:
        if args.command in ("quality", "realtimeqa"):
            # QA_READER=spans python -m eval quality: the span reader's figures, beside the default's.
            spans = os.environ.get("QA_READER") == "spans"
            name = (("results_spans.json" if spans else "results.json")
                    if args.command == "quality" else rtqa_file(args.year))
            result = quality(args) if args.command == "quality" else realtimeqa(args)
            if args.command == "realtimeqa":  # the records quote the benchmark: only the summary is kept
                result = {"summary": result["summary"]}
            (folder / name).write_text(json.dumps(result, indent=1, default=str), encoding="utf-8")
        elif args.command == "loss":
            result = loss_breakdown(args)
            (folder / f"loss_{args.set}.json").write_text(json.dumps(result, indent=1), encoding="utf-8")
        elif args.command in DELEGATED and (code := delegate(args.command, rest,
                                                             str(folder / DELEGATED[args.command][1]))):
            return code  # the command said why on stderr
    except MissingData as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    path = markdown.write(folder)
    print(f"wrote {path}", file=sys.stderr)
    if args.publish:
        for doc in figures.update_docs(folder):
            print(f"updated the figures in {doc}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
