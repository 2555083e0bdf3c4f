"""Every hand-written rule (qa/rules.toml) does its job: each case shows what the rule gives, and
that turning it off (QA_RULES_OFF) changes exactly that; every rule of the registry has a case."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest
from fake_runtime import FakeRuntime

from qa import QA, Answer, Config, rules
from qa.answering import coverage
from qa.answering.cite import Pick, group_facts
from qa.answering.reasons import gives_reason
from qa.answering.select import covers, follows, more, names_in, on_topic, shown
from qa.answering.shapes import definition, says_ahead
from qa.answering.sides import sides_of
from qa.config import Answering
from qa.passage import Passage
from qa.question import analyse
from qa.question.asking import asking_of
from qa.question.kinds import head_noun
from qa.readers.lm.excerpts import dated_for, excerpts
from qa.readers.lm.locate import clean, locate
from qa.readers.lm.prompt import default_prompt
from qa.readers.lm.reader import LMReader
from qa.readers.spans.candidates import sentence_candidates, trim, without_question_words
from qa.readers.spans.reader import SpanReader
from qa.sentences import evidence
from qa.sentences.record import Sentence
from qa.sentences.scoring import scores


def sentence(text: str, tags: tuple = (), sid: int = 0, source: str = "a.txt", start: int = 0,
             date: str | None = None, vector: tuple[float, ...] = (1.0, 0.0), score: float = 1.0) -> Sentence:
    """A sentence record of its own: its words as terms, the tags given (sentence offsets + start)."""
    from qa.text.words import tokenize

    passage = Passage(source, source, text, start, start + len(text), date=date)
    return Sentence(sid, passage, tuple(tokenize(text)), tags, np.array(vector, dtype=np.float32),
                    score=score)


def _between(text: str) -> Sentence:
    """A sentence with one sentence before it and one after it in its article."""
    return Sentence(1, Passage("a.txt", "A", text, 3, 3 + len(text)), before=sentence("A.", sid=0),
                    after=sentence("C.", sid=2, start=6))


def _texts(text: str, tags: tuple) -> list[str]:
    return [c.text for c in sentence_candidates(text, 0, tags)]


def _choice_prompt() -> str:
    """What the model reads for a question with "None of the above" among its options."""
    messages = default_prompt().choice_messages(analyse("Which?"), "passages", ["A", "None of the above"])
    return messages[1]["content"]


def _lm() -> LMReader:
    return LMReader(FakeRuntime(), 4, 1100, 0.1, 0.7)


def _earlier(short: str, cited: str = "Shaheen told Reuters the talks were on.") -> list[tuple[str, Answer]]:
    citation = Passage("a.txt", "A", cited, 0, len(cited))
    first = Answer("Who is the Taliban's spokesman?", cited, True, (citation,), short,
                   query="Who is the Taliban's spokesman?")
    return [(first.question, first)]


def _engine(tmp_path: Path, fake_embedder: object, articles: dict[str, str], phrase: str,
            p: float = 0.9) -> QA:
    seeds = tmp_path / "seeds"
    seeds.mkdir(exist_ok=True)
    for name, text in articles.items():
        (seeds / name).write_text(text, "utf-8")
    config = Config.of(seeds_dir=seeds, index_dir=tmp_path / "index", min_evidence=0.0, reader="lm")
    return QA(config, embedder=fake_embedder, runtime=FakeRuntime(phrase, p=p))  # type: ignore[arg-type]


PORTER = {"library.md": "# Library\n\nThe council voted to build a new public library near the station.\n"
                        "Mayor Jane Porter said the library would hold 80,000 books.\n"}
RELEASES = {
    "march.md": "---\ndate: 2020-03-11\n---\n# Releases begin\n\nKandahar officials release 100 Zarghun "
                "prisoners a day, the governor said.\n",
    "april.md": "---\ndate: 2020-04-20\n---\n# Releases speed up\n\nKandahar officials release 300 Zarghun "
                "prisoners a day, the governor said.\n",
}
KUGELMAN = ((0, 16, "PERSON", "nsubj^", 0, 60),)

# What each rule gives, as a function of nothing: called with the rule on, then off.
CASES: dict[str, tuple[Callable[[], object], object]] = {
    "question.focus": (lambda: asking_of("Officials said what they knew. Who won the vote?").expects,
                       "person"),
    "question.contractions": (lambda: asking_of("What's its next big space venture?").key, "which:venture"),
    "question.relative_wh": (lambda: asking_of("From how many bases had US forces begun withdrawing when "
                                               "the decree was issued?").expects, "count"),
    "question.head_nouns": (lambda: asking_of("Which agency reported the remarks?").expects, "org"),
    "question.kind_of": (lambda: head_noun("kind of ceasefire would kabul end?"), "ceasefire"),
    "question.units": (lambda: asking_of("How many days will the release take?").expects, "duration"),
    "question.money_words": (lambda: asking_of("How much did the US pay the Taliban?").expects, "money"),
    "question.named_entity": (lambda: asking_of("What did officials say the new base is called?").expects,
                              "entity"),
    "question.subject_verb": (lambda: asking_of("Who tweeted about the decree?").verb, "tweet"),
    "question.said": (lambda: analyse("What did Ghani say about the talks?").kind, "said"),
    "question.broad_kinds": (lambda: analyse("Summarize the Taliban's reaction").kind, "summary"),
    "question.first_word": (lambda: analyse("Roughly how many troops were in Kabul?").named, ("Kabul",)),
    "question.not_names": (lambda: analyse("Kabul spoke first. What did Ghani say?").named, ("Ghani",)),
    "followup.person": (lambda: analyse("What did he tweet?", _earlier("Suhail Shaheen")).text,
                        "What did Suhail Shaheen tweet?"),
    "followup.recall": (lambda: analyse("Which agency did he speak to?", _earlier("Suhail Shaheen")).recalled
                        is not None, True),
    "sentences.follow_up_alone": (lambda: round(float(scores(
        [sentence("The spokesman tweeted.", vector=(1.0, 0.0))],
        lambda q: np.array([1.0, 0.0] if q == "What did he tweet?" else [0.0, 1.0], dtype=np.float32),
        lambda t: 1.0, analyse("What did he tweet?", _earlier("Suhail Shaheen")))[0]), 2), 0.85),
    "sentences.typed": (lambda: round(float(scores(
        [sentence("About 40,000 cars cross it.", ((6, 12, "CARDINAL", "nummod", 0, 27),))],
        lambda q: np.array([0.0, 1.0], dtype=np.float32), lambda t: 1.0,
        analyse("How many cars cross it?"))[0]), 2), 0.6),
    "sentences.proximity": (lambda: round(float(scores(
        [sentence("Cars cross the bridge.")], lambda q: np.array([0.0, 1.0], dtype=np.float32),
        lambda t: 1.0, analyse("Which cars cross the bridge?"))[0]), 2), 0.5),
    "reading.neighbours": (lambda: len(excerpts([_between("B.")], 4, 1100).sentences), 3),
    "reading.no_dates_for_dates": (lambda: dated_for(analyse("When will the release start?")), False),
    "reading.earlier_turn": (lambda: "Earlier question" in default_prompt().question_messages(
        analyse("Which agency did he speak to?", _earlier("Suhail Shaheen")), "passages")[1]["content"],
        True),
    "reading.reply_labels": (lambda: clean("Answer: Reuters"), "Reuters"),
    "reading.function_words": (lambda: _lm()._declines("A"), True),
    "reading.leading_article": (lambda: locate("the agency Reuters", ["The reply came from agency Reuters."])
                                is not None, True),
    "reading.respell_numbers": (lambda: locate("5", ["Five prisoners walked out."]) is not None, True),
    "reading.abbreviation_dot": (lambda: locate("US", ["The U.S. agreed."]), (0, 4, 8)),
    "reading.whole_name": (lambda: LMReader._candidate(sentence(
        "Forward Auston Matthews won the Hart Trophy.", ((8, 23, "PERSON", "nsubj^", 0, 44),)), 15, 23).text,
        "Auston Matthews"),
    "choice.none_of_the_above": (lambda: default_prompt().choice_none.strip() in _choice_prompt(), True),
    "spans.no_span_for_why_how": (lambda: SpanReader().read(analyse("Why did Shaheen make the call?"), [
        sentence("Shaheen called Reuters on Tuesday.", ((15, 22, "ORG", "dobj^", 0, 34),))]).spans == (),
        True),
    "spans.openers": (lambda: trim("the Wilson Center", 0, 17), (4, 17)),
    "spans.pronouns": (lambda: _texts("He said so.", ((0, 2, "NP", "nsubj^", 0, 11),)), []),
    "spans.name_start": (lambda: _texts("They bar al-Qaeda from it.", ((5, 17, "PERSON", "dobj^", 0, 26),)),
                         ["al-Qaeda"]),
    "spans.amounts": (lambda: "100,000" in _texts("up to 100,000 people came.",
                                                  ((0, 13, "CARDINAL", "nummod", 0, 26),)), True),
    "spans.unmodified": (lambda: "Covid-19 tests" in _texts("They gave free Covid-19 tests.",
                                                            ((10, 29, "NP", "dobj^", 0, 30),)), True),
    "spans.coordinated": (lambda: "US, Japan and India" in _texts("The US, Japan and India met.", (
        (4, 6, "GPE", "nsubj^", 0, 28), (8, 13, "GPE", "conj", 0, 28), (18, 23, "GPE", "conj", 0, 28))),
        True),
    "spans.question_words": (lambda: without_question_words(sentence_candidates(
        "He spoke to AFP news agency.", 0, ((12, 27, "NP", "pobj", 0, 28),))[0],
        "He spoke to AFP news agency.", 0, frozenset({"new", "agency"})).text, "AFP"),
    "coverage.english": (lambda: (coverage.refusal(analyse("¿Cuántos prisioneros serán liberados cada día?"),
                                                   0.9, [], False, Answering()) or ("",))[0], "not_english"),
    "coverage.kind": (lambda: coverage.lacks_kind(analyse("How many cars cross it?"),
                                                  [sentence("Cars cross it.")]), True),
    "coverage.names": (lambda: (coverage.refusal(analyse("Who visited Zanzibar?"), 0.5, ["Zanzibar"], False,
                                                 Answering()) or ("",))[0], "names_missing"),
    "coverage.name_forms": (lambda: coverage.missing(analyse("How many prisoners did Iran free?"),
                                                     ["Iranian officials freed 1,500."]), []),
    "coverage.article_dates": (lambda: coverage.missing(analyse("What happened in June 2022?"),
                                                        ["Floods closed the park."], ["2022-06-14"]), []),
    "coverage.aliases": (lambda: coverage.missing(analyse("Which U.S. state sued?"),
                                                  ["The United States sued."]), []),
    "answering.same_short": (lambda: len(group_facts([
        Pick(sentence("Officials release 100 a day.", vector=(1.0, 0.0)), 1.0, "100"),
        Pick(sentence("The count was 100 a day, the governor said.", sid=1, source="b.txt",
                      vector=(0.0, 1.0)), 0.9)], Answering())[0]), 2),
    "answering.word_for_word_once": (lambda: len(group_facts([
        Pick(sentence("Officials release 100 a day."), 1.0),
        Pick(sentence("Officials release 100 a day.", sid=1, source="b.txt"), 0.95)], Answering())[0]), 1),
    "coverage.broad_names": (lambda: (coverage.broad_refusal(
        analyse("What did the UN say about the decree?"), 0.9, ["UN"], True, Answering()) or ("",))[0],
        "names_missing"),
    "coverage.speaker": (lambda: coverage.quoted(analyse("What did the UN say about the decree?"), [
        sentence("Under the deal, endorsed by the UN Security Council, America also agreed to cut troops.")]),
        False),
    "coverage.speaker_topic": (lambda: coverage.quoted(analyse("What did Trump say about the release?"), [
        sentence("President Donald Trump promised to end the war and bring the troops home.")]), False),
    "coverage.speaker_first": (lambda: coverage.quoted(analyse("What did Shaheen say about Abdullah?"), [
        sentence("Abdullah said the decree was invalid.")]), False),
    "answering.boilerplate": (
        lambda: shown(sentence("Read: US and Afghan Taliban sign a deal for peace in Doha")), False),
    "answering.titles": (lambda: definition(sentence(
        "US negotiator Zalmay Khalilzad welcomed the decree.", ((0, 30, "NP", "nsubj"),)),
        "Zalmay Khalilzad"), "US negotiator"),
    "answering.own_questions": (lambda: shown(sentence("What parts of Yellowstone are damaged?")), False),
    "answering.verdict_on_topic": (lambda: covers(
        [sentence("Montana Gov. Greg Gianforte declared a disaster.")],
        analyse("Did Idaho's governor declare a disaster?")), False),
    "question.requests": (lambda: analyse("Could you list the demands?").kind, "list"),
    "question.more": (lambda: analyse("What else?", [("Why did the talks stall?", None)]).kind, "why"),
    "answering.list_names": (lambda: names_in(
        sentence("Officials in Gardiner spoke.", tags=((13, 21, "GPE"),)), frozenset({"GPE"}),
        analyse("Which towns were hit?")), ["Gardiner"]),
    "answering.sides_asked": (lambda: sides_of(analyse("How do the plane and the helicopter compare?"), [
        sentence("Officials at the FAA and the NTSB spoke.", tags=((13, 16, "ORG"),))]),
        ["plane", "helicopter"]),
    "answering.fill_on_topic": (lambda: on_topic(sentence("Analyst Michael Kugelman called it a sign."),
                                                 analyse("Who is Zalmay Khalilzad?")), False),
    "answering.fill_budget": (lambda: [s.id for s in more(
        [sentence("The talks stalled " + "again and again " * 60 + "today.", sid=1, score=0.9),
         sentence("The talks stalled over the prisoners, officials said.", sid=2, score=0.5)],
        [], 3, analyse("Why did the talks stall?"))], [2]),
    "answering.follow_on": (lambda: [s.id for s in follows(_between("B is here."))], [2]),
    "answering.future_cues": (lambda: says_ahead("Talks are expected to start in Oslo next week."), True),
    "answering.reason_cues": (lambda: gives_reason("The talks stalled because of the prisoners.",
                                                   "Why did the talks stall?"), True),
}
# Rules shown through an engine over a few articles with a fake model (their tests take a folder).
ENGINE_CASES = {
    "answering.keep_unverified": (PORTER, "Real Madrid", "How many books would the library hold?",
                                  lambda a: a.answered),
    "answering.sentences_never_decline": (PORTER, "not in the articles", "What did Mayor Jane Porter say?",
                                          lambda a: a.answered),
    "answering.lead_with_found": (PORTER, "near the station", "What did Mayor Jane Porter say?",
                                  lambda a: a.answered and "near the station" in a.citations[0].text),
    "recency.rivals": (RELEASES, "100", "How many Zarghun prisoners do Kandahar officials release a day?",
                       lambda a: a.short == "300"),
    "recency.dated_text": (RELEASES, "100", "How many Zarghun prisoners do Kandahar officials release a day?",
                           lambda a: "(most recent)" in a.text),
}


def test_every_rule_has_a_case_and_every_case_a_rule() -> None:
    shown_apart = {"sentences.lead_read_first"}
    assert sorted(CASES.keys() | ENGINE_CASES.keys() | shown_apart) == sorted(rules.registry())


def test_the_answers_best_sentence_is_read_first_whatever_the_reading_order(
        tmp_path: Path, fake_embedder: object, monkeypatch: pytest.MonkeyPatch) -> None:
    # A reading order that reads the sentences least like the question first.
    unlike = evidence.EvidenceModel(tuple(-1.0 if f == "score" else 0.0 for f in evidence.FEATURES))
    monkeypatch.setattr(evidence, "default_model", lambda: unlike)
    engine = _engine(tmp_path, fake_embedder, PORTER, "80,000")

    def first() -> bool:
        draft = engine.answerer.draft("How many books would the library hold?", None, "hybrid", None, None)
        return draft.evidence.read[0].id == draft.evidence.cited[0].id

    assert first()
    with rules.off("sentences.lead_read_first"):
        assert not first()


@pytest.mark.parametrize("name", sorted(CASES))
def test_each_rule_does_its_job_and_off_it_does_not(name: str) -> None:
    check, expected = CASES[name]
    assert check() == expected
    with rules.off(name):
        assert check() != expected


@pytest.mark.parametrize("name", sorted(ENGINE_CASES))
def test_each_answering_rule_does_its_job_and_off_it_does_not(name: str, tmp_path: Path,
                                                              fake_embedder: object) -> None:
    articles, phrase, question, holds = ENGINE_CASES[name]
    engine = _engine(tmp_path, fake_embedder, articles, phrase, p=0.05 if name.endswith("found") else 0.9)
    assert holds(engine.answer(question))
    with rules.off(name):
        assert not holds(engine.answer(question))


def test_a_rule_turned_off_by_its_variable_and_an_unknown_one_refused(
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QA_RULES_OFF", "question.units, reading.whole_name")
    assert not rules.on("question.units") and rules.on("question.focus")
    monkeypatch.setenv("QA_RULES_OFF", "question.unit")
    with pytest.raises(ValueError, match="QA_RULES_OFF names no rule 'question.unit'"):
        Config.from_env()
    with pytest.raises(KeyError):
        rules.on("no.such.rule")
