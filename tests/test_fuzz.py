"""Hypothesis fuzzing: any question through qa.answer, the CLI and /ask; any bytes as an upload."""

from __future__ import annotations

import itertools
import json
import logging
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import EMPTY
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from net import serving
from reading import no_fallback

import qa
from qa.surfaces.cli import main

pytestmark = [pytest.mark.slow, pytest.mark.timeout(3600)]  # up to 30 questions read by the model
SEEDS = Path(__file__).parent.parent / "seeds"
# EMPTY is the only refusal a question of any text may get: anything else (a crash, a generic
# error, an exception of another type) fails the test.
# A question holding a digit, asked every run whatever Hypothesis draws.
DIGITS = "How many Taliban prisoners will be released on 10 March 2020?"


def fuzz(examples: int) -> settings:
    """Fixed-seed runs (the same inputs in CI every time), no per-example deadline."""
    return settings(max_examples=examples, deadline=None, suppress_health_check=list(HealthCheck),
                    derandomize=True, database=None)

# Every Unicode category, lone surrogates included (a shell passes undecodable argv bytes as
# surrogates), control characters, and long repeats up to 20,000 characters.
CATEGORIES = ["Lu", "Ll", "Lt", "Lm", "Lo", "Mn", "Mc", "Me", "Nd", "Nl", "No", "Pc", "Pd", "Ps", "Pe", "Pi",
              "Pf", "Po", "Sm", "Sc", "Sk", "So", "Zs", "Zl", "Zp", "Cc", "Cf", "Cs", "Co", "Cn"]
ANY_CHAR = st.characters(categories=CATEGORIES)
# st.text almost never draws a surrogate from a mixed alphabet: mix them in character by character.
RARE = st.lists(st.one_of(st.characters(categories=["Cs", "Cc", "Cf", "Co"]), ANY_CHAR),
                max_size=80).map("".join)
JSON_CHAR = st.characters(exclude_categories=("Cs",))  # JSON cannot carry a lone surrogate


