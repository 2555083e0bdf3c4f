"""With the real models and index: a question naming the year or month of the news it asks about is
answered from articles of that date, which never write their own year (coverage.article_dates), and
one naming another year is refused."""

from __future__ import annotations

from pathlib import Path

import pytest

import qa

pytestmark = pytest.mark.slow
FLOOD = ("---\ntitle: Floods close the valley park\ndate: 2022-06-14\n---\n"
         "Record floodwaters closed Green Valley National Park on Monday, washing out roads and bridges "
         "and stranding hundreds of visitors near the north gate. "
         "Park officials said the northern loop would stay closed for weeks while crews rebuilt the roads. "
         "Helicopters lifted 87 people from campgrounds along the river, the county sheriff said.\n")


@pytest.fixture(scope="module")
def flood(real_qa: qa.QA, tmp_path_factory: pytest.TempPathFactory) -> qa.QA:
    root: Path = tmp_path_factory.mktemp("flood")
    (root / "seeds").mkdir()
    (root / "seeds" / "flood.md").write_text(FLOOD, "utf-8")
    engine = qa.QA(real_qa.config.replace(seeds_dir=root / "seeds", index_dir=root / "index"))
    engine.build()
    return engine


@pytest.mark.parametrize("question", ["What happened at Green Valley National Park in June 2022?",
                                      "Tell me about the 2022 floods at Green Valley National Park"])
def test_the_year_of_the_news_is_covered_by_its_articles_date(flood: qa.QA, question: str) -> None:
    answer = flood.answer(question)
    assert answer.answered, answer.text
    assert "floodwaters" in answer.text.lower() and "[1]" in answer.text, answer.text


def test_another_year_is_not(flood: qa.QA) -> None:
    answer = flood.answer("What happened at Green Valley National Park in June 2019?")
    assert not answer.answered and "2019" in (answer.notice or ""), (answer.notice, answer.text)
