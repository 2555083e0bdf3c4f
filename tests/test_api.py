"""The module-level API, qa.retrieve and qa.answer, as the README's first Python block uses it:
one process-wide engine configured from QA_* variables, the real model over the seeds."""

from __future__ import annotations

import contextlib
import io
import re
import shutil
import threading
from pathlib import Path

import pytest
from reading import read_by_model

import qa
import qa.api

ROOT = Path(__file__).resolve().parent.parent
DATED = {"march.md": "---\ntitle: Releases begin\ndate: 2020-03-11\n---\n"
                     "Kandahar officials release 100 Zarghun prisoners a day, the governor said.\n",
         "april.md": "---\ntitle: Releases speed up\ndate: 2020-04-20\n---\n"
                     "Kandahar officials release 300 Zarghun prisoners a day, the governor said.\n"}


def readme_python() -> str:
    """The README's first Python block, as a reader would paste it."""
    return re.search(r"```python\n(.*?)```", (ROOT / "README.md").read_text("utf-8"), re.S).group(1)


@pytest.fixture
def default_engine(real_qa: qa.QA, model_cache: Path, tmp_path: Path,
                   monkeypatch: pytest.MonkeyPatch) -> Path:
    """QA_SEEDS_DIR and QA_INDEX_DIR at copies of the real seeds and index; no default engine yet."""
    shutil.copytree(real_qa.config.seeds_dir, tmp_path / "seeds")
    shutil.copytree(real_qa.config.index_dir, tmp_path / "index", symlinks=True)
    monkeypatch.setenv("QA_SEEDS_DIR", str(tmp_path / "seeds"))
    monkeypatch.setenv("QA_INDEX_DIR", str(tmp_path / "index"))
    monkeypatch.setattr(qa.api, "_default", None)  # put back after the test, as it was
    return tmp_path


def test_the_readme_python_block_runs_as_written(default_engine: Path) -> None:
    out = io.StringIO()
    scope: dict[str, object] = {}
    with contextlib.redirect_stdout(out):
        exec(compile(readme_python(), "README.md", "exec"), scope)  # the README's own code
    passages, answer, follow = scope["passages"], scope["answer"], scope["follow"]
    assert scope["recent"] and {p.date for p in scope["recent"]} == {"2020-03-11"}  # type: ignore[attr-defined]
    engine = qa.default_qa()
    assert engine.config.seeds_dir == default_engine / "seeds"  # the engine the variables describe
    assert len(passages) == 5 and all(isinstance(p, qa.Passage) for p in passages)  # type: ignore[union-attr]
    for p in [*passages, *answer.citations, *follow.citations]:  # type: ignore[union-attr]
        assert engine.index.articles[p.source].text[p.start:p.end] == p.text
    assert any("Every day, 100 Taliban prisoners will be released." in p.text for p in passages)  # type: ignore[union-attr]
    read_by_model(answer)
    read_by_model(follow)
    assert answer.answered and answer.short == "Suhail Shaheen"  # type: ignore[union-attr]
    assert "Shaheen" in follow.query and follow.answered  # type: ignore[union-attr]
    printed = out.getvalue()
    assert f"Suhail Shaheen {answer.short_span.source} {answer.short_span.start}" in printed  # type: ignore[union-attr]
    assert f"1 {answer.citations[0].source} {answer.citations[0].start}" in printed  # type: ignore[union-attr]


def test_one_engine_serves_every_call_and_threads(default_engine: Path) -> None:
    engines: list[qa.QA] = []
    threads = [threading.Thread(target=lambda: engines.append(qa.default_qa())) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(60)
    assert len(engines) == 4 and len({id(e) for e in engines}) == 1  # made once, under the lock
    question = "How many Taliban prisoners will be released each day?"
    assert qa.retrieve(question, k=3) == engines[0].retrieve(question, k=3)
    mine, theirs = qa.answer(question), engines[0].answer(question)
    read_by_model(mine)
    read_by_model(theirs)
    # The same answer from the same engine (the reader's confidence may differ in its last digits).
    assert (mine.text, mine.citations, mine.short) == (theirs.text, theirs.citations, theirs.short)
    assert qa.retrieve(question, k=2, mode="bm25") == engines[0].retrieve(question, k=2, mode="bm25")


def test_dates_and_their_errors(default_engine: Path) -> None:
    seeds = {p.source for p in qa.retrieve("prisoner release", since="2020-03-10", until="2020-03-31")}
    assert seeds and seeds <= set(qa.default_qa().index.articles)  # the seeds are dated 11 Mar 2020
    with pytest.raises(ValueError, match="no article is dated from 2020-03-12 and until 2020-03-31"):
        qa.retrieve("prisoner release", since="2020-03-12", until="2020-03-31")
    for name, text in DATED.items():
        (default_engine / "seeds" / name).write_text(text)
    qa.api._default = None  # a new engine sees the folder as it is now
    question = "How many Zarghun prisoners do Kandahar officials release a day?"
    assert {p.source for p in qa.retrieve(question, since="2020-03-11", until="2020-03-31")} >= {"march.md"}
    assert "april.md" not in {p.source for p in qa.retrieve(question, since="2020-03-01", until="2020-03-31")}
    assert {p.source for p in qa.retrieve(question, since="2020-04-01")} == {"april.md"}
    with pytest.raises(ValueError, match="is not a date"):
        qa.retrieve(question, since="March")
    with pytest.raises(ValueError, match="empty"):
        qa.answer("   ")
