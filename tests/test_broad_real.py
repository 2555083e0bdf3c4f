"""Questions about the story, each kind answered end to end with the real model and index on the
seeds: the kind on the answer, its shape (a verdict, a list's items, a comparison's sides, a title),
every sentence cited to the exact sentence of its article, and the fact that a good answer holds.
A mutation that sends every question down the factoid path (QA_RULES_OFF=question.broad_kinds)
fails the tests of the kinds it decides (9 of 14: the kind and the shape are gone); why and
what-was-said questions are told apart before it (question.said, the wh-word)."""

from __future__ import annotations

import json
import re

import pytest
from click.testing import CliRunner
from reading import no_fallback, read_by_model

from eval.broad.score import uncited
from qa import QA, Answer
from qa.surfaces.cli import main
from qa.text.normalise import plain

pytestmark = pytest.mark.slow

MARKER = re.compile(r"\[(\d+)\]")


def _cited(engine: QA, answer: Answer) -> None:
    """Every sentence of the answer carries a marker, every marker a citation, every citation the
    exact sentence of its article."""
    assert answer.answered and answer.citations, answer.notice
    assert uncited(answer.text) == 0, answer.text
    markers = {int(n) for n in MARKER.findall(answer.text)}
    assert markers and markers <= set(range(1, len(answer.citations) + 1)), answer.text
    for c in answer.citations:
        assert engine.index.articles[c.source].text[c.start:c.end] == c.text


def _sentences(answer: Answer) -> int:
    """How many cited sentences the answer shows (each ends with its markers)."""
    return len(re.findall(r"(?:\[\d+\])+", answer.text))


def test_an_overview_tells_the_story_in_a_few_cited_sentences(real_qa: QA) -> None:
    answer = real_qa.answer("What is this news about?")
    no_fallback(answer)
    assert answer.kind == "overview"
    _cited(real_qa, answer)
    assert 2 <= _sentences(answer) <= 5, answer.text
    # The story's main facts: the decree freeing prisoners, and the Taliban turning it down.
    assert "1,500" in answer.text and "Taliban rejected" in answer.text, answer.text
    assert "Read:" not in answer.text


def test_a_summary_of_a_topic_carries_its_facts(real_qa: QA) -> None:
    answer = real_qa.answer("Give me a recap of what Ghani's decree says")
    no_fallback(answer)
    assert answer.kind == "summary"
    _cited(real_qa, answer)
    assert 2 <= _sentences(answer) <= 5 and len(answer.text.split()) <= 150, answer.text
    assert "1,500" in answer.text and "goodwill" in answer.text, answer.text


def test_a_why_question_cites_the_cause(real_qa: QA) -> None:
    answer = real_qa.answer("Why were the talks delayed?")
    no_fallback(answer)
    assert answer.kind == "why"
    _cited(real_qa, answer)
    assert "delayed by demands over the prisoner release" in answer.text, answer.text


def test_a_list_shows_its_items_each_cited(real_qa: QA) -> None:
    answer = real_qa.answer("What are the Taliban's demands?")
    no_fallback(answer)
    assert answer.kind == "list"
    _cited(real_qa, answer)
    assert len(answer.parts) >= 2 and all(p.item for p in answer.parts), answer.parts
    assert all(MARKER.search(p.text) for p in answer.parts)
    assert "5,000" in answer.text, answer.text


def test_a_polite_request_is_answered_as_what_it_asks(real_qa: QA) -> None:
    """"Could you list …?" is a list, not a yes/no question."""
    answer = real_qa.answer("Could you please list the Taliban's demands?")
    assert answer.kind == "list" and answer.verdict is None, (answer.kind, answer.text)
    _cited(real_qa, answer)
    assert len(answer.parts) >= 2 and all(p.item for p in answer.parts), answer.parts
    assert "5,000" in answer.text, answer.text


