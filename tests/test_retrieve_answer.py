"""Retrieval and answers over the tiny articles with the fake embedder."""

from __future__ import annotations

import re

import pytest

import qa
from qa import QA
from qa.answering.compose import NOT_IN_ENGLISH


def _check_exact(engine: QA, passage) -> None:
    article = engine.index.articles[passage.source]
    assert article.text[passage.start : passage.end] == passage.text
    assert article.title == passage.title


@pytest.mark.parametrize("mode", ["hybrid", "dense", "bm25"])
def test_passages_are_exact_unique_and_disjoint(fake_qa: QA, mode: str) -> None:
    passages = fake_qa.retrieve("How many cars cross the harbour bridge?", k=5, mode=mode)
    assert passages and passages[0].source == "alpha.txt"
    for i, p in enumerate(passages):
        _check_exact(fake_qa, p)
        assert not any(p.overlaps(q) for q in passages[i + 1 :])
    assert [p.score for p in passages] == sorted((p.score for p in passages), reverse=True)


def test_bad_questions(fake_qa: QA) -> None:
    for bad in ["", "   \n\t"]:
        with pytest.raises(ValueError, match="empty"):
            fake_qa.answer(bad)
    with pytest.raises(ValueError, match="mode"):
        fake_qa.retrieve("bridge", mode="fuzzy")  # type: ignore[arg-type]
    for odd in ["🙂🙂🙂", "мост открывается?", "橋はいつ開きますか", "x" * 20_000, "bridge\x00\x07?"]:
        answer = fake_qa.answer(odd)
        # Either a refusal with nothing cited, or sentences whose every marker is an exact citation.
        if answer.answered:
            assert answer.citations and answer.text != qa.NOT_COVERED
            markers = {int(m) for m in re.findall(r"\[(\d+)\]", answer.text)}
            assert markers == set(range(1, len(answer.citations) + 1))
            for citation in answer.citations:
                _check_exact(fake_qa, citation)
        else:  # a question in another language is refused as such
            assert answer.text in (qa.NOT_COVERED, NOT_IN_ENGLISH) and answer.citations == ()
    # Control characters become spaces, and the question is still about the bridge.
    cleaned = fake_qa.answer("bridge\x00\x07?")
    assert cleaned.question == cleaned.query == "bridge  ?" and cleaned.answered
    assert cleaned.citations[0].source == "alpha.txt"
    cut = fake_qa.answer("x" * 20_000)
    assert cut.question == "x" * fake_qa.config.retrieval.max_question_chars and not cut.answered


def test_answer_markers_map_to_exact_citations(fake_qa: QA) -> None:
    answer = fake_qa.answer("How many cars cross the bridge every day?")
    assert answer.answered and "40,000" in answer.text
    assert answer.short and "40,000" in answer.short
    markers = {int(m) for m in re.findall(r"\[(\d+)\]", answer.text)}
    assert markers == set(range(1, len(answer.citations) + 1))
    for citation in answer.citations:
        _check_exact(fake_qa, citation)
    assert answer.citations[0].text.startswith("About 40,000 cars")


def test_off_topic_question_is_declined_with_closest_passages(fake_qa: QA) -> None:
    answer = fake_qa.answer("What is the price of tea in Kenya?")
    assert not answer.answered and "don't cover" in answer.text
    assert answer.citations == () and answer.passages


def test_follow_up_uses_the_previous_turn(fake_qa: QA) -> None:
    first = fake_qa.answer("Who said the library would hold 80,000 books?")
    assert first.answered and first.short == "Jane Porter"
    follow = fake_qa.answer("What will she build?", history=[("Who said ...", first)])
    alone = fake_qa.answer("What will she build?")
    assert "Jane Porter" in follow.query and alone.query == "What will she build?"
    # "she" is the mayor the last answer named: her sentence is cited, not the council's vote.
    assert follow.citations[0].text == "Mayor Jane Porter said the library would hold 80,000 books."
    assert "Jane Porter" not in alone.citations[0].text


def test_follow_up_answer_comes_from_the_earlier_turn(fake_qa: QA) -> None:
    first = fake_qa.answer("How many cars cross the bridge every day?")
    follow = fake_qa.answer("Which office says so?", history=[(first.question, first)])
    alone = fake_qa.answer("Which office says so?")
    # Two offices say things in the articles; the one counting the cars is the transport office.
    assert [c.text for c in follow.citations] == [
        "About 40,000 cars cross the bridge every day, according to the transport office."]
    assert "education office" in alone.citations[0].text


def test_history_may_be_earlier_questions_alone(fake_qa: QA) -> None:
    earlier = "How many cars cross the harbour bridge?"
    first = fake_qa.answer(earlier)
    follow_up = "When will it be repaired?"
    for history in ([earlier], [(earlier, first)], [[earlier, first.text]]):
        assert fake_qa.answer(follow_up, history=history).query != follow_up  # resolved with the bridge
    for bad in ([5], [("a", "b", "c")], [None]):
        with pytest.raises(ValueError, match="history items must be") as err:
            fake_qa.answer("When will it be repaired?", history=bad)
        assert "\n" not in str(err.value)


def test_he_means_the_person_the_conversation_is_about_not_the_last_answer() -> None:
    from types import SimpleNamespace

    from qa.question.followup import resolve

    def turn(question: str, query: str, short: str | None) -> tuple[str, object]:
        return question, SimpleNamespace(query=query, short=short, answered=True)

    first = "Who is the spokesman for the Taliban in Doha?"
    spokesman = turn(first, first, "Suhail Shaheen")
    said = turn("What did he say about the conditional release?",
                "What did Suhail Shaheen say about the conditional release?", None)
    agency = turn("Which agency did he speak to?", "Which agency did Suhail Shaheen speak to?", "Reuters")
    assert resolve("What did he say about the conditional release?", [spokesman]) == (
        "What did Suhail Shaheen say about the conditional release?")
    # The second answer named no one: "he" is still the man the second question asked about.
    assert resolve("Which agency did he speak to?", [spokesman, said]) == (
        "Which agency did Suhail Shaheen speak to?")
    # "Reuters" answered a which-agency question: it is no "he".
    assert resolve("What did he tell them?", [spokesman, said, agency]) == (
        "What did Suhail Shaheen tell them?")
    assert resolve("Why does he think so?", [turn("Which institution is Michael Kugelman with?",
                                                  "Which institution is Michael Kugelman with?",
                                                  "Wilson Center")]) == "Why does Michael Kugelman think so?"
