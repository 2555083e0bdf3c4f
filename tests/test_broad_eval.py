"""The broad set's scoring (eval/broad): nuggets found in an answer's words, sentences shown without
a citation, and the set's figures, on answers written out here."""

from __future__ import annotations

import calendar
import json
import re

import pytest

from eval.broad import run, score
from eval.broad.nuggets import Nugget, holds

NUGGET = Nugget("1,500 prisoners go first", True, (("1500",), ("prisoner", "prisoners")))


def test_a_nugget_is_held_whatever_the_commas_and_markers() -> None:
    assert holds(NUGGET, "Kabul frees 1,500 [1] prisoners first.")
    assert not holds(NUGGET, "Kabul frees 15,000 prisoners.")  # whole words: 15000 is not 1500
    assert not holds(NUGGET, "Kabul frees 1,500 fighters.")  # every group must be found


@pytest.mark.parametrize(("text", "bare"), [
    ("It rained. [1] It poured. [2]", 0),
    ("It rained. [1] It poured.", 1),  # a sentence after a cited one, without its own marker
    ("It rained all day over the whole of the city.\nIt poured. [2]", 1),
    # A quotation's comma is not the end of a sentence: the words after it are the same sentence.
    ('"The failure will be on the Taliban," Ghani\'s spokesman said. [1]', 0),
    ("Yes. It rained. [1]", 0),  # the verdict is not a sentence of the articles
    ("- It rained. [1]\n- It poured.", 1),  # a list's item without its citation
])
def test_sentences_without_a_citation_are_counted(text: str, bare: int) -> None:
    assert score.uncited(text) == bare


def test_a_passage_cited_whole_is_one_cited_sentence() -> None:
    """The index keeps a quotation of several sentences as one: cited whole, none of them is bare."""
    quote = "“We will continue to support the directive to the end. The people deserve confidence.”"
    assert score.uncited(f"{quote} [1] It rained all day over the whole of the city.", (quote,)) == 1
    assert score.uncited(f"{quote} [1]", (quote,)) == 0
    assert score.uncited(f"{quote} [1]") == 1  # without the citation's text, its first sentence is bare


def test_the_sets_figures_count_refusals_and_recall() -> None:
    q = {"id": "x", "story": "s", "kind": "list", "answerable": True,
         "nuggets": [{"fact": "f", "vital": True, "match": [["1500"]]},
                     {"fact": "g", "vital": False, "match": [["Saturday"]]}]}
    none = {**q, "id": "y", "answerable": False, "nuggets": []}
    records = [score.record(q, "1,500 go first. [1]", True, 1.0, "list"),
               score.record(none, "", False, 0.5, "list")]
    figures = score.summary(records)
    assert figures["vital_recall"] == 1.0 and figures["all_recall"] == 0.5
    assert figures["unanswerable_refused"] == 1 and figures["false_refusals"] == 0
    assert figures["by_kind"]["list"]["questions"] == 2


def test_sentences_shown_holding_no_nugget_are_counted() -> None:
    """What an answer pads itself with: a cited sentence it shows that holds none of the nuggets (a copy
    cited beside it by its marker alone is not shown)."""
    q = {"id": "x", "story": "s", "kind": "why", "answerable": True,
         "nuggets": [{"fact": "f", "vital": True, "match": [["1500"]]}]}
    cited = ("1,500 go   first.", "It rained.", "1,500 go first on Saturday.")
    r = score.record(q, "1,500 go first. [1][3] It rained. [2]", True, 1.0, "why", cited)
    assert (r["sentences"], r["bare"]) == (2, 1)
    figures = score.summary([r, score.record(q, "", False, 1.0, "why", cited)])
    assert (figures["sentences_shown"], figures["sentences_without_nugget"]) == (2, 1)


def test_the_written_set_is_well_formed() -> None:
    """At least 40 questions on the seeds and 40 on other stories, every kind 4 times, 8 unanswerable,
    each answerable one with a vital nugget."""
    rows = run.load()
    assert len({r["id"] for r in rows}) == len(rows)
    assert sum(r["story"] == "seeds" for r in rows) >= 40 and sum(r["story"] != "seeds" for r in rows) >= 40
    kinds = {r["kind"] for r in rows}
    assert all(sum(r["kind"] == k for r in rows) >= 4 for k in kinds)
    assert sum(not r["answerable"] for r in rows) >= 8
    assert all(any(n["vital"] for n in r["nuggets"]) for r in rows if r["answerable"]), json.dumps(rows[0])


def test_the_held_out_what_was_said_set_is_well_formed() -> None:
    """24 what-was-said questions, 8 a story, half of them unanswerable (no nuggets), each answerable
    one with a vital nugget."""
    rows = run.load(path=run.QUESTIONS.with_name("said_heldout.jsonl"))
    assert len({r["id"] for r in rows}) == len(rows) == 24 and {r["kind"] for r in rows} == {"said"}
    assert all(sum(r["story"] == s for r in rows) == 8 for s in {r["story"] for r in rows})
    assert sum(not r["answerable"] for r in rows) == 12
    assert all(any(n["vital"] for n in r["nuggets"]) if r["answerable"] else not r["nuggets"] for r in rows)