def test_who_is_involved_lists_the_storys_people(real_qa: QA) -> None:
    """A question about the whole story's people: its articles' first sentences that name people."""
    answer = real_qa.answer("Who is involved?")
    assert answer.kind == "list" and answer.answered, answer.text
    _cited(real_qa, answer)
    assert all(p.item for p in answer.parts) and "Ghani" in answer.text, answer.text


def test_a_list_of_people_is_made_of_sentences_that_name_them(real_qa: QA) -> None:
    """The officials quoted about the decree, not the decree's most central sentences."""
    answer = real_qa.answer("Who are the officials quoted about the decree?")
    assert answer.kind == "list"
    _cited(real_qa, answer)
    assert all(p.item for p in answer.parts), answer.parts
    named = [n for n in ("Seddiqi", "Shaheen", "Khalilzad") if n in answer.text]
    assert len(named) >= 2, answer.text


@pytest.mark.parametrize(("question", "verdict", "fact"), [
    ("Did the US welcome the decree?", "yes", "Khalilzad welcomed the decree"),
    ("Did the Taliban accept Ghani's offer?", "no", "Taliban"),
])
def test_a_yes_no_question_leads_with_the_verdict_and_its_sentences(real_qa: QA, question: str,
                                                                      verdict: str, fact: str) -> None:
    answer = real_qa.answer(question)
    read_by_model(answer)  # the model decides yes or no
    assert answer.kind == "yesno" and answer.verdict == verdict, (answer.verdict, answer.text)
    assert answer.text.startswith(verdict.capitalize() + ". "), answer.text
    _cited(real_qa, answer)  # never a bare yes or no: the sentences follow, cited
    assert fact in answer.text, answer.text


def test_a_yes_or_no_about_someone_no_sentence_read_is_about_does_not_say_clearly(real_qa: QA) -> None:
    """The model says no, reading sentences about the decree and one about the UN Security Council
    endorsing the deal: none names the Council and the decree together, so the verdict stands on
    nothing (answering.verdict_on_topic), and the sentences follow, cited."""
    answer = real_qa.answer("Did the UN Security Council welcome the decree?")
    read_by_model(answer)
    assert answer.kind == "yesno" and answer.verdict == "unclear", (answer.verdict, answer.text)
    assert answer.text.startswith("The articles do not say clearly. "), answer.text
    _cited(real_qa, answer)


def test_a_yes_or_no_stands_on_the_names_asked_about_across_the_sentences_read(real_qa: QA) -> None:
    """No sentence names both the Trump administration and Abdullah: one says the administration
    opposed a parallel government, others that Abdullah set one up. Between them they name what was
    asked (answering.verdict_on_topic), so the model's No stands, its sentences cited."""
    answer = real_qa.answer("Did the Trump administration back Abdullah's move to set up a rival government?")
    read_by_model(answer)
    assert answer.kind == "yesno" and answer.verdict == "no", (answer.verdict, answer.text)
    assert answer.text.startswith("No. ") and "parallel government" in answer.text, answer.text
    _cited(real_qa, answer)


def test_a_comparison_attributes_each_position_to_its_side(real_qa: QA) -> None:
    answer = real_qa.answer("How do Ghani's and Abdullah's claims to the presidency differ?")
    no_fallback(answer)
    assert answer.kind == "compare"
    _cited(real_qa, answer)
    # Each side's part first, then (unlabelled) any further sentence that names neither side.
    labels = [p.label for p in answer.parts]
    assert labels[:2] == ["Ghani", "Abdullah"] and all(label is None for label in labels[2:]), answer.parts
    assert all(MARKER.search(p.text) for p in answer.parts)
    assert "invalid" in answer.text or "fraud" in answer.text, answer.text


def test_a_comparison_of_things_not_named_compares_what_was_asked(real_qa: QA) -> None:
    """No name is asked about: the sides are the two things the question sets side by side
    (answering.sides_asked), each part's sentence naming its side, not the actors named most."""
    answer = real_qa.answer("How do the government's and the insurgents' demands compare?")
    assert answer.kind == "compare"
    _cited(real_qa, answer)
    parts = [p for p in answer.parts if p.label]
    assert [p.label for p in parts] == ["Government", "Insurgents"], answer.parts
    assert all(p.label.lower() in p.text.lower() for p in parts), answer.parts


