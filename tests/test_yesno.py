"""A yes/no answer's verdict stands on sentences about what was asked (answering.verdict_on_topic):
the model's yes or no, read from sentences that do not between them name what the question names, becomes
"the articles do not say clearly". The real model shows it in test_broad_real.py."""

from __future__ import annotations

import numpy as np

from qa.answering.compose import Draft
from qa.answering.select import covers
from qa.answering.shapes import YesNo
from qa.config import Answering, ReaderName
from qa.passage import Passage
from qa.question import analyse
from qa.readers.base import Reading
from qa.sentences.gather import Evidence
from qa.sentences.record import Sentence
from qa.text.words import tokenize

MONTANA = "Montana Gov. Greg Gianforte declared a statewide disaster on Tuesday."
PARK = "The park, which stretches across Wyoming, Montana and Idaho, closed in 2020."


def sentence(text: str, sid: int) -> Sentence:
    """A sentence record with its own stems and a vector of its own."""
    vector = np.zeros(8, dtype=np.float32)
    vector[sid] = 1.0
    return Sentence(sid, Passage("a.txt", "A", text, sid * 100, sid * 100 + len(text)), tuple(tokenize(text)),
                    vector=vector, score=0.5)


def verdict(question: str, said: str, *texts: str) -> str | None:
    """The verdict a yes/no answer leads with when the model said ``said`` reading these sentences."""
    read = tuple(sentence(t, n) for n, t in enumerate(texts))
    draft = Draft(analyse(question), Evidence((), (), read, read))
    reading = Reading((), 0.2, ReaderName.LM, given=read, verdict=said)
    return YesNo(Answering()).compose(draft, reading).verdict


def test_a_sentence_about_another_name_or_another_matter_is_not_what_a_verdict_stands_on() -> None:
    question = analyse("Did Idaho's governor declare a disaster?")
    assert not covers([sentence(MONTANA, 0)], question)  # another state's governor
    assert not covers([sentence(PARK, 1)], question)  # Idaho, but no disaster declared
    # Idaho named in one, a disaster declared in the other: neither says Idaho's governor declared one.
    assert not covers([sentence(MONTANA, 0), sentence(PARK, 1)], question)
    assert covers([sentence(MONTANA, 0)], analyse("Did Montana's governor declare a disaster?"))


def test_the_names_asked_about_may_be_named_in_different_sentences_read() -> None:
    question = analyse("Did the US envoy Zalmay Khalilzad react positively to Ghani's decree?")
    welcomed = sentence("US negotiator Zalmay Khalilzad welcomed the decree on Wednesday.", 0)
    signed = sentence("President Ashraf Ghani signed a decree on Tuesday night.", 1)
    assert covers([welcomed, signed], question)
    assert not covers([welcomed], question)  # Ghani named in none


def test_a_yes_read_from_sentences_about_something_else_does_not_say_clearly() -> None:
    assert verdict("Did Idaho's governor declare a disaster?", "yes", MONTANA, PARK) == "unclear"
    assert verdict("Did Montana's governor declare a disaster?", "yes", MONTANA, PARK) == "yes"
    assert verdict("Did Montana's governor declare a disaster?", "no", PARK, MONTANA) == "no"
    assert verdict("Did Idaho's governor declare a disaster?", "unclear", MONTANA) == "unclear"
