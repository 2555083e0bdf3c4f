"""The figures docs/ and the README quote, written from the results files, never retyped.

A document marks each generated block with ``<!-- figures:NAME -->`` and
``<!-- /figures:NAME -->``; ``python -m eval ... --publish`` (or ``python -m eval report
--publish``) rewrites what lies between, and a test checks that the committed documents
match the committed results.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from pathlib import Path

from eval.paths import RESULTS, ROOT, read_results, rtqa_file

DOCS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
_BLOCK = re.compile(r"(<!-- figures:([a-z-]+) -->\n)(.*?)(<!-- /figures:\2 -->)", re.S)


def quality(folder: Path) -> str | None:
    """The hand-written set, hybrid against dense-only and BM25-only retrieval."""
    r = read_results(folder, "results.json")
    if not r:
        return None
    s = r["summary"]
    modes = [m for m in ("hybrid", "dense", "bm25") if m in s]
    rows = [("evidence Hit@1 / Hit@5", "{evidence_hit@1:.3f} / {evidence_hit@5:.3f}"),
            ("article Hit@1 / MRR@10", "{article_hit@1:.3f} / {article_mrr@10:.3f}"),
            ("answer containment", "{contains:.3f}"),
            ("short answer token F1 / exact match", "{f1:.3f} / {em:.3f}"),
            ("reader's best span right (shown or not) / right one among its spans",
             "{best_span_em:.3f} / {candidate_recall:.3f}"),
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
    rt = read_results(folder, "realtimeqa.json")
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
    from eval.report.scale_text import summary

    scale = read_results(folder, "scale.json")
    return f"```\n{summary(scale)}\n```" if scale else None


def reader(folder: Path) -> str | None:
    """The reader's out-of-fold figures on the back numbers."""
    fit = read_results(folder, "reader_fit.json")
    if not fit:
        return None
    return (f"Out of fold ({fit['questions']:,} back-number questions): the right answer is one of the "
            f"reader's candidates for {fit['candidate_recall']:.3f} of them; its top span is right for "
            f"{fit['top1_em_oof']:.3f} ({fit['top1_given_recall_oof']:.3f} of those where it is a "
            "candidate)."
            + (f" The multiple-choice scorer picks the right choice for {fit['mc_accuracy_oof']:.3f}."
               if "mc_accuracy_oof" in fit else ""))


def load(folder: Path) -> str | None:
    """The chat under load, and the faults it survives."""
    r, f = read_results(folder, "load.json"), read_results(folder, "faults.json")
    lines = []
    if r:
        ups = r["upload_results"]
        lines.append(
            f"- **Load** ({r['machine']['cpus']} cores): {r['requests']:,} `/ask` requests from "
            f"{r['clients']} clients in {r['seconds']:.0f} s, **{r['failed']} failed**, "
            f"{r['requests_per_s']:.1f} requests/s, p50 {r['p50_ms'] / 1000:.2f} s, p95 "
            f"{r['p95_ms'] / 1000:.2f} s (each client asks again as soon as it is answered). " + (
                f"{r['readers']['lm']:,} answers read by the model, "
                f"{r['readers'].get('spans_line_too_long', 0):,} by the span reader at once with its notice "
                "(the line ahead was longer than `QA_READ_TIMEOUT`), "
                f"{r['readers']['spans_with_notice']:,} by the span reader after waiting "
                "`QA_READ_TIMEOUT` out, "
                f"{r['readers']['not_read']:,} refused before reading. " if "readers" in r else "")
            + f"{r['citations_checked']:,} citations checked exact. {sum(u['ok'] for u in ups)} of "
            f"{len(ups)} uploads added meanwhile, {sum(u['answered_from_it'] for u in ups)} answered "
            f"from at once. Server memory {r['rss_mb_after_warmup']:.0f} MB after warm-up, "
            f"{r['rss_mb_end']:.0f} MB at the end ({r['memory_growth']:+.1%}).")
    if f:
        kills, ups = f["build_kills"], f["upload_kills"]
        lines.append(
            f"- **`kill -9` of `qa build`** {len(kills)} times, "
            f"{min(k['killed_after_s'] for k in kills):.1f}-{max(k['killed_after_s'] for k in kills):.1f} s "
            f"into a {f['build_s']:.1f} s build: after "
            f"{sum(len(k['index_dirs_after_kill']) == 1 for k in kills)} of them one whole index was left, "
            "which passed its checksums and answered (the run stops otherwise).")
        kept = sum(u["unchanged"] for u in ups)
        whole = sum(u.get("committed", False) for u in ups)
        lines.append(f"- **`kill -9` of an upload's build** {len(ups)} times: {kept} of {len(ups)} left "
                     "`seeds/` and the index unchanged" + (
                         f", {whole} came after the upload was saved and kept all of it (none kept part "
                         "of one: the run stops otherwise)" if whole else "") + ".")
        disk = f["full_disk"]
        lines.append(f"- **Full disk**: exit code {disk['exit_code']}, "
                     f"old index in use: {disk['old_index_in_use']}; the message: ``{disk['stderr']}``")
        for b in f.get("bombs", []):
            lines.append(f"- **{b['file']}** ({b['kb']:,} KB), `{b['command']}`: exit code {b['exit_code']} "
                         f"in {b['seconds']:.1f} s, peak memory {b['peak_mb']:,} MB, nothing changed; "
                         f"``{b['message']}``")
    return "\n".join(lines) or None


