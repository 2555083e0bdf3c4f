"""The documented command-line options, through the real CLI with the fake embedder:
`qa build --force`, `qa search --mode`, `qa add FOLDER`, and the chat's GRADIO_SERVER_PORT."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import FakeEmbedder
from net import free_port

import app
import qa
from qa.surfaces.cli import main


@pytest.fixture
def embedder(monkeypatch: pytest.MonkeyPatch) -> FakeEmbedder:
    """The fake embedder in every engine the CLI makes (it makes its own QA from its options), with
    the tiny articles' settings."""
    for key, value in {"QA_MODEL": FakeEmbedder.name, "QA_CHUNK_SIZE": "200", "QA_CHUNK_OVERLAP": "40",
                       "QA_MIN_EVIDENCE": "0.3", "QA_READER": "spans"}.items():
        monkeypatch.setenv(key, value)
    shared = FakeEmbedder()
    original = qa.QA.__init__

    def init(self: qa.QA, config: qa.Config | None = None, embedder: object = None,
             tagger: object = None) -> None:
        original(self, config, embedder=shared, tagger=tagger)  # type: ignore[arg-type]

    monkeypatch.setattr("qa.engine.qa.QA.__init__", init)
    return shared


def _cli(config: qa.Config, *args: str) -> Result:
    folders = ["--seeds", str(config.seeds_dir), "--index", str(config.index_dir)]
    return CliRunner().invoke(main, [*folders, *args])


def test_build_force_embeds_every_article_again(tiny_config: qa.Config, embedder: FakeEmbedder) -> None:
    first = _cli(tiny_config, "build")
    assert first.exit_code == 0 and "3 added" in first.output, first.output
    once = embedder.embedded
    again = _cli(tiny_config, "build")
    assert again.output.strip() == "Index is up to date (3 articles)." and embedder.embedded == once
    forced = _cli(tiny_config, "build", "--force")
    assert forced.exit_code == 0, forced.output
    assert "3 added, 0 changed, 0 removed, 0 unchanged" in forced.output
    assert embedder.embedded == 2 * once  # every chunk and sentence embedded again, none reused


def test_search_mode_picks_the_retriever(tiny_config: qa.Config, embedder: FakeEmbedder) -> None:
    question = "Who will build the new library near the station?"
    engine = qa.QA(tiny_config)
    engine.build()
    seen = {}
    for mode in ("hybrid", "dense", "bm25"):
        out = _cli(tiny_config, "search", question, "-k", "3", "--mode", mode, "--json")
        assert out.exit_code == 0, out.output
        seen[mode] = [(p["source"], p["start"], p["end"], p["score"]) for p in json.loads(out.output)]
        want = engine.retrieve(question, k=3, mode=mode)  # type: ignore[arg-type]
        assert seen[mode] == [(p.source, p.start, p.end, p.score) for p in want]
    # Three retrievers score differently (fused ranks, cosines, BM25): the option is not ignored.
    assert len({tuple(s for *_, s in rows) for rows in seen.values()}) == 3
    bad = _cli(tiny_config, "search", question, "--mode", "fuzzy")
    assert bad.exit_code == 2 and "Invalid value for '--mode'" in bad.output


def test_add_a_folder_adds_its_articles_and_refuses_the_rest(tiny_config: qa.Config, embedder: FakeEmbedder,
                                                            tmp_path: Path) -> None:
    folder = tmp_path / "wire"
    (folder / "more").mkdir(parents=True)
    (folder / "ferry.txt").write_text("Ferry Report\n\nThe Tollby ferry carried 412 passengers on Sunday.\n")
    (folder / "more" / "harbour.md").write_text("# Harbour Notes\n\nThe Tollby harbour handled 73 ferries.\n")
    (folder / "photo.jpg").write_bytes(b"\xff\xd8\xff\xe0 not an article")
    (folder / ".draft.txt").write_text("Draft\n\nNot ready: hidden files are left out.\n")
    assert _cli(tiny_config, "build").exit_code == 0
    out = _cli(tiny_config, "add", str(folder))
    assert out.exit_code == 2
    assert "Added 2 article(s) from 2 file(s); 1 refused." in out.output
    assert [line for line in out.output.splitlines() if line.startswith("Refused")] == [
        "Refused: photo.jpg: unknown format; articles can be "
        ".txt, .md, .html, .htm, .pdf, .docx, .xml, .rss, .atom"]
    seeds = sorted(p.name for p in tiny_config.seeds_dir.iterdir())
    assert seeds == ["alpha.txt", "beta.txt", "ferry.txt", "gamma.md", "harbour.md"]
    engine = qa.QA(tiny_config)
    assert {"ferry.txt", "harbour.md"} <= set(engine.index.articles)
    assert engine.answer("How many passengers did the Tollby ferry carry?").citations[0].source == "ferry.txt"


