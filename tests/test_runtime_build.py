"""The reader's runtime built for this CPU at set-up (qa/llm/build.py): the flags from the probes,
the cache key, the fallback order, the probe and smoke test in subprocesses, and the runtime
installed here reading the real model."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from qa.llm import build, probe, wheel
from qa.llm.probe import TILECFG, TILECFG_PATCHED, Verdict
from qa.llm.wheel import BuildFailed

YES, NO = Verdict(True, "ran, right answer"), Verdict(False, "killed by SIGILL")


def found(**off: bool) -> dict[str, Verdict]:
    """Every probe passing except those named False (a CPU like this machine's, tile config fixed)."""
    names = [*probe.FEATURES, TILECFG, TILECFG_PATCHED]
    return {n: YES if off.get(n, n != TILECFG) else NO for n in names}


def test_flags_follow_the_probes_and_amx_needs_a_tile_config_that_runs() -> None:
    flags = probe.cmake_flags(found(), amx=True)
    assert flags[0] == "-DGGML_NATIVE=OFF"
    assert "-DGGML_AVX512_VNNI=ON" in flags and "-DGGML_AMX_INT8=ON" in flags
    assert "-DGGML_AMX_INT8=OFF" in probe.cmake_flags(found(), amx=False)
    neither = found(TILECFG=False, TILECFG_PATCHED=False)
    assert "-DGGML_AMX_TILE=OFF" in probe.cmake_flags(neither, amx=True)
    assert "-DGGML_AVX512_BF16=OFF" in probe.cmake_flags(found(AVX512_BF16=False), amx=True)


def test_candidates_try_amx_first_patched_only_when_the_patch_is_what_makes_it_run() -> None:
    amx, plain = build.candidates(found())
    assert amx.patched and "AMX with ggml's g++ 12 tile fix" in amx.name and "AMX_INT8" in amx.features
    assert not plain.patched and "AMX" not in plain.name and "AMX_INT8" not in plain.features
    assert "AVX512_VNNI" in plain.features and "-DGGML_AMX_TILE=OFF" in plain.cmake
    (unpatched, _) = build.candidates(found(TILECFG=True))
    assert not unpatched.patched and unpatched.name.endswith("AMX")
    assert [c.patched for c in build.candidates(found(TILECFG_PATCHED=False))] == [False]
    assert [c.name for c in build.candidates(found(AMX_INT8=False))] == [plain.name]
    bare = found(**{n: False for n in probe.FEATURES if n != "AVX2"})
    assert build.candidates(bare) == [] and build.candidates(found(AVX2=False)) == []


def test_the_cache_key_changes_with_everything_the_wheel_depends_on() -> None:
    base = ("2026.10.11549", ("-DGGML_AVX512=ON",), "patch text", "gcc (Debian 12.2.0) | g++ (Debian 12.2.0)")
    key = build.cache_key(*base)
    assert key == build.cache_key(*base) and len(key) == 16
    for i, other in enumerate(("2026.10.11550", ("-DGGML_AVX512=OFF",), "", "clang 14 | clang++ 14")):
        changed = list(base)
        changed[i] = other
        assert build.cache_key(*changed) != key, f"field {i} is not in the key"


class Steps:
    """Stand-ins for the build, smoke test and install, recording what was asked of them."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, probes: dict[str, Verdict], broken: set[str],
                 smoke_fails: set[str]) -> None:
        self.built: list[str] = []
        self.installed: list[str | None] = []
        self.broken, self.smoke_fails = broken, smoke_fails
        monkeypatch.setattr(build, "probe", lambda cc, cxx: probes)
        monkeypatch.setattr(build, "compiler_id", lambda cc, cxx: "gcc 12 | g++ 12")
        monkeypatch.setattr(wheel, "build", self.build)
        monkeypatch.setattr(wheel, "smoke", self.smoke)
        monkeypatch.setattr(wheel, "install", self.install)
        monkeypatch.setattr(build, "select", self.select)

    def install(self, python: str, made: Path | None) -> bool:
        self.installed.append(made.name if made else None)
        return True

    def select(self, wheels: Path, made: Path, name: str) -> bool:
        self.installed.append(made.name)  # used from the next start, as if installed
        return True

    def build(self, name: str, cmake: tuple, patched: bool, cache: Path, out: Path, say: object) -> Path:
        self.built.append(name)
        if name in self.broken:
            raise BuildFailed("the build failed (exit 1): error: no cython")
        out.mkdir(parents=True, exist_ok=True)
        (made := out / f"xllamacpp-{'amx' if patched else 'plain'}.whl").write_bytes(b"wheel")
        return made

    def smoke(self, made: Path, model: Path, features: tuple) -> None:
        if made.name.split("-")[1].split(".")[0] in self.smoke_fails:
            raise BuildFailed("the smoke test was killed by SIGILL")


def _choose(tmp_path: Path, **kwargs: object) -> tuple[str, str]:
    return build.choose(tmp_path / "wheels", tmp_path / "model.gguf", sys.executable, lambda _: None,
                        **kwargs)  # type: ignore[arg-type]


def test_a_failing_smoke_test_falls_back_to_the_build_without_amx_and_is_remembered(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    steps = Steps(monkeypatch, found(), broken=set(), smoke_fails={"amx"})
    what, why = _choose(tmp_path)
    assert "AMX" not in what and "AVX-512" in what
    assert "killed by SIGILL" in why and "smoke test passed" in why
    assert len(steps.built) == 2 and steps.installed == ["xllamacpp-plain.whl"]
    records = [json.loads(p.read_text()) for p in (tmp_path / "wheels").glob("*/build.json")]
    assert sorted(r["smoke"][:6] for r in records) == ["failed", "passed"]
    assert not list((tmp_path / "wheels").glob("*/xllamacpp-amx.whl"))  # a wheel that crashes is not kept
    what_again, why_again = _choose(tmp_path)  # set-up run again: nothing built, the cached wheel
    assert what_again == what and steps.built == steps.built[:2] and "the cached wheel" in why_again
    assert "when built" in why_again and steps.installed[-1] == "xllamacpp-plain.whl"
    _choose(tmp_path, rebuild=True)
    assert len(steps.built) == 4


def test_failed_builds_fall_back_to_the_prebuilt_wheel_saying_why(tmp_path: Path,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    steps = Steps(monkeypatch, found(), broken={c.name for c in build.candidates(found())}, smoke_fails=set())
    what, why = _choose(tmp_path)
    assert what == f"the prebuilt xllamacpp {wheel.VERSION} (AVX2)" and steps.installed == [None]
    assert why.count("no cython") == 2 and len(steps.built) == 2
    _choose(tmp_path)  # a failed build (a network, a full disk) is tried again next time
    assert len(steps.built) == 4


def test_no_compiler_or_asked_for_the_prebuilt_builds_nothing(tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    steps = Steps(monkeypatch, found(), broken=set(), smoke_fails=set())
    assert "as asked" in _choose(tmp_path, prebuilt=True)[1]
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    assert "no C and C++ compiler" in _choose(tmp_path)[1]
    assert steps.built == [] and steps.installed == [None, None]


def test_the_probe_runs_each_instruction_and_a_crash_is_a_no(tmp_path: Path) -> None:
    trap = tmp_path / "trap.c"
    trap.write_text("int main(void) { __builtin_trap(); }\n")
    assert probe.run_probe(["cc", str(trap)], tmp_path, "trap") == Verdict(False, "killed by SIGILL")
    verdicts = probe.probe("cc", "c++")
    assert verdicts["AVX2"].ok, verdicts["AVX2"]  # every x86-64 machine this runs on has AVX2
    assert set(verdicts) == {*probe.FEATURES, TILECFG, TILECFG_PATCHED}


def test_without_avx512_its_extensions_are_off_whatever_their_own_probes_say(
        monkeypatch: pytest.MonkeyPatch) -> None:
    ran: list[str] = []

    def run(cmd: list[str], work: Path, name: str) -> Verdict:
        ran.append(name)
        return NO if name == "AVX512" else YES

    monkeypatch.setattr(probe, "run_probe", run)
    verdicts = probe.probe("cc", "c++")
    assert {"AVX512", "AVX512_VNNI", "AMX_INT8"} <= set(ran)
    assert [n for n, v in verdicts.items() if not v.ok] == ["AVX512", *probe.NEEDS_AVX512]
    assert "-DGGML_AVX512_VNNI=OFF" in probe.cmake_flags(verdicts, amx=True)


def test_a_wheel_that_crashes_fails_the_smoke_test_not_the_caller(tmp_path: Path) -> None:
    broken = tmp_path / "xllamacpp-0-py3-none-any.whl"
    with zipfile.ZipFile(broken, "w") as zf:
        zf.writestr("xllamacpp/__init__.py", "import os, signal\nos.kill(os.getpid(), signal.SIGILL)\n")
    with pytest.raises(BuildFailed, match="killed by SIGILL"):
        wheel.smoke(broken, tmp_path / "model.gguf", ())


def test_an_installed_wheel_is_not_installed_again(tmp_path: Path) -> None:
    made = tmp_path / "xllamacpp-1-cp310-abi3-linux_x86_64.whl"
    python = tmp_path / "python"  # answers the metadata question; any pip call fails the test
    python.write_text(f'#!/bin/sh\n[ "$1" = "-c" ] || exit 9\nprintf "{made.as_uri()}\\n1\\n"\n')
    python.chmod(0o755)
    assert wheel.installed(str(python)) == (made.as_uri(), "1")
    assert wheel.install(str(python), made) is False
    with pytest.raises(BuildFailed, match="pip could not install"):
        wheel.install(str(python), tmp_path / "other.whl")


@pytest.mark.slow
def test_the_installed_runtime_reads_the_real_model() -> None:
    """The xllamacpp this environment runs (built here by make setup, or the prebuilt) passes the
    smoke test set-up ran on it: the reader's model, a grammar, log-probabilities, a stopped stream."""
    from conftest import MACHINE_CACHE

    from qa.llm.model_file import packaged_path

    model = packaged_path(MACHINE_CACHE)
    if not model.is_file():
        pytest.skip("the reader's model is not installed (make setup)")
    ran = subprocess.run([sys.executable, str(probe.CPU / "smoke.py"), str(model), "AVX2"],
                         capture_output=True, text=True, timeout=600, env={**os.environ, "PYTHONPATH": ""})
    assert ran.returncode == 0, ran.stdout + ran.stderr[-2000:]
    result = json.loads(ran.stdout.splitlines()[-1])
    assert result["answer"] == "yes" and len(result["streamed"]) == 3 and len(result["top"]) == 2
