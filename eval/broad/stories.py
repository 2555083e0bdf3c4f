"""The stories broad questions are asked about: the seeds (our four articles), and stories taken
from RealTime QA's search results, materialised at run time as article files (never copied into the
project: eval/broad/stories.json says which search results make each story)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from eval.paths import ROOT
from eval.realtimeqa import data

STORIES = Path(__file__).with_name("stories.json")


def specs() -> dict[str, dict]:
    """Each story's spec: {"benchmark": "realtimeqa-2025", "articles": [[question id, result], ...]}."""
    return json.loads(STORIES.read_text("utf-8"))


def materialise(story: str, folder: Path) -> Path:
    """The story's articles as files in folder/seeds (the seeds are copied; the others written from
    the benchmark's search results, with their titles and dates); the seeds folder."""
    seeds = folder / "seeds"
    shutil.rmtree(seeds, ignore_errors=True)
    if story == "seeds":
        shutil.copytree(ROOT / "seeds", seeds)
        return seeds
    spec = specs()[story]
    year = spec["benchmark"].removeprefix("realtimeqa-")
    results = {r["question_id"]: r["search_result"]
               for r in data._read(data.rtqa_dir(year) / "search_results.jsonl.gz")}
    seeds.mkdir(parents=True)
    for n, (qid, at) in enumerate(spec["articles"]):
        (seeds / f"{n:02d}.txt").write_text(data.article_file(results[qid][at]), "utf-8")
    return seeds


def texts(story: str, folder: Path) -> list[str]:
    """The text of each article of a story (materialised into folder)."""
    return [p.read_text("utf-8") for p in sorted(materialise(story, folder).iterdir()) if p.is_file()]
