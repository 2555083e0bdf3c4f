"""`python -m eval fit-reader`: fit the span reader's type table and ranker on RealTime QA back numbers.

The back numbers (2020 to mid-2022) are for fitting only; figures are reported on RealTime QA 2022
by `python -m eval realtimeqa`. Every back-number evidence passage becomes one article of a
single index, and each question is asked over all of them, as a user's question is asked over
the whole index. Writes qa/readers/spans/types.json and qa/readers/spans/ranker.json (through
eval/fit/shipped.py) and reader_fit.json (out-of-fold figures).
"""

from __future__ import annotations

import argparse
import gzip
import html
import json
import os
import re
import sys
from collections import Counter, defaultdict
from pathlib import Path

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from eval.fit.shipped import write_shipped
from eval.paths import CACHE, RUNS, benchmark_dir
from eval.progress import Steps, bar
from qa import QA, Config, ReaderName
from qa.question import Question, analyse
from qa.readers.base import Reading
from qa.readers.spans.ranker import SPAN_FEATURES, reading_of
from qa.sentences.record import Sentence
from qa.text.normalise import key as normalise

WORK = CACHE / "backnumber"
RESULTS = RUNS / "reader_fit.json"
FOLDS = 5
# Expected seconds of each step on 2 cores (the index is built once, then only what changed).
PLAN = {"read the back numbers": 5, "index their passages": 900, "fit the type table": 120,
        "candidate features": 400, "cross-validate the ranker": 60, "calibrate and write": 20}


def load(path: Path | None = None, limit: int | None = None) -> list[dict]:
    """Back-number questions with an evidence passage: id, question, gold answer, plain-text passage."""
    path = path or benchmark_dir("realtimeqa-backnumber") / "questions.jsonl.gz"
    rows = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            q = json.loads(line)
            text = html.unescape(re.sub(r"<[^>]+>", "", q.get("evidence") or "")).strip()
            if text:
                rows.append({"id": q["question_id"], "question": q["question_sentence"],
                             "gold": q["choices"][int(q["answer"][0])], "text": text})
    return rows[:limit]


def engine_over(rows: list[dict], work: Path) -> QA:
    """The product's engine over one index of every evidence passage (incremental across runs)."""
    seeds = work / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    wanted = {f"{r['id']}.txt": r["text"] for r in rows}
    for stale in set(p.name for p in seeds.iterdir()) - set(wanted):
        (seeds / stale).unlink()
    for name, text in wanted.items():
        path = seeds / name
        if not path.is_file() or path.read_text("utf-8") != text:
            path.write_text(text, "utf-8")
    # Only the span reader is fitted: nothing here loads the language model.
    engine = QA(Config.from_env(seeds_dir=seeds, index_dir=work / "index", reader=ReaderName.SPANS))
    engine.build(progress=True)
    return engine


def fit_types(engine: QA, rows: list[dict]) -> dict:
    """Counts of the label of the span equal to the gold answer in its own passage, per key and kind."""
    index = engine.index
    by_source: dict[str, list[int]] = defaultdict(list)
    for sid, source in enumerate(index.sent_sources):
        by_source[source].append(sid)
    keys: dict[str, Counter] = defaultdict(Counter)
    kinds: dict[str, Counter] = defaultdict(Counter)
    reader = engine.answerer.fallback  # the span reader
    record = engine.answerer.gatherer.record
    for r in bar(rows, desc="type table"):
        gold = normalise(r["gold"])
        labels = [c.label for sid in by_source[f"{r['id']}.txt"] for c in reader.candidates(record(sid))
                  if c.key == gold]
        if labels:
            asked = analyse(r["question"])
            keys[asked.key][labels[0]] += 1
            kinds[asked.expects][labels[0]] += 1
    # Keys seen once say little and make the file long: the kind carries them.
    return {"keys": {k: dict(v) for k, v in sorted(keys.items()) if sum(v.values()) >= 2},
            "kinds": {k: dict(v) for k, v in sorted(kinds.items())}}


def scored_sentences(engine: QA, question: str) -> list[Sentence]:
    """The sentences the product cites from for a question, best first."""
    return list(engine.answerer.draft(question, None, "hybrid", None, None).evidence.cited)


def features(engine: QA, rows: list[dict]) -> tuple[np.ndarray, np.ndarray, np.ndarray, list]:
    """Candidate features, labels (equal to the gold answer), question numbers and, per question,
    its scored sentences and candidates, over all rows."""
    xs, ys, groups, read = [], [], [], []
    for g, r in enumerate(bar(rows, desc="features")):
        asked: Question = analyse(r["question"])
        scored = scored_sentences(engine, r["question"])
        found, x = engine.answerer.fallback.features(asked, scored)  # type: ignore[attr-defined]
        gold = normalise(r["gold"])
        xs.append(x)
        ys.append(np.array([c.key == gold for _, c in found], dtype=np.int8))
        groups.append(np.full(len(found), g))
        read.append((scored, found))
    return np.vstack(xs), np.concatenate(ys), np.concatenate(groups), read


