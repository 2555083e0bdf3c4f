"""`python -m eval broad --more`: each broad question asked, then "Tell me more." after it, as a chat
user goes on: the vital nuggets of the first answer and of both together, whether the second goes on
in the first's kind, and how many of its sentences the first already showed."""

from __future__ import annotations

import time

from eval.broad.nuggets import Nugget, holds
from eval.broad.run import answers, earlier_turns, engine_for
from eval.broad.score import mean
from eval.progress import bar
from eval.quality import metrics as m
from qa import QA
from qa.text.normalise import plain

REQUEST = "Tell me more."


def turn(engine: QA, q: dict) -> dict:
    """The question, then "Tell me more." after it: what each shows and what the second adds."""
    history = earlier_turns(engine, q)
    first = engine.answer(q["question"], history=history or None)
    began = time.perf_counter()
    then = engine.answer(REQUEST, history=[*history, (q["question"], first)])
    seconds = time.perf_counter() - began
    shown = {plain(c.text) for c in first.citations} if first.answered else set()
    vital = [Nugget.of(n) for n in q["nuggets"] if n["vital"]]
    texts = [a.text for a in (first, then) if answers(a)]
    return {"id": q["id"], "story": q["story"], "kind": q["kind"], "answerable": q["answerable"],
            "first": answers(first), "more": answers(then), "more_kind": then.kind,
            "same_kind": then.kind == first.kind,
            "notice": then.notice_code, "sentences": len(then.citations) if then.answered else 0,
            "repeated": sum(plain(c.text) in shown for c in then.citations) if then.answered else 0,
            "vital_first": _share([answers(first) and holds(n, first.text) for n in vital]),
            "vital_both": _share([any(holds(n, t) for t in texts) for n in vital]),
            "words": len(then.text.split()) if then.answered else 0, "seconds": round(seconds, 3)}


def _share(held: list[bool]) -> float | None:
    return sum(held) / len(held) if held else None


def run(questions: list[dict]) -> dict:
    """Every question, then "Tell me more.", story by story; the records and their summary."""
    records = []
    shown = bar(total=len(questions), desc="questions and 'Tell me more.'")
    for story in dict.fromkeys(q["story"] for q in questions):
        engine = engine_for(story)
        engine.answer("warm up")
        for q in (q for q in questions if q["story"] == story):
            records.append(turn(engine, q))
            shown.update()
    shown.close()
    return {"records": records, "summary": summary(records)}


def summary(records: list[dict]) -> dict:
    """The figures: vital recall of the answers alone and with what "Tell me more." adds, and how it
    goes on."""
    answered = [r for r in records if r["answerable"] and r["first"]]
    scored = [r for r in records if r["answerable"] and r["vital_first"] is not None]
    went_on = [r for r in answered if r["more"]]
    return {
        "questions": len(records),
        "vital_first": mean([r["vital_first"] for r in scored]),
        "vital_with_more": mean([r["vital_both"] for r in scored]),
        "answered_first": len(answered),
        "more_answered": len(went_on),
        "more_same_kind": sum(r["same_kind"] for r in went_on),
        "more_nothing_new": sum(r["notice"] == "no_more" for r in answered),
        "sentences": sum(r["sentences"] for r in went_on),
        "repeated": sum(r["repeated"] for r in went_on),
        "unanswerable": sum(not r["answerable"] for r in records),
        "unanswerable_more_answered": sum(r["more"] for r in records if not r["answerable"]),
        "words_p50": m.percentile([r["words"] for r in went_on], 50) if went_on else 0,
        "seconds_p50": m.percentile([r["seconds"] for r in records], 50) if records else 0,
    }


def line(s: dict) -> str:
    """The summary in one line."""
    return (f"vital recall {s['vital_first']:.3f}, with 'Tell me more.' {s['vital_with_more']:.3f}; "
            f"'Tell me more.' answered after {s['more_answered']}/{s['answered_first']} answers "
            f"({s['more_same_kind']} in the same kind, {s['more_nothing_new']} said there is nothing more), "
            f"{s['repeated']}/{s['sentences']} sentences shown again; after the "
            f"{s['unanswerable']} unanswerable, answered {s['unanswerable_more_answered']}; "
            f"words p50 {s['words_p50']:.0f}, seconds p50 {s['seconds_p50']:.2f}")