def _llm_line(r: dict) -> str:
    e, g = r["extractive"], r["llm"]
    kept = g["sentences_kept"] / max(1, g["sentences_dropped"] + g["sentences_kept"])
    return (f"{r.get('writer', 'SmolLM2-135M-Instruct (llama_cpp.server)')}, {r['questions']} answerable "
            f"questions: {g['sentences_kept']} of {g['sentences_dropped'] + g['sentences_kept']} generated "
            f"sentences kept ({kept:.0%}), {sum(g['fallbacks'].values())} answers fell back to the "
            f"extractive one and {g['generated_answers_shown']} were shown generated. Answer containment "
            f"{g['contains']:.3f} vs {e['contains']:.3f} extractive, citation precision "
            f"{g['citation_precision']:.3f} vs {e['citation_precision']:.3f}; on the generated answers "
            f"containment was {g['contains_when_generated']:.3f} vs {g['extractive_contains_same']:.3f} "
            "for the extractive answer to the same questions.")


def llm(folder: Path) -> str | None:
    """Generative answers of the reader's model, and of the tiny test model, against the extractive ones."""
    names = ("llm_compare.json", "llm_compare_smollm2.json")
    runs = [r for name in names if (r := read_results(folder, name))]
    return "\n\n".join(f"- {_llm_line(r)}" for r in runs) or None


