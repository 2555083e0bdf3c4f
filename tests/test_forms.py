"""A question's kind from its form, however it is asked: the phrasings of eval/broad/phrasings.jsonl
(a dev half the forms were written from, a held-out half written before the fix), requests wrapped in
courtesies ("Could you list the demands?") and the yes/no questions they must not swallow."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from qa.question import analyse

PHRASINGS = Path(__file__).parents[1] / "eval" / "broad" / "phrasings.jsonl"
ROWS = [json.loads(line) for line in PHRASINGS.read_text("utf-8").splitlines() if line.strip()]


@pytest.mark.parametrize("row", ROWS, ids=[f"{r['set']}:{r['question']}" for r in ROWS])
def test_each_phrasing_gets_its_kind(row: dict) -> None:
    assert analyse(row["question"]).kind in row["kinds"]


@pytest.mark.parametrize("question", [
    "Can you still visit the park?", "Could you see the smoke from the city?",
    "Would you need a permit to enter?", "Can we still visit Gardiner?", "Well, did the Taliban accept?",
])
def test_a_yes_no_question_about_you_is_no_request(question: str) -> None:
    assert analyse(question).kind == "yesno"


@pytest.mark.parametrize(("question", "kind", "topic"), [
    ("OK, could you please list the demands for me?", "list", "the demands"),
    ("Could you tell me why the park closed?", "why", "Why the park closed"),
    ("What's going on with the prisoners?", "overview", "the prisoners"),
    ("whats the latest on the talks", "overview", "the talks"),
    ("Can I get a summary of the crash?", "summary", "the crash"),
    # Who is in the story: the story itself, no topic; the victims of the crash: the crash.
    ("Who is involved?", "list", ""), ("Who are the main people in this story?", "list", ""),
    ("Who were the victims of the crash?", "list", "the crash"),
])
def test_a_request_is_asked_by_what_it_wraps(question: str, kind: str, topic: str) -> None:
    asked = analyse(question)
    assert (asked.kind, asked.topic) == (kind, topic)


@pytest.mark.parametrize("question", ["OK, summarize the floods for me", "TL;DR?",
                                      "What should I know about the crash?"])
def test_courtesies_and_shorthand_are_never_names(question: str) -> None:
    # A name the articles lack refuses the question: "OK", "TL", "DR" or "I" would refuse them all.
    assert analyse(question).named == ()


def test_a_factoid_keeps_its_kind_after_an_opening_word() -> None:
    assert analyse("And how many are supposed to be let out each day?").kind == "factoid"
    assert analyse("Now that the water receded, when will the park reopen?").kind == "factoid"
