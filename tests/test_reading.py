"""The reading stage's rules: question kinds, hinge names, candidate trimming, coverage."""

from __future__ import annotations

import pytest

from qa.reading import coverage
from qa.reading.candidates import normalise, sentence_candidates, trim, without_question_words
from qa.reading.question import ask, focus


@pytest.mark.parametrize(("question", "kind"), [
    ("Who tweeted about the decree for the Afghan president?", "person"),
    ("Which agency reported Shaheen's phone remarks?", "org"),
    ("Which organisation does the analyst Kugelman work for?", "org"),
    ("Which country hosted the signing of the deal?", "place"),
    ("Which think tank is Kugelman with?", "org"),
    ("At which prison will the release begin?", "facility"),
    ("In which month was the election held?", "date"),
    ("How many prisoners did Iran free in 2019?", "count"),
    ("How much money did the US pay the Taliban?", "money"),
    ("What percentage of the vote did Ghani win?", "percent"),
    ("How long is the presidential term?", "duration"),
    ("When will the release start?", "date"),
    ("Why did the talks stall?", "reason"),
    ("What did Ghani promise?", "thing"),
    ("What kind of ceasefire would Kabul end?", "thing"),
    # A context sentence holding "who" must not decide the kind: the asking sentence does.
    ("Police arrested 31 men who planned to riot at a Pride event. Where was the event?", "place"),
])
def test_question_kind(question: str, kind: str) -> None:
    assert ask(question).kind == kind


def test_head_noun_and_key() -> None:
    assert ask("Which news agency did the council member talk to?").noun == "agency"
    assert ask("What is the capital of France?").noun == "capital"
    assert ask("What kind of ceasefire would Kabul end?").noun == "ceasefire"
    assert ask("Who won?").key == "who" and ask("Which countries joined?").key == "which:country"


def test_hinges_are_names_and_numbers_not_question_words() -> None:
    assert ask("How many prisoners did Iran free in 2019?").hinges == ("Iran", "2019")
    assert ask("Which agency reported Shaheen's phone remarks?").hinges == ("Shaheen",)
    assert ask("Who is the Afghan president?").hinges == ("Afghan",)


def test_focus_is_the_last_asking_sentence() -> None:
    assert focus("Gas prices hit a record. How much is a gallon?") == "How much is a gallon?"


def test_coverage_matches_forms_of_a_name_and_exact_numbers() -> None:
    asked = ask("How many prisoners did Iran free in 2019?")
    assert coverage.missing(asked, ["Iranian officials freed 1,500 in 2019."]) == []
    assert coverage.missing(asked, ["The Taliban freed 2,000 in 2020."]) == ["Iran", "2019"]
    assert coverage.missing(ask("Who is the Afghan president?"), ["Afghanistan's president"]) == []


def test_trim_drops_openers_edges_and_possessive() -> None:
    text = 'He met "the Wilson Center\'s" analyst.'
    a, b = trim(text, 7, 29)
    assert text[a:b] == "Wilson Center"
    assert normalise("The U.S. puppet regime") == "u s puppet regime"


def test_candidates_keep_entity_labels_and_drop_pronouns() -> None:
    sentence = "Later, he told Reuters by phone."
    offset = 100  # the sentence's start in its article
    spans = ((107, 109, "NP", "nsubj^", 107, 131), (115, 122, "ORG", "dobj^", 107, 131),
             (115, 122, "NP", "dobj^", 107, 131), (126, 131, "NP", "pobj", 123, 131))
    found = sentence_candidates(sentence, offset, spans)
    assert [(c.text, c.label) for c in found] == [("Reuters", "ORG"), ("phone", "NP")]
    assert all(sentence[c.start - offset:c.end - offset] == c.text for c in found)


def test_question_words_are_trimmed_from_noun_chunks_only() -> None:
    sentence = "Speaking with AFP news agency, Michael Kugelman said so."
    terms = ask("Which news agency did Kugelman speak to?").terms
    name, chunk = sentence_candidates(sentence, 0, ((14, 29, "NP", "pobj", 0, 55),
                                                    (31, 47, "PERSON", "nsubj^", 0, 55)))
    assert without_question_words(chunk, sentence, 0, terms).text == "AFP"
    assert without_question_words(name, sentence, 0, terms) is name  # never cut inside a name
