"""The reading stage with the real spaCy pipeline, the real model and the real index over the seeds."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner
from reading import no_fallback, read_by_model

from qa import QA, IndexProblem
from qa.index.annotations import FILE
from qa.index.load import current_path, load_index
from qa.surfaces.cli import main
from qa.text.nlp import Tagger

pytestmark = pytest.mark.slow


def test_which_agency_reads_the_organisation(real_qa: QA) -> None:
    answer = real_qa.answer("Which agency reported Shaheen's phone remarks?")
    read_by_model(answer)
    assert answer.answered and answer.short == "Reuters"
    assert answer.citations[0].text.find("Reuters") >= 0  # the short answer is inside citation [1]


@pytest.mark.parametrize("question", ["How many prisoners did Iran free in 2019?",
                                      "How many Taliban fighters were killed in Helmand?"])
def test_near_misses_are_not_covered(real_qa: QA, question: str) -> None:
    answer = real_qa.answer(question)
    no_fallback(answer)
    assert not answer.answered and answer.short is None and answer.citations == ()
    assert answer.passages  # the closest passages are still shown


def test_missing_name_is_said(real_qa: QA) -> None:
    answer = real_qa.answer("How many prisoners did Iran free in 2019?")
    no_fallback(answer)
    assert answer.notice is not None and "Iran" in answer.notice


@pytest.mark.parametrize(("question", "short"), [
    ("Who is the Taliban's spokesman?", "Suhail Shaheen"),
    ("How many Taliban prisoners will be released each day?", "100"),
    ("Who is the US negotiator who welcomed the decree?", "Zalmay Khalilzad"),
])
def test_short_span_offsets_are_exact_and_inside_the_first_citation(real_qa: QA, question: str,
                                                                     short: str) -> None:
    answer = real_qa.answer(question)
    read_by_model(answer)
    span = answer.short_span
    assert answer.answered and span is not None and answer.short == short
    article = real_qa.index.articles[span.source].text
    assert article[span.start:span.end] == span.text == answer.short
    first = answer.citations[0]
    assert first.source == span.source and first.start <= span.start and span.end <= first.end
    assert real_qa.config.reading.min_short <= span.score == answer.confidence <= 1.0


@pytest.fixture(scope="module")
def spans_qa(real_qa: QA) -> QA:
    """real_qa's index read by the span reader (QA_READER=spans)."""
    return QA(real_qa.config.replace(reader="spans"))


@pytest.mark.parametrize(("question", "cited"), [
    # The agency is in the next sentence ("Kugelman told AFP"), not in the one cited.
    ("Which news agency did the Wilson Center analyst speak to?", "Michael Kugelman from the Wilson Center"),
    ("On which day did the American troop drawdown get under way?", "drawdown began on Monday"),
])
def test_an_unsure_span_reader_cites_the_sentence_and_shows_no_short_answer(spans_qa: QA, question: str,
                                                                            cited: str) -> None:
    answer = spans_qa.answer(question)
    assert answer.reader == "spans" and answer.answered and cited in answer.citations[0].text
    # Below QA_MIN_SHORT the span reader's best span is not shown, whatever it is.
    assert answer.confidence < spans_qa.config.reading.min_short
    assert answer.short is None and answer.short_span is None


def test_changing_one_article_retags_only_it(real_qa: QA, tmp_path: Path) -> None:
    seeds = tmp_path / "seeds"
    shutil.copytree(real_qa.config.seeds_dir, seeds)

    class Counting(Tagger):
        def __init__(self) -> None:
            super().__init__(real_qa.config.indexing.nlp)
            self.texts: list[str] = []

        def tag(self, texts, sentences, batch_size=32, progress=False):  # type: ignore[no-untyped-def]
            self.texts += list(texts)
            return super().tag(texts, sentences, batch_size, progress)

    tagger = Counting()
    engine = QA(real_qa.config.replace(seeds_dir=seeds, index_dir=tmp_path / "index"),
                embedder=real_qa.embedder, tagger=tagger)
    engine.build()
    assert len(tagger.texts) == 4
    before = dict(engine.index.annotations.articles)
    changed = seeds / "003_38bf3e2f376467a6.txt"
    changed.write_text(changed.read_text() + "\nThe talks were moved to Oslo by Jonas Gahr Store.\n")
    tagger.texts.clear()
    engine.build()
    assert tagger.texts == [engine.index.articles[changed.name].text]  # its text, front matter left out
    assert engine.index.articles[changed.name].text.endswith("Jonas Gahr Store.\n")
    after = engine.index.annotations.articles
    assert all(after[s] == before[s] for s in before if not s.startswith("003_"))
    assert any(engine.index.articles[changed.name].text[a:b] == "Oslo" for a, b, *_ in after[changed.name])


@pytest.mark.parametrize("damage", ["corrupt", "missing"])
def test_damaged_annotations_are_caught(real_qa: QA, tmp_path: Path, damage: str) -> None:
    index_dir = tmp_path / "index"
    shutil.copytree(real_qa.config.index_dir, index_dir, symlinks=True)
    path = current_path(index_dir) / FILE
    if damage == "corrupt":
        data = json.loads(path.read_text())
        data["articles"][next(iter(data["articles"]))][0][0] += 1
        path.write_text(json.dumps(data))
    else:
        path.unlink()
    with pytest.raises(IndexProblem, match=r"annotations\.json is missing or corrupt: run `qa build"):
        load_index(index_dir)


def test_missing_pipeline_package_is_one_clear_line(real_qa: QA, monkeypatch: pytest.MonkeyPatch,
                                                    model_cache: Path) -> None:
    monkeypatch.setenv("QA_SEEDS_DIR", str(real_qa.config.seeds_dir))
    monkeypatch.setenv("QA_INDEX_DIR", str(real_qa.config.index_dir.parent / "other-index"))
    monkeypatch.setenv("QA_NLP", "en_core_web_trf")  # a pipeline this machine does not have
    result = CliRunner().invoke(main, ["build"])
    assert result.exit_code == 2
    lines = result.output.strip().splitlines()
    assert len(lines) == 1 and "en_core_web_trf" in lines[0] and "pip install" in lines[0]
    assert "Traceback" not in result.output
