"""The language-model reader with the real model over the real seed articles (few and short)."""

from __future__ import annotations

import pytest
from reading import no_fallback, read_by_model

from qa import QA

pytestmark = pytest.mark.slow


def _short_is_exact(engine: QA, answer) -> None:
    span = answer.short_span
    assert span is not None and span.text == answer.short
    assert engine.index.articles[span.source].text[span.start:span.end] == span.text
    lead = answer.citations[0]
    assert lead.source == span.source and lead.start <= span.start < span.end <= lead.end


def test_an_unsure_reading_cites_its_sentence_and_hides_the_phrase(real_qa: QA) -> None:
    """The model reads what the Taliban gave the government, "a list of captives", but puts little
    probability on its words (a confidence of about 0.01): the phrase is found word for word, under
    the threshold, and only its sentence is shown."""
    answer = real_qa.answer("What did the anonymous Taliban leadership council member say the group had "
                            "given the government?")
    trace = answer.trace
    read_by_model(answer)
    assert trace.phrase is not None and "list of captives" in trace.phrase
    assert trace.confidence < real_qa.config.reading.reader_min_short
    assert any(trace.phrase in p.text for p in trace.given)
    assert answer.answered and answer.short is None
    assert "list of captives" in answer.citations[0].text


SPELLINGS = ("Sediq Seddiqi", "Sediq Sediqqi")


def test_a_verified_phrase_is_shown_though_the_model_doubts_it(real_qa: QA) -> None:
    """The model puts under half its probability on the spokesman's name (the articles spell it
    two ways, and Ashraf Ghani is named too), a confidence of about 0.34: found word for word in a
    sentence it read, the phrase is shown (QA_READER_MIN_SHORT, fitted on RealTime QA 2022)."""
    answer = real_qa.answer("Who tweeted about the decree for the Afghan president?")
    read_by_model(answer)
    assert answer.short in SPELLINGS and answer.notice is None
    assert answer.confidence < 0.5
    _short_is_exact(real_qa, answer)


@pytest.mark.parametrize(("question", "expected"), [
    ("Which agency reported Shaheen's phone remarks?", "Reuters"),
    ("Who is the Taliban's spokesman in Doha?", "Suhail Shaheen"),
])
def test_the_model_reads_the_short_answer(real_qa: QA, question: str, expected: str) -> None:
    answer = real_qa.answer(question)
    read_by_model(answer)
    assert answer.answered and answer.model
    assert answer.short is not None and expected in answer.short
    _short_is_exact(real_qa, answer)
    assert answer.timings["read_ms"] > 0


@pytest.mark.parametrize(("question", "expected"), [
    # With its excerpts headed by their date, the model answered "11 Mar 2020", which no sentence says.
    ("On which day did the American troop drawdown get under way?", "Monday"),
    # The model writes "2"; the article, "just two days after the signing".
    ("How many days after the deal was signed did the Taliban tell fighters to resume operations?", "two"),
])
def test_a_day_or_a_small_number_is_shown_as_the_article_writes_it(real_qa: QA, question: str,
                                                                      expected: str) -> None:
    answer = real_qa.answer(question)
    read_by_model(answer)
    assert answer.short == expected
    _short_is_exact(real_qa, answer)


@pytest.mark.parametrize(("question", "expected"), [
    # With its excerpts numbered [1], [2], [3], the model answered "3" and "1": an excerpt's number.
    ("How many official sources said at least 1,000 prisoners would go free this week?", "five"),
    ("On what day was Ghani sworn in for his new term?", "Monday"),
])
def test_the_answer_is_the_sentences_not_an_excerpts_number(real_qa: QA, question: str,
                                                            expected: str) -> None:
    answer = real_qa.answer(question)
    read_by_model(answer)
    assert answer.trace.phrase == expected, answer.trace.unverified


@pytest.mark.parametrize("question", ["How many prisoners did Iran free in 2019?",
                                      "How many Taliban fighters were killed in Helmand?"])
def test_what_the_articles_dont_say_is_not_covered(real_qa: QA, question: str) -> None:
    answer = real_qa.answer(question)
    no_fallback(answer)
    assert not answer.answered and answer.short is None and answer.citations == ()


def test_a_follow_up_is_read_about_the_earlier_answer(real_qa: QA) -> None:
    first = real_qa.answer("Who is the Taliban's spokesman in Doha?")
    follow = real_qa.answer("Which agency did he speak to?", history=[(first.question, first)])
    read_by_model(first)
    read_by_model(follow)
    assert follow.answered and follow.short in {"Reuters", "AFP"}
    assert "Shaheen" in follow.citations[0].text
    _short_is_exact(real_qa, follow)


def test_a_third_turn_still_knows_who_he_is(real_qa: QA) -> None:
    """The issue's dialogue: the second answer names no one, yet "he" is still Suhail Shaheen, and
    the agency he spoke to about the conditional release is Reuters."""
    history: list = []
    for question in ("Who is the spokesman for the Taliban in Doha?",
                     "What did he say about the conditional release?", "Which agency did he speak to?"):
        answer = real_qa.answer(question, history=list(history))
        history.append((question, answer))
    third = history[-1][1]
    assert third.query == "Which agency did Suhail Shaheen speak to?"
    for _, answer in history:
        read_by_model(answer)
    assert third.short == "Reuters"
    _short_is_exact(real_qa, third)


def test_a_why_question_cites_the_reason(real_qa: QA) -> None:
    """Why the Taliban rejected Kabul's offer is in the articles: all 5,000 prisoners first, before
    talks. The answer cites a sentence that says so, beside the one that restates the rejection,
    and no two citations are the same sentence."""
    answer = real_qa.answer("Why did the Taliban reject the Afghan government's offer?")
    read_by_model(answer)
    assert answer.answered and answer.short is None
    texts = [c.text for c in answer.citations]
    assert any("5,000" in t and ("before" in t or "accord" in t) for t in texts), texts
    assert len(set(texts)) == len(texts)
