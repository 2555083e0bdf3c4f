"""`python -m eval broad`: the broad question set (eval/broad/questions.jsonl) asked through
``QA.answer`` over each story's articles, scored by the nuggets its answers hold (TREC RAG 2024's
vital and okay nuggets); with ``--peer rag``, the standard recipe a user would build instead, with the
same model and the same scoring, side by side.

    .venv/bin/python -m eval broad                    # the product: about 10 minutes on 2 cores
    .venv/bin/python -m eval broad --peer rag         # and the standard recipe: about 40 more
    .venv/bin/python -m eval broad --story seeds --kinds overview,yesno
    .venv/bin/python -m eval broad --requests          # each asked as a chat request ("OK, why …?")
    .venv/bin/python -m eval broad --more              # each followed by "Tell me more." (eval/broad/more.py)
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import time
from pathlib import Path

from eval.broad import score, stories, where
from eval.broad.peer import Peer
from eval.paths import CACHE, RUNS
from eval.progress import bar
from qa import QA, Answer, Config

QUESTIONS = Path(__file__).with_name("questions.jsonl")
WORK = CACHE / "broad"  # the stories' articles and indexes, quoting the benchmark: git-ignored
# As the benchmark runners answer: the product's own thresholds, only a longer wait for the model.
OVERRIDES = {"read_timeout": 3600.0, "reader": "lm"}
# The set's imperatives ("Summarize …", "List …"), asked with "--requests" as "Could you please …?".
IMPERATIVE = re.compile(r"^(summari[sz]e|list|tell|give|explain|describe|compare|name|outline)\b", re.I)


def load(story: str | None = None, kinds: set[str] | None = None, path: Path = QUESTIONS) -> list[dict]:
    """The broad questions (of another set when given a path), of one story and some kinds when given."""
    rows = [json.loads(line) for line in path.read_text("utf-8").splitlines() if line.strip()]
    return [r for r in rows if (story is None or r["story"] == story) and (not kinds or r["kind"] in kinds)]


def as_request(question: str) -> str:
    """The question as a chat request: an imperative after "Could you please", the rest after "OK, "."""
    if IMPERATIVE.match(question):
        return "Could you please " + question[0].lower() + question[1:].rstrip("?.") + "?"
    return "OK, " + question


def engine_for(story: str) -> QA:
    """The product's engine over a story's articles (materialised once, its index kept)."""
    folder = WORK / story
    seeds = stories.materialise(story, folder)
    engine = QA(Config.from_env(seeds_dir=seeds, index_dir=folder / "index", **OVERRIDES))
    engine.build()
    return engine


Asked = tuple[str, bool, float, str, tuple[str, ...]]


def earlier_turns(engine: QA, q: dict) -> list[tuple[str, Answer]]:
    """The question's earlier turns (a follow-up's), each answered as the chat answers it."""
    history: list[tuple[str, Answer]] = []
    for earlier in q.get("history", []):
        history.append((earlier, engine.answer(earlier, history=list(history))))
    return history


def ask_product(engine: QA, q: dict, history: list[tuple[str, Answer]]) -> Asked:
    """The product's answer after its earlier turns: its text, whether it answered, the seconds it
    took, its kind, the texts it cites."""
    began = time.perf_counter()
    answer = engine.answer(q["question"], history=history or None)
    answered = answers(answer)
    cited = tuple(c.text for c in answer.citations)
    return answer.text, answered, time.perf_counter() - began, answer.kind, cited


def answers(answer: Answer) -> bool:
    """Whether an answer answers: a yes/no saying the articles do not say clearly declines to, and
    counts as a refusal."""
    return answer.answered and answer.verdict != "unclear"


def ask_peer(peer: Peer, q: dict) -> Asked:
    """The standard recipe's answer, in the same terms."""
    began = time.perf_counter()
    text, answered = peer.answer(q["question"], q.get("history", []))
    return text, answered, time.perf_counter() - began, "", ()


