"""The broad set's scoring (eval/broad): nuggets found in an answer's words, sentences shown without
a citation, and the set's figures, on answers written out here."""

from __future__ import annotations

import json

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
