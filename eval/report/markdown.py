"""Output: a terminal table, a JSON file, a Markdown report and its plots."""

from __future__ import annotations

from pathlib import Path

import matplotlib

from eval.paths import read_results, rtqa_file

matplotlib.use("Agg")
import matplotlib.pyplot as plt

ROWS = [
    *[f"article_hit@{k}" for k in (1, 3, 5)], "article_mrr@10", "article_ndcg@10",
    *[f"evidence_hit@{k}" for k in (1, 3, 5)], "evidence_mrr@10", "evidence_ndcg@10",
    "contains", "f1", "em", "best_span_em", "candidate_recall", "citation_precision", "citation_recall",
    "refusal_precision", "refusal_recall", "false_refusal_rate", "read_by_lm", "read_ms_p50",
    "latency_p50_ms", "latency_p95_ms",
]


def table(summary: dict[str, dict[str, float]]) -> str:
    """A Markdown table: one row per metric, one column per retrieval mode."""
    modes = list(summary)
    lines = ["| metric | " + " | ".join(modes) + " |", "|---" * (len(modes) + 1) + "|"]
    for row in ROWS:
        if all(row in summary[mode] for mode in modes):
            cells = [f"{summary[mode][row]:.0f}" if row.endswith("_ms") else f"{summary[mode][row]:.3f}"
                     for mode in modes]
            lines.append(f"| {row} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def calibration_text(calibration: dict) -> str:
    """The fitted refusal thresholds, and their out-of-fold figures."""
    b, cv = calibration["best"], calibration["cross_validated"]
    return (f"Fitted on the whole set: min_evidence = **{b['min_evidence']}**, hinge_evidence = "
            f"**{b['hinge_evidence']}** (refusal recall {b['refusal_recall']:.3f}, false refusals "
            f"{b['false_refusal_rate']:.3f}). Out of fold ({cv['folds']} folds, thresholds fitted on "
            f"the other folds): refusal recall **{cv['refusal_recall']:.3f}**, false refusals "
            f"**{cv['false_refusal_rate']:.3f}**.")


def plots(result: dict, out: Path) -> list[str]:
    """Hit@k per retriever and the latency distribution, as PNG files; their names."""
    summary, records = result["summary"], result["records"]
    fig, axes = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
    for ax, level in zip(axes, ("article", "evidence"), strict=True):
        for mode, s in summary.items():
            ax.plot([1, 3, 5], [s.get(f"{level}_hit@{k}", 0) for k in (1, 3, 5)], marker="o", label=mode)
        ax.set(title=f"{level}-level Hit@k", xlabel="k", xticks=[1, 3, 5], ylim=(0, 1.05))
        ax.grid(alpha=0.3)
    axes[0].legend()
    fig.tight_layout()
    fig.savefig(out / "hit_at_k.png", dpi=100)
    plt.close(fig)
    fig, ax = plt.subplots(figsize=(6, 4))
    ax.hist([[r["latency_ms"] for r in rs] for rs in records.values()], bins=20, label=list(records))
    ax.set(title="answer() latency", xlabel="ms", ylabel="questions")
    ax.legend()
    fig.tight_layout()
    fig.savefig(out / "latency.png", dpi=100)
    plt.close(fig)
    return ["hit_at_k.png", "latency.png"]


def rtqa_section(s: dict) -> str:
    """The RealTime QA results (a run's summary) next to the published baselines."""
    took = f"{s['seconds'] / 60:.1f} min" if s.get("seconds") else "partial run"
    nota = "nota_mc_accuracy" in s
    lines = [f"## RealTime QA {s.get('year', '2022')} ({s['questions']} questions, {s['scored']} scored "
             f"open-ended, {took})", "",
             "| system | MC accuracy | open EM | open F1 |" + (" NOTA MC |" if nota else ""),
             "|---|---|---|---|" + ("---|" if nota else "")]
    for name, b in s["baselines"].items():
        lines.append(f"| {name} | {b['mc_accuracy']:.3f} | {b['em']:.3f} | {b['f1']:.3f} |"
                     + (f" {b['nota_mc_accuracy']:.3f} |" if nota and "nota_mc_accuracy" in b else
                        " |" if nota else ""))
    for policy, p in s["policies"].items():
        # The span reader's multiple choice was dropped: only older runs have its figure.
        mc = s.get("mc_spans_accuracy") if policy == "span_reader" else s["mc_accuracy"]
        lines.append(f"| ours, prediction = {policy} | {'' if mc is None else f'{mc:.3f}'} | {p['em']:.3f} | "
                     f"{p['f1']:.3f} |"
                     + (f" {s['nota_mc_accuracy']:.3f} |" if nota and policy != "span_reader" else
                        " |" if nota else ""))
    lines += ["", f"The language model's sentences hold the right choice for {s.get('gold_given', 0.0):.3f} "
              f"of the questions; it declined {s.get('lm_declined', 0.0):.3f} and wrote a phrase in no "
              f"sentence {s.get('lm_unverified', 0.0):.3f} of the time (median read "
              f"{s.get('lm_read_ms_p50', 0.0):.0f} ms). Short answer shown (reader confident): "
              f"{s.get('short_shown', 0.0):.3f} of questions, exact "
              f"{s.get('short_shown_precision', 0.0):.3f} of the time. The span reader: candidate "
              f"recall {s.get('candidate_recall', 0.0):.3f}"
              + (f", multiple choice {s['mc_spans_accuracy']:.3f}." if "mc_spans_accuracy" in s else "."), "",
              "Answer-bearing rate (first cited sentence holds the right choice): "
              f"{s['answer_bearing']:.3f} (ceiling {s['answer_bearing_ceiling']}). Share answered at "
              f"min_evidence={s['min_evidence']}: {s['answered_at_threshold']:.3f}."]
    if "loss" in s:
        from eval.report import loss

        lines += ["", loss.text("Where answers are lost", s["loss"])]
    return "\n".join(lines)


def _flat(data: dict, prefix: str = "") -> list[str]:
    """The numbers of a results file, one `key: value` line each (lists and long texts left out)."""
    lines = []
    for key, value in data.items():
        if isinstance(value, dict):
            lines += _flat(value, f"{prefix}{key}.")
        elif isinstance(value, bool | int | float) or (isinstance(value, str) and len(value) < 60):
            shown = f"{value:.4g}" if isinstance(value, float) else value
            lines.append(f"- {prefix}{key}: {shown}")
    return lines


# Results files reported as their figures, one per line: (file, section title).
OTHER = [("reader_fit.json", "Reader fit on RealTime QA back numbers (out of fold)"),
         ("bench.json", "Speed on the eval articles (`python -m eval bench`)"),
         ("build_tagging.json", "Build with tagging, 1,000 RealTime QA passages"),
         ("load.json", "Chat under load (`python -m eval load`)"),
         ("faults.json", "Faults (`python -m eval faults`)"),
         ("cluster.json", "Ray cluster (`make cluster-bench`)"),
         ("formats.json", "Article formats")]


def write(folder: Path) -> Path:
    """Write report.md (and its plots) from every results file in folder; return its path."""
    parts = ["# Evaluation report", "",
             f"Built by `python -m eval` from the results files in `{folder.name}/`.", ""]
    if result := read_results(folder, "results.json"):
        parts += ["## Hand-written set", "",
                  f"{next(iter(result['summary'].values()))['questions']} questions over eval/articles/, "
                  f"min_evidence={result['min_evidence']}. Retrieval and answer metrics are over "
                  "answerable questions; refusal metrics treat \"not covered\" as the positive class.",
                  "", table(result["summary"]), ""]
        if result.get("records"):
            parts += [f"![{name}]({name})" for name in plots(result, folder)]
        if result.get("calibration"):
            parts += ["", "### Refusal thresholds (hybrid)", "", calibration_text(result["calibration"])]
    for year in ("2022", "2025"):
        if rt := read_results(folder, rtqa_file(year)):
            parts += ["", rtqa_section(rt["summary"])]
    if scale := read_results(folder, "scale.json"):
        from eval.report.scale_text import summary

        parts += ["", "## Scale (`python -m eval scale`)", "", "```", summary(scale), "```"]
    if llm := read_results(folder, "llm_compare.json"):
        parts += ["", "## Generative answers against extractive ones (`python -m eval llm`)", "",
                  *_flat({k: v for k, v in llm.items() if k != "rows"})]
    for name, title in OTHER:
        if data := read_results(folder, name):
            parts += ["", f"## {title}", "", *_flat(data)]
    report = folder / "report.md"
    report.write_text("\n".join(parts) + "\n", encoding="utf-8")
    return report