def run(questions: list[dict], peer: bool) -> dict:
    """Every question through the product (and the peer), story by story; the records and summaries."""
    records: dict[str, list[dict]] = {"product": [], **({"rag": []} if peer else {})}
    shown = bar(total=len(questions) * (1 + peer), desc="broad questions")
    for story in dict.fromkeys(q["story"] for q in questions):
        engine = engine_for(story)
        engine.answer("warm up")  # the model and the index loaded before anything is timed
        recipe = Peer(engine) if peer else None
        for q in (q for q in questions if q["story"] == story):
            history = earlier_turns(engine, q)
            asked = ask_product(engine, q, history)
            records["product"].append(score.record(q, *asked))
            if asked[1]:  # answered: where its vital nuggets are
                records["product"][-1]["where"] = where.lost(engine, q, asked[0], history)
            shown.update()
            if recipe is not None:
                records["rag"].append(score.record(q, *ask_peer(recipe, q)))
                shown.update()
    shown.close()
    summary = {k: score.summary(v) for k, v in records.items()}
    summary["product"]["where"] = where.tally(records["product"])
    return {"records": records, "summary": summary}


def table(result: dict) -> str:
    """The figures in all and by kind, the product beside the peer."""
    names = list(result["summary"])
    head = "| kind | " + " | ".join(f"{n} vital | {n} all | {n} full" for n in names) + " |"
    lines = [head, "|---|" + "---|" * 3 * len(names)]
    rows = [("all", {n: result["summary"][n] for n in names})]
    kinds = result["summary"]["product"]["by_kind"]
    rows += [(k, {n: result["summary"][n]["by_kind"][k] for n in names}) for k in kinds]
    for kind, figures in rows:
        cells = [f"{f['vital_recall']:.2f} | {f['all_recall']:.2f} | {f['fully_answered']:.2f}"
                 for f in figures.values()]
        lines.append(f"| {kind} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the broad set, print its figures, write them."""
    ap = argparse.ArgumentParser(prog="python -m eval broad", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--peer", choices=["rag"], help="also the standard recipe, with the same model")
    ap.add_argument("--story", help="only this story's questions (seeds, or one of eval/broad/stories.json)")
    ap.add_argument("--kinds", help="only these kinds, comma-separated")
    ap.add_argument("--requests", action="store_true",
                    help='each question asked as a chat request ("Could you please list …?", "OK, why …?")')
    ap.add_argument("--more", action="store_true", help='each question followed by "Tell me more."')
    ap.add_argument("--questions", type=Path, default=QUESTIONS,
                    help="another set of questions (eval/broad/said_heldout.jsonl: what was said, held out)")
    ap.add_argument("--out", type=Path, default=None)
    args = ap.parse_args(argv)
    questions = load(args.story, set(args.kinds.split(",")) if args.kinds else None, args.questions)
    if args.requests:
        questions = [q | {"question": as_request(q["question"])} for q in questions]
    if not questions:
        print("error: no broad question matches: see eval/broad/questions.jsonl", file=sys.stderr)
        return 2
    if args.more:
        return _more(questions, args.out or RUNS / "broad_more.json")
    result = run(questions, args.peer is not None)
    print(table(result))
    for name, s in result["summary"].items():
        print(f"{name}: vital {s['vital_recall']:.3f}, all {s['all_recall']:.3f}, fully answered "
              f"{s['fully_answered']:.3f}, false refusals {s['false_refusals']}/{s['answerable']}, "
              f"unanswerable refused {s['unanswerable_refused']}/{s['unanswerable']}, uncited sentences "
              f"{s['uncited_sentences']}, words p50 {s['words_p50']:.0f}, seconds p50 {s['seconds_p50']:.2f} "
              f"p95 {s['seconds_p95']:.2f}, sentences shown holding no nugget "
              f"{s['sentences_without_nugget']}/{s['sentences_shown']}")
    stages = result["summary"]["product"]["where"]["all"]
    print("the answered questions' vital nuggets: " + ", ".join(f"{n} {s}" for s, n in stages.items()))
    if "rag" in result["summary"]:
        summary = result["summary"]
        ratio = summary["product"]["vital_recall"] / max(1e-9, summary["rag"]["vital_recall"])
        print(f"vital recall, product over the standard recipe: {ratio:.2f}x")
        result["ratio"] = round(ratio, 3)
    _write(result, args.out or RUNS / "broad.json")
    return 0


def _more(questions: list[dict], out: Path) -> int:
    """Each question followed by "Tell me more.": its figures printed and written."""
    from eval.broad import more  # it imports this module

    result = more.run(questions)
    print(more.line(result["summary"]))
    _write(result, out)
    return 0


def _write(result: dict, out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(result, indent=1) + "\n", "utf-8")
    print(f"wrote {out}")