def test_who_is_gives_the_title_as_the_short_answer(real_qa: QA) -> None:
    answer = real_qa.answer("Who is Zalmay Khalilzad?")
    no_fallback(answer)
    assert answer.kind == "define" and answer.short == "US negotiator", (answer.short, answer.text)
    _cited(real_qa, answer)
    assert any(answer.short in c.text for c in answer.citations)  # the title is the articles' words
    # Any further sentence is about him (answering.fill_on_topic), not the pool's best about others.
    assert all("Khalilzad" in c.text for c in answer.citations), answer.text


def test_what_next_cites_what_is_planned(real_qa: QA) -> None:
    answer = real_qa.answer("What happens next with the prisoners?")
    no_fallback(answer)
    assert answer.kind == "next"
    _cited(real_qa, answer)
    assert "every two weeks" in answer.text, answer.text


def test_what_was_said_cites_the_speakers_words(real_qa: QA) -> None:
    answer = real_qa.answer("What did Ghani's spokesman say about the Taliban?")
    no_fallback(answer)
    assert answer.kind == "said"
    _cited(real_qa, answer)
    assert "The failure of this process will be on the Taliban" in answer.text, answer.text


def test_an_answer_goes_on_with_the_pools_best_sentences_on_its_topic(real_qa: QA) -> None:
    """The model finds the analyst's first remark; the pool's best sentences naming the Taliban follow
    (QA_BROAD_FILL), his "hardball" among them, within the answer's 120 words."""
    answer = real_qa.answer("What do analysts say about the Taliban's strategy?")
    no_fallback(answer)
    assert answer.kind == "said"
    _cited(real_qa, answer)
    assert "playing hardball" in answer.text and len(MARKER.sub("", answer.text).split()) <= 120, answer.text
    assert all("Taliban" in c.text for c in answer.citations[1:]), answer.text


def test_a_quotation_goes_on_in_the_sentence_after_it(real_qa: QA) -> None:
    """The model finds the spokesman's first sentence; the next one of his quotation, which names no
    one again, follows it (answering.follow_on)."""
    answer = real_qa.answer("What did the Taliban spokesman say?")
    no_fallback(answer)
    assert answer.kind == "said"
    _cited(real_qa, answer)
    first, then = "We never agreed to any conditional release", "against the peace accord that we signed"
    assert first in answer.text and then in answer.text, answer.text
    assert answer.text.index(first) < answer.text.index(then)


def test_a_sentence_too_long_for_the_words_left_is_passed_over_for_one_that_fits(real_qa: QA) -> None:
    """After three sentences naming the talks, the pool's next best is too long for what is left of
    the 120 words; a shorter one after it, on the peace talks they are to start, still fits
    (answering.fill_budget)."""
    answer = real_qa.answer("What are the intra-Afghan talks?")
    assert answer.kind == "define"
    _cited(real_qa, answer)
    assert "peace talks" in answer.text and len(MARKER.sub("", answer.text).split()) <= 120, answer.text


def test_what_no_article_reports_being_said_is_refused(real_qa: QA) -> None:
    """The UN is in the articles (it endorsed the deal), but none of them reports what it said."""
    answer = real_qa.answer("What did the UN say about the decree?")
    assert answer.kind == "said"
    assert not answer.answered and answer.notice_code == "not_said", (answer.notice_code, answer.text)
    assert "UN" in (answer.notice or "") and not answer.citations


