"""A RealTime QA run: every question of a year asked in turn, logged as it goes, then summarised."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from eval.progress import bar
from eval.realtimeqa.ask import ask
from eval.realtimeqa.data import ANSWER_BEARING_CEILING, BASELINES, load, rtqa_dir
from eval.realtimeqa.summary import summarize
from qa import Config, Embedder
from qa.text.nlp import Tagger


def logged(out: Path | None) -> dict[str, dict]:
    """The records an interrupted run already logged (the log is appended to), by question id."""
    if not out or not out.is_file():
        return {}
    return {r["id"]: r for line in out.read_text("utf-8").splitlines() if line.strip()
            for r in [json.loads(line)]}


def run(embedder: Embedder, limit: int | None = None, out: Path | None = None,
        tagger: Tagger | None = None, year: str = "2022") -> dict:
    """Answer and score the first `limit` questions of a year (all when None), timing the run."""
    began = time.perf_counter()
    questions = load(rtqa_dir(year), limit=limit)
    min_evidence = Config.from_env().answering.min_evidence
    done = logged(out)
    records = []
    with open(out, "a", encoding="utf-8") if out else open(os.devnull, "w") as sink:
        shown = bar(questions, desc=f"RealTime QA {year}", every=5)
        for q in shown:
            if q["question_id"] in done:
                records.append(done[q["question_id"]])
                continue
            records.append(ask(q, embedder, min_evidence, tagger, year))
            sink.write(json.dumps(records[-1]) + "\n")
            sink.flush()
            shown.set_postfix(mc=f"{sum(r['mc'] == r['mc_right'] for r in records) / len(records):.2f}",
                              refresh=False)
    summary = summarize(records)
    summary["errors"] = sum("error" in r for r in records)
    summary.update(year=year, seconds=round(time.perf_counter() - began, 1), min_evidence=min_evidence,
                   baselines=BASELINES[year], answer_bearing_ceiling=ANSWER_BEARING_CEILING[year])
    return {"summary": summary, "records": records}
