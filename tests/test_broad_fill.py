"""A broad answer's further sentences (``Answering.broad_fill``): the sentence after a why, how or
what-was-said answer's lead, then the pool's best-scored story sentences on the question's topic, no
copy of one shown, within the answer's words; a comparison's go to the side they name. The real model
and index show it in test_broad_real.py."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from qa.answering.compose import Draft
from qa.answering.layout import Piece
from qa.answering.select import WORDS, more, on_topic, shown
from qa.answering.shapes import Broad, Listing
from qa.answering.sides import Comparison, paired
from qa.config import Answering, Config, ReaderName
from qa.errors import BadInput
from qa.passage import Passage
from qa.question import analyse
from qa.readers.base import Reading
from qa.sentences.gather import Evidence
from qa.sentences.record import Sentence
from qa.text.words import tokenize


def sentence(text: str, sid: int, score: float, axis: int | None = None) -> Sentence:
    """A sentence record with its own stems, a score and a vector of its own (one axis each)."""
    vector = np.zeros(16, dtype=np.float32)
    vector[sid if axis is None else axis] = 1.0
    return Sentence(sid, Passage("a.txt", "A", text, sid * 100, sid * 100 + len(text)),
                    tuple(tokenize(text)), vector=vector, score=score)


QUESTION = analyse("Why did the Taliban reject the offer?")
SHOWN = sentence("The Taliban rejected the Afghan government's offer to free 1,500 prisoners.", 0, 0.9)


def test_the_best_scored_sentences_on_the_topic_follow() -> None:
    pool = [sentence("The Taliban say the Doha deal requires all 5,000 prisoners to be freed first.", 1, 0.6),
            sentence("The Taliban want their own list of prisoners released, a spokesman said.", 2, 0.8),
            sentence("Analyst Michael Kugelman said the dispute was an early glimpse of trouble.", 3, 0.85),
            sentence("Kabul's offer was a gesture of goodwill before talks, the government said.", 4, 0.7)]
    added = more(pool, [SHOWN], 3, QUESTION)
    # Best score first; the analyst's sentence names no Taliban, and the government's names no Taliban.
    assert [s.id for s in added] == [2, 1]


def test_no_furniture_no_copy_and_no_more_than_asked() -> None:
    pool = [sentence("Taliban reject offer", 1, 0.99),  # a headline
            sentence("The Taliban rejected the Afghan government's offer to free 1,500 prisoners.", 2, 0.95,
                     axis=0),  # another article's copy of the shown sentence
            *(sentence(f"The Taliban rejected the offer for reason number {n} of several today.", n, 0.5)
              for n in range(3, 8))]
    assert [s.id for s in more(pool, [SHOWN], 2, QUESTION)] == [3, 4]
    assert more(pool, [SHOWN], 0, QUESTION) == []


@pytest.mark.parametrize("text", [
    "What parts of Yellowstone are damaged?",  # a subhead
    "Can't see our graphics?",
    "(This story was updated because an earlier version included an inaccuracy.)",
    "This story has been updated with new information.",
    "Watch video highlights from Trump's briefing at the top of this story.",
    "Read the full story:'Air capital' mourns after plane crash.",
    "AI-assisted summary Investigators are working to determine if either aircraft was out of place.",
])
def test_a_pages_questions_notes_and_calls_are_never_shown(text: str) -> None:
    assert not shown(sentence(text, 1, 0.9))


@pytest.mark.parametrize("text", [
    '"What was the helicopter doing in that track?" the president asked reporters on Thursday.',
    "“Why would they do that?” he said.",
    "Watchdog groups said the airport's controllers were overworked this winter.",
    "Officials read the full statement to reporters outside the airport on Thursday.",
])
def test_a_quoted_question_and_a_sentence_like_furniture_are_shown(text: str) -> None:
    assert shown(sentence(text, 1, 0.9))


def test_the_answer_stays_within_its_words() -> None:
    long = " ".join(["The Taliban rejected the offer"] * (WORDS // 5)) + "."
    assert more([sentence(long, 1, 0.9)], [SHOWN], 3, QUESTION) == []


def test_a_sentence_too_long_for_what_is_left_is_passed_over_for_a_shorter_one() -> None:
    long = " ".join(["The Taliban rejected the offer"] * (WORDS // 5)) + "."
    short = "The Taliban want their own list of prisoners released, a spokesman said."
    pool = [sentence(long, 1, 0.9), sentence(short, 2, 0.5)]
    assert [s.id for s in more(pool, [SHOWN], 3, QUESTION)] == [2]


def test_an_overview_passes_over_a_long_sentence_for_shorter_ones_within_its_words() -> None:
    """The most relevant sentences, unlike each other, as many as the answer's words hold."""
    long = " ".join(["The Taliban rejected the offer"] * (WORDS // 5)) + "."
    pool = [sentence("The Taliban rejected the offer of 1,500 prisoners on Wednesday.", 1, 0.9),
            sentence(long, 2, 0.8),
            sentence("The Taliban want all 5,000 prisoners freed before any talks begin.", 3, 0.7)]
    draft = Draft(analyse("Summarize the Taliban's reaction"), Evidence((), (), (), tuple(pool)))
    chosen = Broad(Answering()).choose(draft, pool)
    assert [s.id for s in chosen] == [1, 3]
    assert sum(len(s.text.split()) for s in chosen) <= WORDS


def test_a_list_of_places_is_made_of_sentences_that_name_places() -> None:
    """"Which towns were hit?": the best-scored sentences naming no place are not its items."""
    unnamed = [sentence(f"The flooding hit hard on day {n}, washing out roads and bridges.", n, 0.9)
               for n in range(1, 6)]
    named = [sentence("Gardiner was cut off by the water on Monday.", 6, 0.5),
             sentence("Residents of Red Lodge shovelled mud from homes.", 7, 0.5)]
    named = [replace(s, tags=((s.start + at, s.start + at + len(name), "GPE", "", 0, 0),))
             for s, name, at in zip(named, ("Gardiner", "Red Lodge"), (0, 12), strict=True)]
    draft = Draft(analyse("Which towns were hit?"), Evidence((), (), (), tuple(unnamed + named)))
    pieces, _ = Listing(Answering()).pieces(draft, Reading.empty(ReaderName.SPANS))
    assert sorted(s.id for p in pieces for s in p.sentences) == [6, 7]
    assert all(p.item for p in pieces)


def test_the_sentence_after_the_lead_comes_first_even_naming_nothing() -> None:
    """A quotation or a reason often goes on in the next sentence, which names no one again."""
    after = sentence("They say the deal requires all 5,000 prisoners to be freed before talks.", 5, 0.1)
    pool = [sentence("The Taliban want their own list of prisoners released, a spokesman said.", 2, 0.8)]
    assert [s.id for s in more(pool, [SHOWN], 2, QUESTION, first=[after])] == [5, 2]
    assert [s.id for s in more(pool, [SHOWN], 1, QUESTION, first=[after])] == [5]
    copy = sentence(SHOWN.text, 6, 0.1, axis=0)
    assert [s.id for s in more(pool, [SHOWN], 2, QUESTION, first=[copy])] == [2]


def test_a_question_naming_nothing_takes_sentences_sharing_its_words() -> None:
    question = analyse("How will the prisoners be released?")
    assert on_topic(sentence("Another 3,500 prisoners are to be released after talks.", 1, 0.5), question)
    assert not on_topic(sentence("The US began pulling troops out of two bases.", 2, 0.5), question)


def test_a_he_resolved_to_no_name_takes_nothing_from_the_pool() -> None:
    """"What did he tweet?" with no name found for "he": the pool's best tweet may be another man's."""
    tweet = sentence("Presidential spokesman Sediq Seddiqi said in a tweet that Ghani signed it.", 1, 0.9)
    assert not on_topic(tweet, analyse("What did he tweet?"))
    assert on_topic(tweet, analyse("What did Seddiqi tweet?"))


def test_a_comparisons_further_sentences_go_to_the_side_they_name() -> None:
    ghani = sentence("Ghani was sworn in as president for a second term on Monday.", 1, 0.9)
    abdullah = sentence("Abdullah held his own swearing-in ceremony in the same palace.", 2, 0.9)
    pieces = [Piece((ghani,), label="Ghani"), Piece((abdullah,), label="Abdullah")]
    extra = [sentence("Abdullah called the decree invalid and claimed the election was fraudulent.", 3, 0.5),
             sentence("The United States said it opposed a parallel government in Kabul.", 4, 0.5)]
    out = Comparison(Answering()).with_more(pieces, extra)
    assert [(p.label, [s.id for s in p.sentences]) for p in out] == [
        ("Ghani", [1]), ("Abdullah", [2, 3]), (None, [4])]


def test_a_negative_fill_is_one_clear_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QA_BROAD_FILL", "-1")
    with pytest.raises(BadInput, match="QA_BROAD_FILL=-1 must be at least 0"):
        Config.from_env()


@pytest.mark.parametrize(("question", "sides"), [
    ("How do the plane and the helicopter compare?", ["plane", "helicopter"]),
    ("How did the damage differ between the north and south of the park?", ["north", "south"]),
    ("How do the government's and the insurgents' demands compare?", ["government", "insurgents"]),
    ("How did the two aircraft differ?", []),
    ("How do Trump's claims compare with what investigators have said?", []),
])
def test_a_comparison_sets_side_by_side_what_its_words_do(question: str, sides: list[str]) -> None:
    assert paired(question) == sides