def readings(read: list, p: np.ndarray, groups: np.ndarray) -> list[Reading]:
    """Each question's reading from its candidates' out-of-fold probabilities."""
    return [reading_of(found, p[groups == g]) if found else Reading((), 1.0)
            for g, (_, found) in enumerate(read)]


def calibrate(read: list[Reading], oof: list[tuple[float, int, int]]) -> tuple[dict[str, float], list[float]]:
    """Fit P(the best span is right) on its out-of-fold probability and lead over the runner-up;
    the weights, and each question's confidence out of fold."""
    from sklearn.linear_model import LogisticRegression

    rows = []
    for reading in read:
        ps = [s.p for s in reading.spans[:2]] + [0.0, 0.0]
        rows.append((ps[0], ps[0] - ps[1]))
    x, t = np.array(rows), np.array([right for _, right, _ in oof])
    fold = np.arange(len(t)) % FOLDS
    confidence = np.zeros(len(t))
    for f in range(FOLDS):
        model = LogisticRegression(max_iter=1000).fit(x[fold != f], t[fold != f])
        confidence[fold == f] = model.predict_proba(x[fold == f])[:, 1]
    model = LogisticRegression(max_iter=1000).fit(x, t)
    weights = {"p": float(model.coef_[0][0]), "margin": float(model.coef_[0][1]),
               "bias": float(model.intercept_[0])}
    return weights, confidence.tolist()


def per_question(p: np.ndarray, y: np.ndarray, groups: np.ndarray, n: int) -> list[tuple[float, int, int]]:
    """(best p, best is right, any candidate right) for each question number below n."""
    out = []
    for g in range(n):
        mask = groups == g
        if not mask.any():
            out.append((0.0, 0, 0))
            continue
        i = int(np.argmax(p[mask]))
        out.append((float(p[mask][i]), int(y[mask][i]), int(y[mask].any())))
    return out


def cross_validate(x: np.ndarray, y: np.ndarray, groups: np.ndarray, n: int) -> np.ndarray:
    """Out-of-fold probabilities, folds by question."""
    from sklearn.linear_model import LogisticRegression

    fold = groups % FOLDS
    p = np.zeros(len(y))
    for f in range(FOLDS):
        model = LogisticRegression(C=1.0, max_iter=2000).fit(x[fold != f], y[fold != f])
        p[fold == f] = model.predict_proba(x[fold == f])[:, 1]
    return p


def main(argv: list[str] | None = None) -> int:
    """Fit, cross-validate, write the files, print the figures."""
    from sklearn.linear_model import LogisticRegression

    ap = argparse.ArgumentParser(prog="python -m eval fit-reader", description=__doc__)
    ap.add_argument("--limit", type=int, help="only the first N back-number questions with evidence")
    ap.add_argument("--work", type=Path, default=WORK, help="folder for the back-number index")
    ap.add_argument("--out", type=Path, default=RESULTS, help="the figures of the fit")
    args = ap.parse_args(argv)
    steps = Steps("fit-reader", PLAN)
    steps.step("read the back numbers")
    rows = load(limit=args.limit)
    steps.step("index their passages", f"{len(rows):,} questions")
    engine = engine_over(rows, args.work)
    steps.step("fit the type table")
    types = fit_types(engine, rows)
    types_file = write_shipped("types", types)  # the features below use the new table
    steps.step("candidate features")
    x, y, groups, read = features(engine, rows)
    steps.step("cross-validate the ranker", f"{len(y):,} candidates")
    p_oof = cross_validate(x, y, groups, len(rows))
    oof = per_question(p_oof, y, groups, len(rows))
    model = LogisticRegression(C=1.0, max_iter=2000).fit(x, y)
    steps.step("calibrate and write")
    calibration, confidence = calibrate(readings(read, p_oof, groups), oof)
    show = {}
    for t in (0.2, 0.3, 0.4, 0.5, 0.6, 0.7):
        shown = [right for c, (_, right, _) in zip(confidence, oof, strict=True) if c >= t]
        show[str(t)] = {"shown": len(shown) / len(oof), "precision": sum(shown) / max(1, len(shown)),
                        "em": sum(shown) / len(oof)}
    report = {"questions": len(rows), "candidates": len(y), "positives": int(y.sum()),
              "candidate_recall": sum(a for _, _, a in oof) / len(oof),
              "top1_em_oof": sum(r for _, r, _ in oof) / len(oof),
              "top1_given_recall_oof": sum(r for _, r, _ in oof) / max(1, sum(a for _, _, a in oof)),
              "by_threshold_oof": show,
              "typed_questions": sum(sum(v.values()) for v in types["kinds"].values())}
    ranker_file = write_shipped("ranker", {
        "features": list(SPAN_FEATURES), "weights": [round(float(w), 5) for w in model.coef_[0]],
        "bias": round(float(model.intercept_[0]), 5),
        "confidence": {k: round(v, 5) for k, v in calibration.items()},
        "fitted": f"logistic regression on {len(rows)} RealTime QA back-number questions "
                  f"({len(y)} candidate spans); refit with `python -m eval fit-reader`",
    })
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=1) + "\n", "utf-8")
    print(json.dumps(report, indent=1))
    steps.finish()
    print(f"wrote {types_file}, {ranker_file} and {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
