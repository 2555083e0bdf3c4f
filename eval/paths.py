"""Where eval runs write: eval/runs/ (untracked) by default, eval/results/ (published) with --publish."""

from __future__ import annotations

import argparse
import json
import os
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "eval" / "results"  # published: the figures the README and docs quote
RUNS = ROOT / "eval" / "runs"  # a user's own runs, git-ignored
CACHE = RESULTS / "cache"  # embeddings and tags reused between runs, git-ignored
QUESTIONS = ROOT / "eval" / "questions.jsonl"  # the hand-written question set


def questions() -> list[dict]:
    """The hand-written question set's rows, in file order."""
    return [json.loads(line) for line in QUESTIONS.read_text("utf-8").splitlines() if line.strip()]


def read_results(folder: Path, name: str) -> dict | None:
    """A results file of folder as JSON, or None when that measurement was not run there."""
    path = folder / name
    return json.loads(path.read_text("utf-8")) if path.is_file() else None


def out_dir(publish: bool) -> Path:
    """The folder a run writes into; QA_EVAL_OUT overrides the unpublished default."""
    folder = RESULTS if publish else Path(os.environ.get("QA_EVAL_OUT", RUNS))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def output_file(name: str, publish: bool) -> Path:
    """eval/runs/NAME, or eval/results/NAME when publishing."""
    return out_dir(publish) / name


def add_publish(parser: argparse.ArgumentParser) -> None:
    """The --publish flag every eval command takes."""
    parser.add_argument("--publish", action="store_true",
                        help="write into eval/results/ (the published figures) instead of eval/runs/")


def counts(what: str, example: str) -> Callable[[str], tuple[int, ...]]:
    """An argparse type for comma-separated counts of at least 1 ("1,4" is (1, 4))."""

    def parse(text: str) -> tuple[int, ...]:
        try:
            found = tuple(int(part) for part in text.split(","))
        except ValueError:
            found = ()
        if not found or min(found) < 1:
            raise argparse.ArgumentTypeError(f"{text!r} is not a list of {what} counts of at least 1, "
                                             f"e.g. {example}")
        return found

    return parse


def require_eval_extra() -> None:
    """Exit with one line naming the fix when the eval extra (matplotlib, the report's charts) is missing."""
    try:
        import matplotlib  # noqa: F401
    except ImportError:
        raise SystemExit("error: python -m eval needs the eval extra (matplotlib, for the report's charts), "
                         "which `make chat` does not install: run `make eval-extra` once") from None


class MissingData(Exception):
    """A benchmark folder that is not on this machine; the message says where it is looked for."""


def rtqa_file(year: str) -> str:
    """The results file of a RealTime QA year."""
    return "realtimeqa.json" if year == "2022" else f"realtimeqa-{year}.json"


def benchmark_dir(name: str) -> Path:
    """A benchmark's folder: QA_RTQA_DIR for realtimeqa-2022, else QA_BENCHMARKS_DIR/NAME.

    QA_BENCHMARKS_DIR defaults to ../shared/benchmarks beside the repository, where the team's
    machines keep RealTime QA (https://github.com/realtimeqa/realtimeqa_public, read in place).
    """
    override = os.environ.get("QA_RTQA_DIR") if name == "realtimeqa-2022" else None
    base = Path(os.environ.get("QA_BENCHMARKS_DIR") or ROOT.parent / "shared" / "benchmarks")
    folder = Path(override) if override else base / name
    if not folder.is_dir():
        variable = "QA_RTQA_DIR" if name == "realtimeqa-2022" else "QA_BENCHMARKS_DIR"
        raise MissingData(f"benchmark folder {folder} not found: set {variable} to where {name} is "
                          "(RealTime QA, github.com/realtimeqa/realtimeqa_public)")
    return folder


ARTICLES = ROOT / "eval" / "articles"  # the fixed copy of the articles the question set is about


def eval_articles() -> Path:
    """The question set's articles, checked against eval/articles/SHA256SUMS before any run."""
    import hashlib

    for line in (ARTICLES / "SHA256SUMS").read_text("utf-8").splitlines():
        digest, name = line.split(maxsplit=1)
        path = ARTICLES / name
        if not path.is_file() or hashlib.sha256(path.read_bytes()).hexdigest() != digest:
            raise MissingData(f"{path} is missing or changed: the questions are scored against these "
                              "exact articles; restore it with `git checkout eval/articles`")
    return ARTICLES
