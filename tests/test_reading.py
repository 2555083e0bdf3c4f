"""The reading stage's rules: question kinds, hinge names, candidate trimming, coverage."""

from __future__ import annotations

import pytest

from qa.answering import coverage
from qa.passage import Passage
from qa.question import analyse as ask
from qa.question.asking import focus
from qa.readers.spans.candidates import sentence_candidates, trim, without_question_words
from qa.sentences.record import Sentence
from qa.text.normalise import key as normalise


@pytest.mark.parametrize(("question", "kind"), [
    ("Who tweeted about the decree for the Afghan president?", "person"),
    ("Which agency reported Shaheen's phone remarks?", "org"),
    ("Which organisation does the analyst Kugelman work for?", "org"),
    ("Which country hosted the signing of the deal?", "place"),
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
    assert ask(question).expects == kind


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


def test_a_year_or_month_named_is_covered_by_an_articles_date() -> None:
    # Reports seldom write their own year: the article's date covers it, and only its own.
    text = ["Floodwaters tore through Gardiner on Monday."]
    asked = ask("What happened at Yellowstone in June 2022?")
    assert coverage.missing(asked, text, ["2022-06-14"]) == ["Yellowstone"]
    assert coverage.missing(asked, text + ["Yellowstone closed."], ["2022-06-14", None]) == []
    assert coverage.missing(asked, text, ["2021-06-14"]) == ["Yellowstone", "2022"]
    assert coverage.missing(asked, text, ["2022-07-01"]) == ["Yellowstone", "June"]
    assert coverage.missing(asked, text, ["not a date"]) == ["Yellowstone", "June", "2022"]


def test_coverage_reads_initials_with_or_without_dots_and_the_countrys_name() -> None:
    # News writes "U.S." where a question writes "US": that is one name, mentioned.
    assert ask("Which U.S. state sued Meta?").named == ("US", "Meta")
    for text in ("The U.S. Justice Department sued.", "The United States sued.", "American states sued."):
        assert coverage.missing(ask("Which US state sued?"), [text]) == []
    assert coverage.missing(ask("Which U.S. state sued?"), ["The US said so."]) == []
    assert coverage.missing(ask("What did the UN say?"), ["The union said so."]) == ["UN"]
    assert coverage.missing(ask("Which American chain closed?"), ["A U.S. chain closed."]) == []
    assert coverage.missing(ask("Which American chain closed?"), ["A useful chain closed."]) == ["American"]


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


def test_question_words_are_trimmed_from_span_edges_never_inside_a_name() -> None:
    sentence = "Speaking with AFP news agency, Michael Kugelman said so."
    terms = ask("Which news agency did Kugelman speak to?").terms
    name, chunk = sentence_candidates(sentence, 0, ((14, 29, "NP", "pobj", 0, 55),
                                                    (31, 47, "PERSON", "nsubj^", 0, 55)))
    assert without_question_words(chunk, sentence, 0, terms).text == "AFP"
    assert without_question_words(name, sentence, 0, terms) is name  # never cut inside a name
    # The tagger often takes the common noun into an entity: "AFP news agency" is an ORG.
    (entity,) = sentence_candidates(sentence, 0, ((14, 29, "ORG", "pobj", 0, 55),))
    assert without_question_words(entity, sentence, 0, terms).text == "AFP"


@pytest.mark.parametrize(("question", "kind", "key"), [
    # "what did X say": X is the subject, not what is asked for.
    ("What did the presidential spokesman suggest Kabul might do?", "thing", "what"),
    ("What's its next big space venture?", "thing", "which:venture"),
    # A relative "when" inside the question does not ask; "how many" does.
    ("From how many bases had US forces begun withdrawing when the decree was issued?", "count",
     "how many"),
    ("The crew met what sea creature when swimming?", "place", "which:sea"),
    # A follow-up resolved with the earlier turn in brackets is asked by its own words.
    ("On what day? (Where is the staggered release of prisoners set to begin)", "date", "which:day"),
    ("How did Shaheen get in touch with Reuters?", "manner", "how"),
])
def test_the_asking_words_decide_the_kind(question: str, kind: str, key: str) -> None:
    asked = ask(question)
    assert (asked.expects, asked.key) == (kind, key)


def test_subject_questions_name_their_verb() -> None:
    assert ask("Who tweeted about the decree for the Afghan president?").verb == "tweet"
    assert ask("Which agency reported Shaheen's phone remarks?").verb == "report"
    assert ask("Who is the Afghan president?").verb is None
    assert ask("What did he say?").verb is None


def test_manner_and_reason_questions_get_no_span() -> None:
    from qa.readers.spans.reader import SpanReader as Reader

    text = "Shaheen called Reuters on Tuesday."
    sentence = Sentence(0, Passage("a.txt", "A", text, 0, len(text)), tuple(w.lower() for w in text.split()),
                        ((0, 7, "PERSON", "nsubj^", 0, 34), (15, 22, "ORG", "dobj^", 0, 34)), score=1.0)
    reader = Reader()
    assert reader.read(ask("Whom did Shaheen call on Tuesday?"), [sentence]).spans  # a factoid: a span
    assert reader.read(ask("How did Shaheen get in touch with Reuters?"), [sentence]).spans == ()
    assert reader.read(ask("Why did the talks stall?"), [sentence]).spans == ()


def _texts(sentence: str, spans: tuple) -> list[str]:
    return [c.text for c in sentence_candidates(sentence, 0, spans)]


def test_names_lose_lower_case_words_the_tagger_took_in() -> None:
    sentence = "The Taliban must bar al-Qaeda from their areas, said de Gaulle."
    spans = ((17, 29, "ORG", "dobj", 0, 63), (53, 62, "PERSON", "nsubj", 0, 63))
    assert _texts(sentence, spans) == ["al-Qaeda", "de Gaulle"]


def test_numbers_give_each_end_of_a_range_and_the_bare_amount() -> None:
    sentence = "Troops fall from about 12,000 to 8,600, and up to $3.4 billion dollars."
    spans = ((17, 38, "CARDINAL", "pobj", 0, 71), (44, 70, "MONEY", "pobj", 0, 71))
    assert _texts(sentence, spans) == ["about 12,000 to 8,600", "about 12,000", "8,600", "12,000",
                                       "up to $3.4 billion dollars", "$3.4 billion"]


def test_names_joined_by_and_or_commas_are_also_one_candidate() -> None:
    sentence = "The US, Japan and India met in Beirut, Lebanon."
    words = ["US", "Japan", "India", "Beirut", "Lebanon"]
    spans = tuple((sentence.index(w), sentence.index(w) + len(w), "GPE", "pobj", 0, 47) for w in words)
    found = _texts(sentence, spans)
    assert "US" in found  # a name, though "us" is a pronoun
    assert found[-2:] == ["US, Japan and India", "Beirut, Lebanon"]


def test_a_leading_lower_case_modifier_is_optional() -> None:
    assert _texts("They offer free Covid-19 tests.", ((11, 30, "NP", "dobj", 0, 31),)) == [
        "free Covid-19 tests", "Covid-19 tests"]


def test_confidence_grows_with_the_lead_over_the_runner_up() -> None:
    from qa.readers.base import Candidate
    from qa.readers.spans.ranker import SpanCalibration, reading_of

    def found(*keys: str) -> list:
        return [(0, Candidate(0, 1, "PERSON", "", (0, 1), k, k, frozenset(), True)) for k in keys]

    import numpy as np

    calibration = SpanCalibration(2.7, 3.3, -2.2)
    alone = reading_of(found("a", "b"), np.array([0.7, 0.1]), calibration)
    close = reading_of(found("a", "b"), np.array([0.7, 0.65]), calibration)
    assert alone.best.p == close.best.p == 0.7
    assert alone.best.confidence > 0.5 > close.best.confidence
    # A span repeated in several sentences counts once; the others trail the best.
    repeated = reading_of(found("a", "a", "b"), np.array([0.7, 0.69, 0.1]), calibration)
    assert [s.candidate.key for s in repeated.spans] == ["a", "b"]
    assert repeated.best.confidence == alone.best.confidence
    assert repeated.spans[1].confidence < repeated.best.confidence
