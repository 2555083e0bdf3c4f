"""What a new user meets first: paths as strings, running from a subfolder, clear messages."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from conftest import SEEDS
from net import free_port, serving
from reading import FALLBACK, read_by_model

import qa
from qa.config import project_root
from qa.surfaces.cli import main as cli
from qa.text.words import looks_english

ROOT = Path(__file__).resolve().parent.parent
QA_BIN = Path(sys.executable).with_name("qa")
LIGHTHOUSE = ("The Tollby lighthouse\n\nThe lighthouse keeper of Tollby counted 42 fishing boats in the "
              "harbour on Monday. The keeper said the boats came back before the storm.\n")


def test_config_takes_string_paths(tiny_config, fake_embedder):
    config = qa.Config.of(seeds_dir=str(tiny_config.seeds_dir), index_dir=str(tiny_config.index_dir),
                       chunk_size=200, chunk_overlap=40, min_evidence=0.3)
    assert isinstance(config.seeds_dir, Path) and isinstance(config.index_dir, Path)
    engine = qa.QA(config, embedder=fake_embedder)
    assert engine.retrieve("alpha", k=1)[0].source in {p.name for p in tiny_config.seeds_dir.iterdir()}
    with pytest.raises(TypeError, match="seeds_dir must be a str or Path"):
        qa.Config.of(seeds_dir=3)


def test_folders_are_found_from_a_subfolder(tmp_path, monkeypatch):
    (tmp_path / "seeds").mkdir()
    (tmp_path / "docs" / "deep").mkdir(parents=True)
    monkeypatch.delenv("QA_HOME", raising=False)
    monkeypatch.delenv("QA_SEEDS_DIR", raising=False)
    monkeypatch.delenv("QA_INDEX_DIR", raising=False)
    monkeypatch.chdir(tmp_path / "docs" / "deep")
    config = qa.Config.from_env()
    assert (config.seeds_dir, config.index_dir) == (tmp_path / "seeds", tmp_path / "index")
    # A folder the user names stays relative to where they are, as they mean it.
    assert qa.Config.from_env(seeds_dir="mine").seeds_dir == Path("mine")
    monkeypatch.setenv("QA_HOME", str(tmp_path / "docs"))
    assert project_root() == tmp_path / "docs"


def test_search_k_must_be_positive(fake_qa, monkeypatch):
    monkeypatch.setattr("qa.surfaces.cli._engine", lambda ctx: fake_qa)
    for k in ("0", "-3"):
        result = CliRunner().invoke(cli, ["search", "alpha", "-k", k])
        assert result.exit_code == 2 and "Invalid value for '-k'" in result.output
    assert CliRunner().invoke(cli, ["search", "alpha", "-k", "1"]).exit_code == 0


def test_first_use_says_it_exports_the_model(tmp_path, monkeypatch, capsys, onnx_cache):
    made = []
    monkeypatch.setattr("qa.engine.QA", lambda config: made.append(config) or None)
    from qa.surfaces.cli import _engine

    for cache, said in ((tmp_path / "empty-cache", True), (onnx_cache, False)):
        ctx = type("Ctx", (), {"obj": {"config": qa.Config.from_env(cache_dir=cache)}})()
        _engine(ctx)
        assert ("Exporting the embedding model to ONNX" in capsys.readouterr().err) is said
    assert len(made) == 2


@pytest.mark.slow  # app.py in a process of its own
def test_busy_port_is_one_line_and_exit_2():
    with socket.socket() as busy:
        busy.bind(("127.0.0.1", 0))
        busy.listen()
        port = busy.getsockname()[1]
        out = subprocess.run([sys.executable, str(ROOT / "app.py"), "--port", str(port)],
                             capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == f"error: port {port} is in use; set QA_PORT (or --port) to a free one"


@pytest.mark.slow  # app.py in a process of its own
def test_an_address_not_of_this_machine_is_one_line_and_exit_2():
    # 192.0.2.1 is reserved for documentation (RFC 5737): no machine has it, so no user may listen
    # there, root or not; the error is not "in use" but says which setting to change.
    port = free_port()
    out = subprocess.run([sys.executable, str(ROOT / "app.py"), "--host", "192.0.2.1", "--port", str(port)],
                         capture_output=True, text=True, timeout=60)
    assert out.returncode == 2
    assert out.stderr.strip() == (f"error: cannot listen on 192.0.2.1:{port} (Cannot assign requested "
                                  "address); set QA_HOST and QA_PORT")


def test_looks_english():
    assert looks_english("How many Taliban prisoners will be released each day?")
    assert looks_english("Suhail Shaheen Reuters")
    for question in ("¿Cuántos prisioneros talibanes serán liberados cada día?",
                     "Wie viele Gefangene werden täglich freigelassen?", "塔利班每天释放多少囚犯？",
                     "Сколько заключённых освободят каждый день?"):
        assert not looks_english(question), question


def test_chat_indexes_an_article_dropped_into_the_folder(fake_qa):
    from gradio_client import Client

    question = "How many fishing boats did the Tollby lighthouse keeper count?"
    fake_qa.build()
    with serving(fake_qa) as url:
        client = Client(url, verbose=False)
        before = client.predict(question, api_name="/ask")
        assert "lighthouse.txt" not in {c["source"] for c in before["citations"]}
        (fake_qa.config.seeds_dir / "lighthouse.txt").write_text(LIGHTHOUSE, "utf-8")
        after = client.predict(question, api_name="/ask")
        assert after["answered"] and after["citations"][0]["source"] == "lighthouse.txt"
        assert "42 fishing boats" in after["citations"][0]["text"]
        (fake_qa.config.seeds_dir / "lighthouse.txt").unlink()
        gone = client.predict(question, api_name="/ask")
        assert "lighthouse.txt" not in {c["source"] for c in gone["citations"]}


@pytest.mark.slow
def test_cli_from_a_subfolder_shows_warnings_without_library_noise(tmp_path, model_cache):
    project = tmp_path / "project"
    shutil.copytree(SEEDS, project / "seeds")
    (project / "seeds" / "empty.txt").write_bytes(b"")
    (project / "notes").mkdir()
    env = {**os.environ, "HF_HUB_OFFLINE": "1"}
    for key in ("QA_HOME", "QA_SEEDS_DIR", "QA_INDEX_DIR"):
        env.pop(key, None)
    build = subprocess.run([str(QA_BIN), "build"], cwd=project / "notes", env=env, capture_output=True,
                           text=True, timeout=600)
    assert build.returncode == 0, build.stderr
    assert "empty.txt: empty article, skipped" in build.stderr  # seen without -v
    assert (project / "index" / "CURRENT").exists()
    ask = subprocess.run([str(QA_BIN), "-v", "ask", "How many Taliban prisoners will be released each day?"],
                         cwd=project / "notes", env=env, capture_output=True, text=True, timeout=600)
    assert ask.returncode == 0, ask.stderr
    assert "100" in ask.stdout.split("Sources:")[0]
    assert "; read by " in ask.stdout and FALLBACK not in ask.stdout  # the model read it
    assert "AVX512" not in ask.stderr and "faiss" not in ask.stderr


@pytest.mark.slow
def test_a_question_in_another_language_is_told_so(real_qa):
    answer = real_qa.answer("¿Cuántos prisioneros talibanes serán liberados cada día?")
    assert not answer.answered and answer.text == "The question is not in English."
    assert answer.notice_code == "not_english" and "ask in English" in (answer.notice or "")
    english = real_qa.answer("How many Taliban prisoners will be released each day?")
    assert english.answered
    read_by_model(english)


def test_a_date_range_with_no_dated_article_says_so(fake_qa):
    with pytest.raises(ValueError, match="no article is dated from 2020-01-01"):
        fake_qa.retrieve("alpha", k=1, since="2020-01-01")
    assert fake_qa.retrieve("alpha", k=1)  # undated articles are read when no date is given


def test_a_question_in_another_language_is_not_headed_as_uncovered(fake_qa):
    from qa.surfaces.web.render import answer_html

    # Its names match the articles well: it is still told to ask in English, not that they don't cover it.
    answer = fake_qa.answer("¿Qué dijo la alcaldesa Jane Porter sobre la biblioteca y sus 80,000 libros?")
    assert not answer.answered and answer.text == "The question is not in English." != qa.NOT_COVERED
    assert "English" in (answer.notice or "")
    html = answer_html(fake_qa, answer)
    assert "⚠ The question is not in English." in html and "don&#x27;t cover" not in html