def cluster(folder: Path) -> str | None:
    """Build rate on Ray against one machine, and HTTP answers with 1 and 2 replicas."""
    r = read_results(folder, "cluster.json")
    if not r or "build" not in r:
        return None
    b, lo, hi = r["build"], r["machine"]["loadavg"][0], r["machine"]["loadavg_after"][0]
    single = b["single_machine"]
    lines = [f"{single['passages']:,} passages, {single['sentences']:,} sentences; load average {lo:.1f} "
             f"before, {hi:.1f} after.", "", "| | passages/s | vs single machine |", "|---|---|---|",
             f"| single-machine `qa build` | {single['passages_per_s']} ({single['seconds']:.0f} s) | 1.00 |"]
    rows = (("ray_1_node", "`qa build --ray`, 1 node"), ("ray_2_node", "`qa build --ray`, 2 nodes"))
    for key, label in rows:
        if row := b.get(key):
            lines.append(f"| {label} | {row['passages_per_s']} ({row['seconds']:.0f} s) | "
                         f"{row['vs_single_machine']:.2f} |")
    if h := r.get("http"):
        read = all("read_by_lm" in row for row in h.values() if isinstance(row, dict))
        lines += ["", f"| `POST /ask`, {h['clients']} concurrent clients, {h['seconds']:.0f} s on loopback | "
                  "answers/s | p50 | p95 | errors |" + (" read by the model |" if read else ""),
                  "|---|---|---|---|---|" + ("---|" if read else "")]
        for key, label in (("1_replica", "1 replica"), ("2_replica", "2 replicas")):
            if row := h.get(key):
                lines.append(f"| {label} | {row['answers_per_s']:.2f} | {row['p50_ms']:,.0f} ms | "
                             f"{row['p95_ms']:,.0f} ms | {row['errors']} |"
                             + (f" {row['read_by_lm']} of {row['answers']} |" if read else ""))
        if (one := h.get("1_replica")) and (two := h.get("2_replica")) and one["answers_per_s"]:
            lines.append(f"\n2 replicas answer {two['answers_per_s'] / one['answers_per_s']:.2f}x as many "
                         "questions a second as one.")
    return "\n".join(lines)


def reader_lm(folder: Path) -> str | None:
    """The language-model reader against the span reader: the hand-written set, RealTime QA, speed."""
    lm, spans = read_results(folder, "results.json"), read_results(folder, "results_spans.json")
    lines = ["| | language-model reader | span reader |", "|---|---|---|"]
    if lm and spans:
        a, b = lm["summary"]["hybrid"], spans["summary"]["hybrid"]
        for label, key in (("hand-written set: short answer exact match", "em"),
                           ("hand-written set: answer containment", "contains"),
                           ("hand-written set: citation precision", "citation_precision"),
                           ("hand-written set: refusal recall", "refusal_recall"),
                           ("hand-written set: false refusals", "false_refusal_rate")):
            lines.append(f"| {label} | {a[key]:.3f} | {b[key]:.3f} |")
    for year in ("2022", "2025"):
        rt = read_results(folder, rtqa_file(year))
        if rt and "span_reader" in rt["summary"]["policies"]:  # a run that read with both readers
            s = rt["summary"]
            ours, theirs = s["policies"]["short_only"], s["policies"]["span_reader"]
            lines += [f"| RealTime QA {year} ({s['questions']} questions): open EM / F1 | {ours['em']:.3f} / "
                      f"{ours['f1']:.3f} | {theirs['em']:.3f} / {theirs['f1']:.3f} |",
                      f"| RealTime QA {year}: multiple choice | {s['mc_accuracy']:.3f} | "
                      + (f"{s['mc_spans_accuracy']:.3f} |" if "mc_spans_accuracy" in s else "|")]
            if "nota_mc_accuracy" in s:
                lines.append(f"| RealTime QA {year}: multiple choice, none of the above | "
                             f"{s['nota_mc_accuracy']:.3f} | |")
    if (bench := read_results(folder, "bench.json")) and (r := bench.get("lm_reader")):
        lines.append(f"| warm answer p50 / p95 (2 cores, {r['questions']} questions) | "
                     f"{r['warm_answer_ms']['p50'] / 1000:.2f} / {r['warm_answer_ms']['p95'] / 1000:.2f} s | "
                     f"{bench['warm_answer_ms']['p50']:.1f} / {bench['warm_answer_ms']['p95']:.1f} ms |")
        lines.append(f"| cold `qa ask` (model load included) | {bench['cold_qa_ask_s']['median']:.2f} s | "
                     f"{bench['cold_qa_ask_span_reader_s']['median']:.2f} s |")
    return "\n".join(lines) if len(lines) > 2 else None


BLOCKS: dict[str, Callable[[Path], str | None]] = {
    "quality": quality, "realtimeqa": realtimeqa, "speed": speed, "reader": reader, "load": load,
    "llm": llm, "cluster": cluster, "reader-lm": reader_lm}


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