def test_the_chat_listens_on_gradio_server_port(monkeypatch: pytest.MonkeyPatch, fake_qa: qa.QA) -> None:
    launched: list[tuple[str, int]] = []
    monkeypatch.setattr(app, "launch", lambda demo, config, host, port: launched.append((host, port)))
    monkeypatch.setattr(app.qa, "QA", lambda config: fake_qa)
    monkeypatch.setattr("sys.argv", ["app.py"])
    for key in ("QA_HOST", "QA_PORT", "GRADIO_SERVER_NAME"):
        monkeypatch.delenv(key, raising=False)
    gradio_port, qa_port = free_port(), free_port()
    while qa_port == gradio_port:
        qa_port = free_port()
    monkeypatch.setenv("GRADIO_SERVER_PORT", str(gradio_port))
    app.main()
    monkeypatch.setenv("QA_PORT", str(qa_port))  # QA_PORT wins over Gradio's variable
    app.main()
    assert launched == [("127.0.0.1", gradio_port), ("127.0.0.1", qa_port)]


def test_add_counts_only_what_it_added(tiny_config: qa.Config, embedder: FakeEmbedder,
                                       tmp_path: Path) -> None:
    assert _cli(tiny_config, "build").exit_code == 0
    # An article dropped into the folder meanwhile is indexed by the same build, but not counted.
    (tiny_config.seeds_dir / "harbor_bridge.md").write_text("# Harbor Bridge\n\nThe bridge has 6 lanes.\n")
    wind = tmp_path / "wind.txt"
    wind.write_text("Wind Report\n\nGusts reached 142 km/h over Tollby on Monday.\n")
    out = _cli(tiny_config, "add", str(wind))
    assert out.exit_code == 0, out.output
    assert "Added 1 article(s) from 1 file(s); 0 refused." in out.output
    assert {"wind.txt", "harbor_bridge.md"} <= set(qa.QA(tiny_config).index.articles)


def test_a_mistyped_index_folder_is_one_line_and_creates_nothing(
        tiny_config: qa.Config, embedder: FakeEmbedder, tmp_path: Path) -> None:
    typo = tmp_path / "no" / "such" / "folder"
    for args in (["ask", "Who will build the library?"], ["search", "library"], ["chat"]):
        out = CliRunner().invoke(main, ["--seeds", str(tiny_config.seeds_dir), "--index", str(typo), *args])
        assert out.exit_code == 2, out.output
        assert out.output.strip().splitlines() == [
            f"Error: no index at {typo}: check the path, or build one there with `qa --index {typo} build`"]
        assert not (tmp_path / "no").exists()
    # build (and add) make the folder they are given.
    assert _cli(tiny_config.replace(index_dir=typo), "build").exit_code == 0 and typo.is_dir()


def test_search_says_when_it_finds_fewer_passages_than_asked(tiny_config: qa.Config,
                                                             embedder: FakeEmbedder) -> None:
    assert _cli(tiny_config, "build").exit_code == 0
    out = _cli(tiny_config, "search", "Porter", "-k", "3", "--mode", "bm25")
    assert out.exit_code == 0, out.output
    found = [line for line in out.output.splitlines() if line.startswith("[")]
    assert 0 < len(found) < 3
    assert (f"Only {len(found)} of 3 passages: bm25 finds only passages that hold the question's words; "
            "--mode hybrid ranks them all.") in out.output
    assert "Only" not in _cli(tiny_config, "search", "library", "-k", "1").output


def test_an_empty_date_range_names_no_command_line_flag(fake_qa: qa.QA) -> None:
    with pytest.raises(ValueError, match="widen the dates, or give none") as refused:
        fake_qa.retrieve("library", since="1990-01-01", until="1990-01-02")
    assert "--" not in str(refused.value)
