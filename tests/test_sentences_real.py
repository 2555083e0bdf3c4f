"""With the real models and index: a sentence the splitter would cut after an abbreviation ("p.m.",
"D-Ore.") is cited whole, never as the fragment after the cut."""

from __future__ import annotations

from pathlib import Path

import pytest
from reading import read_by_model

import qa

pytestmark = pytest.mark.slow
LAUNCH = ("---\ntitle: Rocket launch set\ndate: 2025-03-10\n---\n"
          "The Orion rocket is scheduled to lift off at 7:48 p.m. ET on Wednesday from Launch Complex 39A, "
          "the space agency said. Sen. Jane Roe, D-Ore., said the launch would bring 300 jobs to the coast. "
          "Crews fuelled the rocket on Monday.\n")


@pytest.fixture(scope="module")
def launch(real_qa: qa.QA, tmp_path_factory: pytest.TempPathFactory) -> qa.QA:
    root: Path = tmp_path_factory.mktemp("launch")
    (root / "seeds").mkdir()
    (root / "seeds" / "launch.md").write_text(LAUNCH, "utf-8")
    engine = qa.QA(real_qa.config.replace(seeds_dir=root / "seeds", index_dir=root / "index"))
    engine.build()
    return engine


@pytest.mark.parametrize("question, whole", [
    ("When is the Orion rocket scheduled to lift off?",
     "The Orion rocket is scheduled to lift off at 7:48 p.m. ET on Wednesday from Launch Complex 39A, "
     "the space agency said."),
    ("How many jobs would the launch bring to the coast?",
     "Sen. Jane Roe, D-Ore., said the launch would bring 300 jobs to the coast."),
])
def test_a_sentence_with_an_abbreviation_is_cited_whole(launch: qa.QA, question: str, whole: str) -> None:
    answer = launch.answer(question)
    read_by_model(answer)
    assert answer.answered, answer.text
    assert answer.citations[0].text == whole, answer.text
    article = launch.index.articles["launch.md"].text
    assert article[answer.citations[0].start:answer.citations[0].end] == whole