def test_tell_me_more_goes_on_past_what_the_answer_showed(real_qa: QA) -> None:
    first = real_qa.answer("What is this news about?")
    history: list[tuple[str, Answer]] = [("What is this news about?", first)]
    then = real_qa.answer("Tell me more.", history=history)
    assert then.kind == "overview", (then.kind, then.text)
    _cited(real_qa, then)
    shown = {plain(c.text) for c in first.citations}
    assert not {plain(c.text) for c in then.citations} & shown, then.text
    # Each further request goes on past every answer since the question, whose question is as typed.
    assert then.question == "Tell me more."
    history.append((then.question, then))
    again = real_qa.answer("What else?", history=history)
    _cited(real_qa, again)
    shown |= {plain(c.text) for c in then.citations}
    assert not {plain(c.text) for c in again.citations} & shown, again.text


def test_tell_me_more_after_a_short_answer_says_more_on_it_without_a_second_one(real_qa: QA) -> None:
    asked = "Once talks begin, how many prisoners will be let go every fortnight?"
    first = real_qa.answer(asked)
    assert first.short == "500", first.text
    then = real_qa.answer("Tell me more.", history=[(asked, first)])
    _cited(real_qa, then)
    # Not "100" (a day, read from the sentences left) shown as the answer: the rest of the plan.
    assert then.short is None and "3,500" in then.text, (then.short, then.text)
    assert not {plain(c.text) for c in then.citations} & {plain(c.text) for c in first.citations}


def test_tell_me_more_after_a_verdict_gives_no_second_verdict(real_qa: QA) -> None:
    first = real_qa.answer("Did the US welcome the decree?")
    assert first.verdict == "yes", first.text
    then = real_qa.answer("Tell me more.", history=[(first.question, first)])
    _cited(real_qa, then)
    # Read again from the sentences left, the model said "No": more of a verdict is more on it.
    assert then.verdict is None and then.kind == "summary", (then.verdict, then.text)


def test_tell_me_more_when_nothing_more_is_said_says_so(real_qa: QA) -> None:
    """One sentence of the articles names Khalilzad: the who-is answer shows it, and no more is said."""
    first = real_qa.answer("Who is Zalmay Khalilzad?")
    assert first.answered and "Khalilzad" in first.text
    then = real_qa.answer("Go on.", history=[("Who is Zalmay Khalilzad?", first)])
    assert not then.answered and then.notice_code == "no_more", (then.notice_code, then.text)
    assert then.text == "That is all the articles say about this." and not then.citations
    assert not then.passages  # no "closest passages": they are the ones the answer above cited


def test_what_someone_said_about_something_they_did_not_speak_of_is_refused(real_qa: QA) -> None:
    """Trump is quoted (his promise to end the war), but on the prisoner release no article reports
    a word of his (coverage.speaker_topic)."""
    answer = real_qa.answer("What did Trump say about the prisoner release?")
    assert answer.kind == "said"
    assert not answer.answered and answer.notice_code == "not_said", (answer.notice_code, answer.text)
    answer = real_qa.answer("What did Khalilzad say about the decree?")  # he welcomed it: answered
    assert answer.answered and "welcomed the decree" in answer.text, answer.text


def test_what_one_person_said_of_another_is_not_answered_by_the_other(real_qa: QA) -> None:
    """Shaheen is quoted on the prisoners and Abdullah on the decree, but no article reports a word of
    Shaheen's about Abdullah: the speaker is who the question names before "say" (coverage.speaker_first)."""
    answer = real_qa.answer("What did Shaheen say about Abdullah?")
    assert answer.kind == "said"
    assert not answer.answered and answer.notice_code == "not_said", (answer.notice_code, answer.text)


def test_the_kind_and_the_items_reach_json(real_qa: QA, model_cache) -> None:  # conftest fixture
    folders = ["--seeds", str(real_qa.config.seeds_dir), "--index", str(real_qa.config.index_dir)]
    out = CliRunner().invoke(main, [*folders, "ask", "What are the Taliban's demands?", "--json"])
    assert out.exit_code == 0, out.output
    answer = json.loads(out.output)
    assert answer["kind"] == "list" and answer["answered"]
    assert len(answer["parts"]) >= 2 and all(p["item"] for p in answer["parts"]), answer["parts"]