def questions(chars: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
    repeated = st.tuples(st.text(chars, min_size=1, max_size=12), st.integers(1, 2000)).map(
        lambda t: (t[0] * t[1])[:20_000])
    topical = st.tuples(st.sampled_from(["How many Taliban prisoners", "Who is the spokesman", "When"]),
                        st.text(chars, max_size=40)).map(" ".join)
    rare = [RARE] if chars is ANY_CHAR else []
    return st.one_of(st.text(chars, max_size=200), repeated, topical, *rare)


def _exact(index, passages: list) -> None:  # qa.index.Index
    for p in passages:
        source, start, end, text = (p["source"], p["start"], p["end"], p["text"]) if isinstance(p, dict) \
            else (p.source, p.start, p.end, p.text)
        assert index.articles[source].text[start:end] == text


@fuzz(30)
@given(question=questions(ANY_CHAR))
@example(question=DIGITS)
def test_any_question_through_answer(real_qa: qa.QA, question: str) -> None:
    try:
        answer = real_qa.answer(question)
    except qa.BadInput as exc:  # a QAError and a ValueError; any other exception fails
        assert str(exc) == EMPTY, repr(exc)
        return
    no_fallback(answer)
    _exact(real_qa.index, [*answer.citations, *answer.passages])
    json.dumps(answer.to_dict())


@fuzz(20)
@given(question=questions(ANY_CHAR))
@example(question=DIGITS)
def test_any_question_through_the_cli(real_qa: qa.QA, question: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr("qa.surfaces.cli._engine", lambda ctx: real_qa)
    for args in (["ask", "--json", "--", question], ["ask", "--", question], ["search", "--", question]):
        result = CliRunner().invoke(main, args)
        assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
        if result.exit_code == 2:
            assert result.stderr == f"Error: {EMPTY}\n", result.stderr  # the one refusal there is
            continue
        assert result.exit_code == 0, result.output
        assert "Traceback" not in result.stderr, result.stderr
        if args[1] == "--json":
            answer = json.loads(result.stdout)
            no_fallback(answer)
            _exact(real_qa.index, [*answer["citations"], *answer["passages"]])


class Logged(logging.Handler):
    """Every record the server's loggers write at WARNING or above."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.records.append(record)


@pytest.fixture(scope="module")
def api(real_qa: qa.QA) -> Iterator[tuple]:
    from gradio_client import Client

    logged = Logged()
    logging.getLogger().addHandler(logged)
    engine = qa.QA(real_qa.config.replace(rate=0), embedder=real_qa.embedder)
    try:
        with serving(engine) as url:
            yield Client(url, verbose=False), engine, logged
    finally:
        logging.getLogger().removeHandler(logged)


@fuzz(15)
@given(question=questions(JSON_CHAR), history=st.lists(st.text(JSON_CHAR, max_size=50), max_size=3))
@example(question=DIGITS, history=[])
@example(question="Which agency did he speak to?", history=["Who is the Taliban's spokesman in 2020?"])
def test_any_question_through_the_api(api: tuple, question: str, history: list[str],
                                      capfd: pytest.CaptureFixture[str]) -> None:
    from gradio_client.exceptions import AppError

    client, engine, logged = api
    logged.records.clear()
    try:
        answer = client.predict(question, history, api_name="/ask")
    except AppError as exc:  # our gr.Error, and only the refusal a question of any text may get
        assert exc.message == EMPTY, repr(exc)
    else:
        no_fallback(answer)
        _exact(engine.index, [*answer["citations"], *answer["passages"]])
    # Nothing failed inside the server: no "/ask failed" line, no traceback in its log or on stderr.
    assert not [r.getMessage() for r in logged.records if r.levelno >= logging.ERROR]
    assert "Traceback" not in capfd.readouterr().err


TEXTY = st.text(st.characters(categories=("L", "N", "P", "Zs", "S")), min_size=1, max_size=2000)
UPLOADS = st.one_of(
    st.binary(max_size=3000),
    st.text(ANY_CHAR, max_size=2000).map(lambda t: t.encode("utf-8", "surrogatepass")),
    TEXTY.map(str.encode),
    st.tuples(TEXTY, st.sampled_from(["\r\n", "\n", "\ufeff", "\x00", "\u2028"])).map(
        lambda t: (t[1] + t[0].replace(" ", t[1] + " ")).encode()),
)


@pytest.fixture(scope="module")
def uploader(real_qa: qa.QA, tmp_path_factory: pytest.TempPathFactory) -> qa.QA:
    """The real embedder and index over a copy of the seeds; its answers read by the span reader (what
    is fuzzed here is the upload: the language model reads any question in the tests above)."""
    root = tmp_path_factory.mktemp("fuzz-upload")
    shutil.copytree(SEEDS, root / "seeds")
    engine = qa.QA(real_qa.config.replace(seeds_dir=root / "seeds", index_dir=root / "index", reader="spans"),
                   embedder=real_qa.embedder)
    engine.build()
    return engine


_names = itertools.count()
# The refusals any bytes uploaded as a .txt file may get; any other exception or message fails.
REFUSED = re.compile(r"fuzz_\d+\.txt: (the file is empty; add some text|the file has no words; add some text"
                     r"|not a text file \((it holds NUL bytes|\d+ control characters)\);"
                     r" upload plain UTF-8 text"
                     r"|not valid UTF-8 \(byte \d+\); re-save the file as UTF-8 text)")


@fuzz(20)
@given(data=UPLOADS)
def test_any_bytes_as_an_upload(uploader: qa.QA, data: bytes) -> None:
    name = f"fuzz_{next(_names)}.txt"
    before = sorted(os.listdir(uploader.config.seeds_dir))
    try:
        uploader.add_article(name, data)
    except qa.ArticleError as exc:
        assert REFUSED.fullmatch(str(exc)), repr(exc)
        assert sorted(os.listdir(uploader.config.seeds_dir)) == before
        assert name not in uploader.index.articles
        return
    assert (uploader.config.seeds_dir / name).read_bytes() == data
    article = uploader.index.articles[name]
    chunks = [c for c in uploader.index.chunks if c.source == name]
    assert chunks and all(article.text[c.start:c.end] == c.text for c in chunks)
    answer = uploader.answer(article.text[:200])
    no_fallback(answer)
    _exact(uploader.index, [*answer.citations, *answer.passages])
