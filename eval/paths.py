"""Where eval runs write: eval/runs/ (untracked) by default, eval/results/ (published) with --publish."""

from __future__ import annotations

import argparse
import os
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "eval" / "results"  # published: the figures the README and docs quote
RUNS = ROOT / "eval" / "runs"  # a user's own runs, git-ignored
CACHE = RESULTS / "cache"  # embeddings and tags reused between runs, git-ignored


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
