"""The reader's fixed instruction saved as KV state once and restored at load (qa/llm/state.py):
the name keys everything the state depends on, a damaged file is never restored, and with the
real model a second start restores what the first read, a damaged or stale file is made again."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

from qa.llm import state

PREFIX = [{"role": "system", "content": "Answer from the passages."},
          {"role": "user", "content": "Passages:"}]


def test_the_state_name_keys_the_model_the_build_the_settings_and_the_prompt(tmp_path: Path) -> None:
    model = tmp_path / "m.gguf"
    model.write_bytes(b"GGUF" + bytes(10))
    name = state.state_name(model, "build 1", {"context": 2048}, PREFIX)
    assert name.startswith("m-") and name.endswith(".bin")
    assert name == state.state_name(model, "build 1", {"context": 2048}, PREFIX)
    others = {state.state_name(model, "build 2", {"context": 2048}, PREFIX),
              state.state_name(model, "build 1", {"context": 4096}, PREFIX),
              state.state_name(model, "build 1", {"context": 2048}, [PREFIX[0]])}
    model.write_bytes(b"GGUF" + bytes(11))  # another file under the same name
    others.add(state.state_name(model, "build 1", {"context": 2048}, PREFIX))
    assert name not in others and len(others) == 4


def test_only_a_sealed_intact_file_may_be_restored(tmp_path: Path) -> None:
    saved = tmp_path / "s.bin"
    assert not state.intact(saved)
    saved.write_bytes(b"kv" * 1000)
    assert not state.intact(saved)  # saved but never sealed: half written, or a crash before
    state.seal(saved)
    assert state.intact(saved)
    with saved.open("r+b") as fh:
        fh.seek(500)
        fh.write(b"XX")
    assert not state.intact(saved)
    state.discard(saved)
    assert not saved.exists() and not saved.with_name("s.bin.sha256").exists()


def test_a_slot_action_on_a_closed_port_says_why() -> None:
    assert state.slot_action("http://127.0.0.1:9", "key", 0, "restore", "x.bin", timeout=2)


@pytest.mark.slow
@pytest.mark.real_reading  # each start's own reading shows what its cache held
def test_a_second_start_restores_the_instruction_the_first_read(tmp_path: Path) -> None:
    from conftest import MACHINE_CACHE

    from qa.llm.llama import LlamaRuntime
    from qa.llm.model_file import packaged_path
    from qa.readers.lm.prompt import default_prompt

    model = packaged_path(MACHINE_CACHE)
    if not model.is_file():
        pytest.skip("the reader's model is not installed (make setup)")
    prefix = default_prompt().warm_messages()
    kv = tmp_path / "kv"

    def start(messages: list[dict[str, str]] = prefix) -> tuple[str, int]:
        runtime = LlamaRuntime(model, threads=2, state_dir=kv, prefix=messages)
        asked = [*messages[:1], {"role": "user", "content": "Passages:\n[1] The bridge carries 40,000 cars "
                                                            "a day.\n\nQuestion: How many cars cross it?"}]
        cached = runtime.complete(asked, max_tokens=2).cached_tokens if messages is prefix else 0
        primed = runtime.primed
        del runtime
        gc.collect()
        return primed, cached

    assert start()[0] == "read and saved"
    (saved,) = kv.glob("*.bin")
    primed, cached = start()
    assert primed == "restored" and cached >= 100  # the instruction's ~114 tokens came from the file
    with saved.open("r+b") as fh:
        fh.seek(saved.stat().st_size // 2)
        fh.write(b"\xff" * 64)
    assert start()[0] == "read and saved" and state.intact(saved)  # damaged: read again, saved again
    other = [{"role": "system", "content": "Another instruction."}, {"role": "user", "content": "Passages:"}]
    assert start(other)[0] == "read and saved" and len(list(kv.glob("*.bin"))) == 2
    assert not list(kv.glob("*.part"))


@pytest.mark.parametrize("raw", ["100", "40000", "many"])
def test_a_context_the_model_cannot_hold_is_one_line_naming_the_setting(monkeypatch: pytest.MonkeyPatch,
                                                                      raw: str) -> None:
    from qa import BadInput, Config

    monkeypatch.setenv("QA_READER_CONTEXT", raw)
    with pytest.raises(BadInput, match="QA_READER_CONTEXT"):
        Config.from_env()
    monkeypatch.setenv("QA_READER_CONTEXT", "4096")
    assert Config.from_env().reading.reader_context == 4096 and Config().reading.reader_context == 2048
