"""Articles holding terminal escape sequences, in every format: indexed as they are (offsets stay
exact), but `qa ask`, `qa search` and `qa chat` never print a control character raw."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import bombs
import docx
import pytest
from click.testing import CliRunner
from conftest import DATA, FakeEmbedder

import qa
from qa.surfaces import cli

# Retitles the terminal (OSC ... BEL), clears it (the C1 CSI), and reverses the text after it.
EVIL = "\x1b]0;pwned\x07 \x9b2J \u202e"
CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
PAD = "The port office counts the boats every week. " * 20
QA_BIN = str(Path(sys.executable).with_name("qa"))
pytestmark = pytest.mark.slow  # every format through its worker process, then the CLI


def _files(folder: Path) -> list[Path]:
    """One article per format, each holding as much of EVIL as the format can carry."""
    xml_safe = EVIL.replace("\x1b", "").replace("\x07", "")  # XML 1.0 has no ESC or BEL
    latin = EVIL.replace("\u202e", "")  # a PDF string of single bytes

    def fact(evil: str) -> str:  # the sentence an answer cites holds the escapes
        return f"The Quorvale harbour handled 73 ferries in March {evil}, its port office said. {PAD}"

    (folder / "evil.txt").write_text(f"Harbour {EVIL}\n\n{fact(EVIL)}\n")
    (folder / "evil.md").write_text(f"---\ntitle: Harbour {EVIL}\n---\n{fact(EVIL)}\n")
    (folder / "evil.html").write_text(f"<html><head><title>Harbour {EVIL}</title></head><body><article>"
                                      f"<h1>Harbour {EVIL}</h1><p>{fact(EVIL)}</p><p>{PAD}</p>"
                                      "</article></body></html>")
    document = docx.Document()
    document.core_properties.title = f"Harbour {xml_safe}"
    document.add_paragraph(fact(xml_safe))
    document.save(folder / "evil.docx")
    bombs._pdf(folder / "evil.pdf", [f"BT /F1 12 Tf 72 720 Td ({fact(latin)}) Tj ET\n".encode("latin-1")])
    (folder / "evil.rss").write_text('<?xml version="1.0"?><rss version="2.0"><channel><title>W</title>'
                                     f"<item><title>Harbour {EVIL}</title><description>&lt;p&gt;"
                                     f"{fact(EVIL)}&lt;/p&gt;</description></item></channel></rss>")
    return sorted(p for p in folder.iterdir() if p.name.startswith("evil."))


@pytest.fixture(scope="module")
def evil_engine(tmp_path_factory: pytest.TempPathFactory) -> qa.QA:
    root = tmp_path_factory.mktemp("evil")
    shutil.copytree(DATA, root / "seeds")
    (root / "files").mkdir()
    engine = qa.QA(qa.Config.of(seeds_dir=root / "seeds", index_dir=root / "index", cache_dir=root / "cache",
                             chunk_size=200, chunk_overlap=40, min_evidence=0.3, reader="spans"),
                   embedder=FakeEmbedder())
    for path in _files(root / "files"):
        engine.add_article(path.name, path.read_bytes())
    return engine


@pytest.fixture
def evil_qa(evil_engine: qa.QA, monkeypatch: pytest.MonkeyPatch) -> qa.QA:
    monkeypatch.setattr(cli, "_engine", lambda ctx: evil_engine)
    return evil_engine


def test_the_escapes_are_indexed_as_written_in_every_format(evil_qa: qa.QA) -> None:
    held = {source for source, a in evil_qa.index.articles.items() if CONTROLS.search(a.text + a.title)}
    # trafilatura drops controls from web pages itself; every other format keeps them in the text.
    assert held == {"evil.txt", "evil.md", "evil.docx", "evil.pdf", "evil.rss#1"}


@pytest.mark.parametrize("args", [["search", "Quorvale harbour ferries", "-k", "10"],
                                  ["ask", "How many ferries did the Quorvale harbour handle in March?"],
                                  ["chat"]])
def test_no_control_character_reaches_the_terminal(evil_qa: qa.QA, args: list[str]) -> None:
    result = CliRunner().invoke(cli.main, args, input="How many ferries did the Quorvale harbour handle?\n\n")
    assert result.exit_code == 0, result.output
    assert "Quorvale" in result.output
    assert not CONTROLS.search(result.output), repr(CONTROLS.findall(result.output))


def test_json_output_escapes_controls_and_loses_nothing(evil_qa: qa.QA) -> None:
    result = CliRunner().invoke(cli.main, ["search", "Quorvale harbour ferries", "-k", "10", "--json"])
    assert result.exit_code == 0 and not CONTROLS.search(result.output)
    passages = json.loads(result.output)
    for p in passages:  # the escapes are JSON escapes: the text comes back exact
        assert evil_qa.index.articles[p["source"]].text[p["start"]:p["end"]] == p["text"]
    assert any("\x1b" in p["text"] for p in passages) and "\\u001b" in result.output


@pytest.mark.slow
def test_a_real_qa_search_prints_no_escape(real_copy: dict[str, str]) -> None:
    fact = f"The Quorvale harbour handled 73 ferries in March {EVIL}, its port office said."
    (Path(real_copy["QA_SEEDS_DIR"]) / "evil.txt").write_text(f"Harbour {EVIL}\n\n{fact} {PAD}\n")
    out = subprocess.run([QA_BIN, "search", "Quorvale harbour ferries", "-k", "3"], env=real_copy,
                         capture_output=True, timeout=600)
    assert out.returncode == 0, out.stderr[-2000:]
    text = out.stdout.decode("utf-8")
    assert "Quorvale" in text and not CONTROLS.search(text + out.stderr.decode("utf-8"))