def test_the_held_out_yes_no_sets_are_well_formed() -> None:
    """Two blind sets of 36 yes/no questions, 12 a story: 4 yes, 4 no and 4 unanswerable (no nuggets)
    each, every answerable one with its verdict and one vital nugget."""
    for name in ("yesno_heldout.jsonl", "yesno_heldout2.jsonl"):
        rows = run.load(path=run.QUESTIONS.with_name(name))
        assert len({r["id"] for r in rows}) == len(rows) == 36 and {r["kind"] for r in rows} == {"yesno"}
        for story in {r["story"] for r in rows}:
            theirs = [r.get("verdict") for r in rows if r["story"] == story]
            assert [theirs.count(v) for v in ("yes", "no", None)] == [4, 4, 4], (name, story)
        assert all((len(r["nuggets"]) == 1 and r["nuggets"][0]["vital"]) if r["answerable"]
                   else not r["nuggets"] for r in rows)


def test_the_held_out_broad_set_is_well_formed() -> None:
    """54 blind questions, 18 a story, two of each kind but yes/no, 3 a story unanswerable."""
    rows = run.load(path=run.QUESTIONS.with_name("broad_heldout.jsonl"))
    assert len({r["id"] for r in rows}) == len(rows) == 54
    stories, kinds = {r["story"] for r in rows}, {r["kind"] for r in rows}
    assert all(sum(r["kind"] == k for r in rows if r["story"] == s) == 2 for s in stories for k in kinds)
    assert all(sum(not r["answerable"] for r in rows if r["story"] == s) == 3 for s in stories)
    assert all(any(n["vital"] for n in r["nuggets"]) if r["answerable"] else not r["nuggets"] for r in rows)


def test_the_held_out_dates_set_is_well_formed() -> None:
    """24 blind questions naming a year or a month, 12 a story: 8 of the news's own time, 4 of
    another time the articles do not report (unanswerable, no nuggets)."""
    rows = run.load(path=run.QUESTIONS.with_name("dates_heldout.jsonl"))
    assert len({r["id"] for r in rows}) == len(rows) == 24
    for story in {r["story"] for r in rows}:
        assert [r["answerable"] for r in rows if r["story"] == story].count(False) == 4
    assert all(any(n["vital"] for n in r["nuggets"]) if r["answerable"] else not r["nuggets"] for r in rows)
    when = re.compile(r"\b(1[89]|20)\d\d\b|" + "|".join(calendar.month_name[1:]))
    assert all(when.search(r["question"]) for r in rows)


def test_each_vital_nugget_is_placed_at_the_first_stage_that_holds_it() -> None:
    from eval.broad.where import STAGES, stage, tally

    pool = ["Kabul frees 1,500 prisoners first."]
    articles = ["Kabul frees 1,500 prisoners first. Talks wait."]
    assert stage(NUGGET, "1,500 prisoners go first. [1]", pool, articles) == STAGES[0]
    assert stage(NUGGET, "Talks wait. [1]", pool, articles) == STAGES[1]
    assert stage(NUGGET, "Talks wait. [1]", [], articles) == STAGES[2]
    assert stage(NUGGET, "Talks wait. [1]", [], ["Talks wait."]) == STAGES[3]
    counted = tally([{"kind": "list", "where": [STAGES[0], STAGES[1]]}, {"kind": "why", "where": [STAGES[1]]},
                     {"kind": "why"}])  # a refusal: no "where"
    assert counted["all"] == {STAGES[0]: 1, STAGES[1]: 2, STAGES[2]: 0, STAGES[3]: 0}
    assert counted["by_kind"]["why"][STAGES[1]] == 1


@pytest.mark.slow
def test_the_pool_is_the_products_own_draft_of_the_question(real_qa) -> None:  # real_qa: qa.QA
    from eval.broad.where import STAGES, lost

    q = {"question": "How many Taliban prisoners will be released each day?", "nuggets": [
        {"fact": "100 a day", "vital": True, "match": [["100"], ["day", "daily"]]},
        {"fact": "not in them", "vital": True, "match": [["Quorvale"]]},
        {"fact": "okay only", "vital": False, "match": [["Saturday"]]}]}
    assert lost(real_qa, q, "") == [STAGES[1], STAGES[3]]  # drafted into the pool; in no article
    assert lost(real_qa, q, "Every day, 100 Taliban prisoners will be released. [1]")[0] == STAGES[0]


def test_a_question_asked_as_a_request() -> None:
    """`--requests`: the set asked as people ask in a chat."""
    assert run.as_request("List the conditions attached to the prisoner release") == \
        "Could you please list the conditions attached to the prisoner release?"
    assert run.as_request("Why were the talks delayed?") == "OK, Why were the talks delayed?"
