"""The figures docs/ and the README quote, written from the results files, never retyped.

A document marks each generated block with ``<!-- figures:NAME -->`` and
``<!-- /figures:NAME -->``; ``python -m eval ... --publish`` (or ``python -m eval report
--publish``) rewrites what lies between, and a test checks that the committed documents
match the committed results.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from pathlib import Path

from eval.paths import RESULTS, ROOT

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"(<!-- figures:([a-z-]+) -->\n)(.*?)(<!-- /figures:\2 -->)", re.S)


def _read(folder: Path, name: str) -> dict | None:
    path = folder / name
    return json.loads(path.read_text("utf-8")) if path.is_file() else None


def quality(folder: Path) -> str | None:
    """The hand-written set, hybrid against dense-only and BM25-only retrieval."""
    r = _read(folder, "results.json")
    if not r:
        return None
    s = r["summary"]
    modes = [m for m in ("hybrid", "dense", "bm25") if m in s]
    rows = [("evidence Hit@1 / Hit@5", "{evidence_hit@1:.3f} / {evidence_hit@5:.3f}"),
            ("article Hit@1 / MRR@10", "{article_hit@1:.3f} / {article_mrr@10:.3f}"),
            ("answer containment", "{contains:.3f}"),
            ("short answer token F1 / exact match", "{f1:.3f} / {em:.3f}"),
            ("citation precision / recall", "{citation_precision:.3f} / {citation_recall:.3f}"),
            ("refusal precision / recall, false refusals",
             "{refusal_precision:.3f} / {refusal_recall:.3f}, {false_refusal_rate:.3f}")]
    questions = s[modes[0]]["questions"]
    lines = [f"| hand-written set, {questions} questions | " + " | ".join(modes) + " |",
             "|---" * (len(modes) + 1) + "|"]
    for label, fmt in rows:
        cells = [fmt.format_map(s[m]) for m in modes]
        lines.append(f"| {label} | " + " | ".join(cells) + " |")
    if cal := r.get("calibration"):
        cv = cal["cross_validated"]
        lines.append(f"| refusal recall, false refusals, out of fold ({cv['folds']} folds) | "
                     f"{cv['refusal_recall']:.3f}, {cv['false_refusal_rate']:.3f} |"
                     + " |" * (len(modes) - 1))
    return "\n".join(lines)


def realtimeqa(folder: Path) -> str | None:
    """RealTime QA 2022 next to the paper's baselines."""
    rt = _read(folder, "realtimeqa.json")
    if not rt:
        return None
    s = rt["summary"]
    lines = [f"| RealTime QA 2022, {s['questions']} questions ({s['scored']} open-ended) | MC accuracy "
             "| open EM | open F1 |", "|---|---|---|---|"]
    lines += [f"| {name} (paper) | {b['mc_accuracy']:.3f} | {b['em']:.3f} | {b['f1']:.3f} |"
              for name, b in s["baselines"].items()]
    named = {"short_or_sentence": "ours: the reader's best span, else the first cited sentence",
             "short_if_confident": "ours: only the short answers the product shows"}
    lines += [f"| {label} | {s['mc_accuracy']:.3f} | {s['policies'][p]['em']:.3f} | "
              f"{s['policies'][p]['f1']:.3f} |" for p, label in named.items() if p in s["policies"]]
    lines += ["", f"The right choice is one of the reader's candidate spans for {s['candidate_recall']:.3f} "
              f"of the questions; a short answer is shown for {s['short_shown']:.3f}, right "
              f"{s['short_shown_precision']:.3f} of the time; the first cited sentence holds the right "
              f"choice for {s['answer_bearing']:.3f}."]
    return "\n".join(lines)


def speed(folder: Path) -> str | None:
    """Every figure of the scale benchmark, as it prints them."""
    from eval.scale_report import summary

    scale = _read(folder, "scale.json")
    return f"```\n{summary(scale)}\n```" if scale else None


def reader(folder: Path) -> str | None:
    """The reader's out-of-fold figures on the back numbers."""
    fit = _read(folder, "reader_fit.json")
    if not fit:
        return None
    return (f"Out of fold ({fit['questions']:,} back-number questions): the right answer is one of the "
            f"reader's candidates for {fit['candidate_recall']:.3f} of them; its top span is right for "
            f"{fit['top1_em_oof']:.3f} ({fit['top1_given_recall_oof']:.3f} of those where it is a "
            "candidate).")


BLOCKS: dict[str, Callable[[Path], str | None]] = {
    "quality": quality, "realtimeqa": realtimeqa, "speed": speed, "reader": reader}


def render(text: str, folder: Path = RESULTS) -> str:
    """text with every figures block rewritten from the results in folder (unknown blocks kept)."""
    def fill(match: re.Match) -> str:
        make = BLOCKS.get(match.group(2))
        body = make(folder) if make else None
        return match.group(0) if body is None else f"{match.group(1)}{body}\n{match.group(4)}"

    return _BLOCK.sub(fill, text)


def update_docs(folder: Path = RESULTS, docs: list[Path] | None = None) -> list[Path]:
    """Rewrite the figures blocks of the documents; return those that changed."""
    changed = []
    for doc in docs or DOCS:
        text = doc.read_text("utf-8")
        if (new := render(text, folder)) != text:
            doc.write_text(new, "utf-8")
            changed.append(doc)
    return changed
