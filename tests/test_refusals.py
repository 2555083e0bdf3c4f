"""Refusals and the settings that shape an answer, over small articles with the fake embedder:
a count, sum or share no retrieved sentence holds; QA_MIN_SHORT; QA_MAX_QUESTION_CHARS."""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import pytest
from conftest import DATA, FakeEmbedder

import qa

MUSEUM = ("Museum Plans Divide The Council\n\nThe council debated the new museum plans for the riverside "
          "site. Residents praised the design of the new museum and its garden. The architect showed the "
          "new museum drawings to the council and the residents.\n")
FIGURES = ("Museum Figures Published\n\nThe new museum will draw 5,000 visitors a year, the council said. "
           "The new museum will cost 30 million dollars. About 60 percent of residents support the new "
           "museum, a survey found.\n")
ASKED = [  # (question, what the refusal says no sentence holds, the figure once one does)
    ("How many visitors will the new museum draw?", "a number", "5,000"),
    ("How much will the new museum cost?", "a sum of money", "30 million dollars"),
    ("What percentage of residents support the new museum?", "a percentage", "60 percent"),
]


def _engine(tmp_path: Path, *articles: str, **settings: object) -> qa.QA:
    seeds = tmp_path / "seeds"
    seeds.mkdir(parents=True)
    for n, text in enumerate(articles):
        (seeds / f"museum_{n}.txt").write_text(text)
    config = qa.Config.of(seeds_dir=seeds, index_dir=tmp_path / "index", min_evidence=0.3, reader="spans",
                       **settings)
    return qa.QA(config, embedder=FakeEmbedder())


@pytest.mark.parametrize(("question", "kind", "figure"), ASKED)
def test_a_count_sum_or_share_no_sentence_holds_is_refused(tmp_path: Path, question: str, kind: str,
                                                           figure: str) -> None:
    answer = _engine(tmp_path / "without", MUSEUM).answer(question)
    # Refused for the kind, not for weak evidence: the sentences match the question well.
    assert answer.evidence >= 0.3 and not answer.answered and answer.text == qa.NOT_COVERED
    assert answer.notice_code == "no_figure" and answer.citations == ()
    assert answer.notice == f"The articles touch on this, but none of them gives {kind}."
    assert answer.passages  # the closest passages are still shown
    # The same question over the same articles plus one sentence holding the figure is answered.
    answered = _engine(tmp_path / "with", MUSEUM, FIGURES).answer(question)
    assert answered.answered and answered.notice is None
    assert figure in answered.citations[0].text


def test_min_short_hides_the_short_answer_but_not_the_answer(tiny_config: qa.Config,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    question = "How many cars cross the bridge every day?"
    paths = {"seeds_dir": tiny_config.seeds_dir, "index_dir": tiny_config.index_dir, "min_evidence": 0.3,
             "chunk_size": 200, "chunk_overlap": 40, "reader": "spans"}
    shown = qa.QA(qa.Config.from_env(**paths), embedder=FakeEmbedder()).answer(question)
    assert shown.short == "40,000" and shown.short_span is not None
    monkeypatch.setenv("QA_MIN_SHORT", str(shown.confidence + 0.01))  # just over this answer's confidence
    hidden = qa.QA(qa.Config.from_env(**paths), embedder=FakeEmbedder()).answer(question)
    assert hidden.answered and hidden.text == shown.text and hidden.citations == shown.citations
    assert hidden.short is None and hidden.short_span is None
    assert hidden.confidence == shown.confidence  # the reader still read it; it is only not shown


def test_max_question_chars_cuts_the_question(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                              caplog: pytest.LogCaptureFixture) -> None:
    shutil.copytree(DATA, tmp_path / "seeds")
    question = "How many cars cross the bridge every day?"
    long = question + " Also, the library and the storm, the schools and the coast." * 3
    monkeypatch.setenv("QA_MAX_QUESTION_CHARS", str(len(question)))
    config = qa.Config.from_env(seeds_dir=tmp_path / "seeds", index_dir=tmp_path / "index", min_evidence=0.3,
                                chunk_size=200, chunk_overlap=40, reader="spans")
    assert config.retrieval.max_question_chars == len(question)
    engine = qa.QA(config, embedder=FakeEmbedder())
    with caplog.at_level(logging.WARNING, logger="qa"):
        answer = engine.answer(long)
    assert answer.question == question and answer.query == question
    assert f"question of {len(long)} characters cut to {len(question)}" in caplog.text
    assert answer.answered and "40,000" in answer.citations[0].text
    assert engine.retrieve(long, k=2) == engine.retrieve(question, k=2)
