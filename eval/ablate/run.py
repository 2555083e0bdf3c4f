"""`python -m eval ablate`: every hand-written rule of the reading and answering path (qa/rules.toml)
turned off in turn, each answered through ``QA.answer`` on the hand-written set (where most rules
were written: the dev set) and on RealTime QA 2025's first questions (which no rule was written
from: the confirm set), with the model's replies replayed (eval/ablate/replay.py), so that only the
requests a rule changes are read again.

    .venv/bin/python -m eval ablate                     # every rule; about 40 minutes the first time
    .venv/bin/python -m eval ablate --rules question.first_word,coverage.names
    .venv/bin/python -m eval ablate --list              # the rules, their stage and origin
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

from eval.ablate import sets
from eval.ablate.replay import ReplayRuntime
from eval.paths import CACHE, RUNS
from eval.progress import bar, clock
from qa import rules
from qa.config import Config

REPLIES = CACHE / "ablate" / "replies.jsonl"  # the model's replies, quoting the benchmark: git-ignored


def listing() -> str:
    """The rules, one line each: name, stage, what it does, where it came from."""
    return "\n".join(f"{r.name:34} {r.stage:10} {r.does} [{r.origin}]" for r in rules.registry().values())


def measure(chosen: list[sets.QuestionSet], off: tuple[str, ...]) -> dict[str, dict[str, float]]:
    """Each set's figures with these rules turned off."""
    with rules.off(*off):
        return {s.name: s.figures() for s in chosen}


def ablate(chosen: list[sets.QuestionSet], names: list[str]) -> dict:
    """The baseline's figures, and each rule's with it turned off, with the change."""
    began = time.monotonic()
    baseline = measure(chosen, ())
    out: dict = {"baseline": baseline, "rules": {}}
    for rule in bar(names, desc="rules off in turn", unit="rule", every=1.0):
        figures = measure(chosen, (rule,))
        about = rules.registry()[rule]
        out["rules"][rule] = {"stage": about.stage, "origin": about.origin, "off": figures,
                              "change": {s: {k: round(v - baseline[s][k], 4) for k, v in f.items()}
                                         for s, f in figures.items()}}
    out["seconds"] = round(time.monotonic() - began, 1)
    return out


def table(result: dict) -> str:
    """The change each rule makes when turned off, as a Markdown table (negative: the rule helps);
    a rule no longer in the registry was removed."""
    head = ("| rule | hand-written EM | containment | citation precision | false refusals | refusal recall "
            "| 2025 EM | 2025 F1 | kept |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|"]
    for name, r in result["rules"].items():
        hw, rt = r["change"].get("handwritten", {}), r["change"].get("2025", {})
        cells = [hw.get("em"), hw.get("contains"), hw.get("citation_precision"), hw.get("false_refusal_rate"),
                 hw.get("refusal_recall"), rt.get("em"), rt.get("f1")]
        kept = "kept" if name in rules.registry() else "removed"
        lines.append(f"| `{name}` | " + " | ".join("" if c is None else f"{c:+.3f}" for c in cells)
                     + f" | {kept} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    """Run the ablation, print its table, write its figures."""
    ap = argparse.ArgumentParser(prog="python -m eval ablate", description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--list", action="store_true", help="list the rules and stop")
    ap.add_argument("--rules", help="comma-separated rules to turn off in turn (default: every rule)")
    ap.add_argument("--sets", default="handwritten,2025", help="handwritten, 2025 or both")
    ap.add_argument("--limit", type=int, default=100, help="RealTime QA 2025: the first N questions")
    ap.add_argument("--replies", type=Path, default=REPLIES, help="the recorded replies of the model")
    ap.add_argument("--out", type=Path, default=RUNS / "ablation.json")
    args = ap.parse_args(argv)
    if args.list:
        print(listing())
        return 0
    names = [n.strip() for n in (args.rules or ",".join(rules.registry())).split(",") if n.strip()]
    if unknown := [n for n in names if n not in rules.registry()]:
        print(f"error: no rule {unknown[0]!r}: `python -m eval ablate --list` lists them", file=sys.stderr)
        return 2
    replay = ReplayRuntime(lambda: _real_runtime(), args.replies)
    chosen = sets.chosen(args.sets.split(","), args.limit, replay)
    result = ablate(chosen, names)
    result["replies"] = {"replayed": replay.hits, "read": replay.misses}
    print(table(result))
    print(f"{len(names)} rules in {clock(result['seconds'])}; the model read {replay.misses} requests, "
          f"{replay.hits} were replayed", file=sys.stderr)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=1) + "\n", "utf-8")
    return 0


def _real_runtime():  # qa.llm.base.Runtime
    from qa.llm.runtimes import configured_runtime
    from qa.readers.lm.prompt import default_prompt

    return configured_runtime(Config.from_env(), default_prompt().warm_messages())
