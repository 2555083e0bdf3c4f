"""Settings with the real model: QA_ONNX_QUERIES, QA_ONNX_BUILD and QA_MODEL change how questions
and articles are embedded, not what is answered; a sentence past the model's 256 tokens."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
from click.testing import CliRunner
from reading import read_by_model

import qa
from qa.config import DEFAULT_MODEL
from qa.embedding.base import resolve_model
from qa.embedding.export import export_path, float_path
from qa.embedding.onnx_runtime import OnnxEmbedder
from qa.embedding.transformer import SentenceTransformerEmbedder
from qa.surfaces.cli import main

pytestmark = pytest.mark.slow
QUESTION = "How many Taliban prisoners will be released each day?"


@pytest.fixture
def folders(real_qa: qa.QA, model_cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """QA_SEEDS_DIR at a copy of the seeds and QA_INDEX_DIR at a copy of real_qa's index."""
    shutil.copytree(real_qa.config.seeds_dir, tmp_path / "seeds")
    shutil.copytree(real_qa.config.index_dir, tmp_path / "index", symlinks=True)
    monkeypatch.setenv("QA_SEEDS_DIR", str(tmp_path / "seeds"))
    monkeypatch.setenv("QA_INDEX_DIR", str(tmp_path / "index"))
    return tmp_path


def test_onnx_queries_off_embeds_questions_with_the_build_embedder(folders: Path, model_cache: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    default = qa.QA(qa.Config.from_env())
    built = default.index.path
    assert isinstance(default.query_embedder, OnnxEmbedder)
    assert default.query_embedder.source == str(export_path(model_cache))  # the int8 twin
    monkeypatch.setenv("QA_ONNX_QUERIES", "0")
    engine = qa.QA(qa.Config.from_env())
    assert engine.config.indexing.onnx_queries is False
    assert engine.index.path == built  # the same index serves: only the question's embedder changes
    assert engine.query_embedder is engine.embedder
    assert engine.query_embedder.source == str(float_path(model_cache))  # type: ignore[attr-defined]
    mine, theirs = engine.answer(QUESTION), default.answer(QUESTION)
    read_by_model(mine)
    read_by_model(theirs)
    assert mine.short == theirs.short == "100"


def test_onnx_build_off_builds_with_sentence_transformers(folders: Path, real_qa: qa.QA,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QA_ONNX_BUILD", "0")
    monkeypatch.setenv("QA_INDEX_DIR", str(folders / "st-index"))
    engine = qa.QA(qa.Config.from_env())
    assert engine.config.indexing.onnx_build is False
    engine.build()
    meta = engine.index.meta
    assert meta["embedder"] == "SentenceTransformerEmbedder" and isinstance(engine.embedder,
                                                                            SentenceTransformerEmbedder)
    assert meta["model"] == DEFAULT_MODEL and meta["sentence_vectors"] == "pooled"
    # The same model's vectors, whichever runtime computed them.
    assert (engine.index.sent_vectors * real_qa.index.sent_vectors).sum(axis=1).min() >= 0.9999
    answer = engine.answer(QUESTION)
    read_by_model(answer)
    assert answer.short == "100"


def test_model_is_a_local_sentence_transformers_folder(folders: Path, tmp_path: Path,
                                                       monkeypatch: pytest.MonkeyPatch) -> None:
    local = resolve_model(DEFAULT_MODEL)  # the packaged model's own folder, named by its path
    monkeypatch.setenv("QA_MODEL", local)
    engine = qa.QA(qa.Config.from_env())
    index = engine.index  # built with another model than the copied index: rebuilt
    assert index.meta["model"] == local and index.meta["embedder"] == "SentenceTransformerEmbedder"
    assert isinstance(engine.query_embedder, SentenceTransformerEmbedder)  # no ONNX twin for it
    answer = engine.answer(QUESTION)
    read_by_model(answer)
    assert answer.short == "100"
    monkeypatch.setenv("QA_MODEL", str(tmp_path / "no-such-model"))
    monkeypatch.setenv("QA_INDEX_DIR", str(tmp_path / "other-index"))
    result = CliRunner().invoke(main, ["build"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    [line] = result.output.strip().splitlines()
    assert line.startswith("Error: cannot load embedding model") and "set QA_MODEL" in line


def test_a_sentence_past_the_models_256_tokens_is_embedded_alone(real_qa: qa.QA, tmp_path: Path) -> None:
    sentences = [f"Report {n}: the Quorvale harbour office counted {100 + n} fishing boats in sector {n}."
                 for n in range(40)]
    sentences.append("The Quorvale lighthouse was painted green in 1911 by the harbour office.")
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    (seeds / "long.txt").write_text("Quorvale Harbour Log\n\n" + " ".join(sentences) + "\n")
    config = real_qa.config.replace(seeds_dir=seeds, index_dir=tmp_path / "index", chunk_size=8000,
                                    chunk_overlap=0)
    engine = qa.QA(config, embedder=real_qa.embedder)
    engine.build()
    index = engine.index
    assert len(index.chunks) == 1 and index.meta["sentence_vectors"] == "pooled"  # one chunk of 600+ tokens
    texts = [" ".join(index.sentence_text(i).split()) for i in range(len(index.sent_sources))]
    alone = real_qa.embedder.embed(texts)
    cos = (alone * index.sent_vectors).sum(axis=1)
    # Inside the first 256 tokens a sentence is pooled from the chunk (in context, not its own
    # vector); past them the model saw none of its tokens, so it is embedded on its own.
    assert cos[0] < 0.9999 and cos[-1] >= 0.9999
    past = int(np.argmax(cos >= 0.9999))
    assert 5 < past < len(texts) - 5 and (cos[past:] >= 0.9999).all() and (cos[:past] < 0.9999).all()
    assert np.all(np.linalg.norm(index.sent_vectors, axis=1) > 0.99)  # none left as zeros
    answer = engine.answer("When was the Quorvale lighthouse painted green?")
    read_by_model(answer)
    assert answer.answered and "painted green in 1911" in answer.citations[0].text
