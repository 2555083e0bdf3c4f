"""Short answers: the kind of span a question wants, and the span several sentences agree on."""

from __future__ import annotations

import pytest

from qa.consensus import pick_short
from qa.places import is_place, place_kind
from qa.short import answer_type, focus, short_answer


@pytest.mark.parametrize(("question", "kind"), [
    # A context sentence holding "who" must not decide the type: the asking sentence does.
    ("Police arrested 31 men who planned to riot at a Pride event. Where was the event?", "place"),
    ("The Fed raised rates by three-quarters of a point. This was the highest hike since:", "date"),
    ("According to the White House, how soon could vaccines be available?", "date"),
    ("How many prisoners were freed?", "number"),
    ("Which head of state announced his resignation this week?", "person"),
    ("What is the name of the cottage the couple will move to?", "name"),
    ("Why did the talks stall?", "other"),
])
def test_answer_type_reads_the_asking_sentence(question: str, kind: str) -> None:
    assert answer_type(question) == kind


def test_focus_is_the_last_asking_sentence() -> None:
    assert focus("Gas prices hit a record. How much is a gallon?") == "How much is a gallon?"


def test_number_kind_must_fit_the_question() -> None:
    # A percentage question takes only a percentage; a bare year is no count.
    assert short_answer("What percentage of people avoid the news?",
                        "In 2022, 38% of people said they avoid the news, up from 29 in 2017.") == "38%"
    assert short_answer("How many people avoid the news?", "In 2017 some 120 left.") == "some 120"


def test_places() -> None:
    assert place_kind("Which country elected a leftist leader?") == "country"
    assert place_kind("Flooding hit which US state?") == "state"
    assert is_place("Colombia", "country") and is_place("the Netherlands")
    assert not is_place("Colombia", "state") and not is_place("Bogotá")


def test_place_question_keeps_only_names_of_that_kind() -> None:
    sentences = [("Gustavo Petro of Colombia won, Reuters said.", 1.0, "a.txt")]
    assert pick_short("Which country elected a leftist leader?", sentences) == ("Colombia", 0)


def test_agreement_across_articles_beats_one_closer_sentence() -> None:
    question = "Which automaker recalled 2.9 million vehicles?"
    sentences = [
        ("Toyota, analysts said, recalled 2.9 million vehicles.", 1.00, "a.txt"),
        ("Ford recalled 2.9 million vehicles on Tuesday.", 0.97, "b.txt"),
        ("The recall by Ford covers 2.9 million vehicles.", 0.96, "c.txt"),
        ("Ford said the recalled vehicles can be repaired.", 0.95, "d.txt"),
    ]
    short, where = pick_short(question, sentences) or ("", -1)
    assert short == "Ford" and where == 1  # the sentence that states it best is cited first


def test_boilerplate_and_sentence_openers_are_no_answer() -> None:
    sentences = [("Meanwhile AP reported that Daily Harvest recalled its crumbles.", 1.0, "a.txt"),
                 ("meanwhile, the crumbles were recalled.", 0.9, "b.txt")]
    assert pick_short("Which company recalled its lentil crumbles?", sentences) == ("Daily Harvest", 0)


def test_no_short_answer_for_why_questions() -> None:
    assert pick_short("Why did Ford recall the vehicles?", [("Ford recalled them.", 1.0, "a")]) is None


def test_relative_who_does_not_type_a_how_many_question() -> None:
    assert answer_type("The leader who abolished the office was sworn in for how many years?") == "number"
    assert answer_type("Which player who won the cup retired?") == "person"


def test_names_lose_possessors_openers_and_company_suffixes() -> None:
    question = "Which national park did the fire threaten?"
    sentences = [("Since Tuesday the fire has threatened California's Yosemite National Park.", 1.0, "a")]
    assert pick_short(question, sentences) == ("Yosemite National Park", 0)
    sentences = [("Ford Motor Co. recalled 2.9 million vehicles.", 1.0, "a")]
    assert pick_short("Which automaker recalled 2.9 million vehicles?", sentences) == ("Ford Motor", 0)


def test_nationality_answers_which_nation() -> None:
    sentences = [("The former Japanese prime minister was shot at a campaign event.", 1.0, "a")]
    question = "The former leader of which nation was shot at a campaign event?"
    assert pick_short(question, sentences) == ("Japan", 0)


def test_person_votes_merge_surnames_and_discount_lone_words() -> None:
    question = "Who is the Afghan president who signed the prisoner decree?"
    sentences = [("The Afghan Taliban welcomed the decree signed by President Ashraf Ghani.", 1.0, "a"),
                 ("Ghani signed the decree on Tuesday, freeing Taliban prisoners.", 0.98, "b"),
                 ("Taliban leaders called the prisoner decree a first step.", 0.97, "c")]
    assert pick_short(question, sentences) == ("Ashraf Ghani", 0)
