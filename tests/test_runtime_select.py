"""Which runtime a process runs (qa/llm/selected.py): a build that passed its smoke test is used
from the next start, without touching the environment; the background build returns at once, runs
at the lowest priority and is said to run; `qa runtime` says which one runs and how to get the faster."""

from __future__ import annotations

import os
import subprocess
import sys
import time
import zipfile
from pathlib import Path

import pytest
from click.testing import CliRunner

from qa.llm import build, selected
from qa.llm.selected import FASTER, PREBUILT
from qa.llm.wheel import VERSION
from qa.surfaces.cli import main

# A stand-in xllamacpp: importing it says which copy was imported.
FAKE = f"__version__ = {VERSION!r}\n"
IMPORTED = ("import sys\nfrom pathlib import Path\nfrom qa.llm.selected import use\n"
            "print(use(Path(sys.argv[1])))\nimport xllamacpp\nprint(xllamacpp.__file__)\n")


def _wheel(folder: Path) -> Path:
    folder.mkdir(parents=True)
    made = folder / f"xllamacpp-{VERSION}-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(made, "w") as zf:
        zf.writestr("xllamacpp/__init__.py", FAKE)
    return made


def _next_start(cache: Path) -> list[str]:
    """What a process started now says it runs, and the file its `import xllamacpp` loads."""
    out = subprocess.run([sys.executable, "-c", IMPORTED, str(cache)], capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    return out.stdout.splitlines()


def test_a_build_that_passed_is_imported_by_the_next_start_and_unselected_is_gone(tmp_path: Path) -> None:
    wheels = selected.wheels_dir(tmp_path)
    made = _wheel(wheels / "key1")
    name = f"xllamacpp {VERSION} built for this CPU (AVX-512, VNNI)"
    before = _next_start(tmp_path)
    assert before[0] == PREBUILT and "site-packages" in before[1]  # the environment's own
    assert selected.select(wheels, made, name) is True
    assert selected.select(wheels, made, name) is False  # already the one in use
    assert _next_start(tmp_path) == [name, str(wheels / "key1" / "site" / "xllamacpp" / "__init__.py")]
    assert selected.describe(tmp_path).startswith(name)
    assert selected.unselect(wheels) is True
    assert _next_start(tmp_path)[0] == PREBUILT and selected.describe(tmp_path) == f"{PREBUILT}; {FASTER}"


def test_a_build_of_another_version_or_gone_is_not_used(tmp_path: Path) -> None:
    wheels = selected.wheels_dir(tmp_path)
    made = _wheel(wheels / "key1")
    selected.select(wheels, made, "built")
    record = (wheels / selected.RECORD).read_text().replace(VERSION, "2020.1.1")
    (wheels / selected.RECORD).write_text(record)
    assert selected.chosen(wheels) == {} and _next_start(tmp_path)[0] == PREBUILT
    selected.select(wheels, made, "built")
    assert selected.chosen(wheels)
    import shutil

    shutil.rmtree(wheels / "key1" / "site")
    assert selected.chosen(wheels) == {} and _next_start(tmp_path)[0] == PREBUILT


def _nice(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[16])


def test_the_background_build_returns_at_once_at_the_lowest_priority_and_is_said_to_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The child stands in for the build: it sleeps (its command line names qa.llm.build, as the real one's).
    monkeypatch.setattr(build, "CHILD", ("-c", "import time; time.sleep(120)  # qa.llm.build stand-in"))
    monkeypatch.setattr(build, "compilers", lambda: ("cc", "c++"))
    wheels = selected.wheels_dir(tmp_path)
    wheels.mkdir(parents=True)
    model = tmp_path / "model.gguf"
    began = time.monotonic()
    what, why = build.background(wheels, model, sys.executable)
    running = selected.building(wheels)
    try:
        assert time.monotonic() - began < 60 and what == PREBUILT and "compiling in the background" in why
        assert running and _nice(running["pid"]) == 19 and running["log"] == str(wheels / selected.LOG)
        # Its session too, where Linux shares CPU time between sessions first (autogroup).
        group = Path(f"/proc/{running['pid']}/autogroup")
        assert not group.exists() or group.read_text().split()[-1] == "19", group.read_text()
        assert "compiling in the background since" in selected.describe(tmp_path)
        again = build.background(wheels, model, sys.executable)
        assert "still compiling" in again[1] and selected.building(wheels)["pid"] == running["pid"]
    finally:
        os.kill(running["pid"], 9)
        os.waitpid(running["pid"], 0)
    assert selected.building(wheels) == {} and selected.describe(tmp_path) == f"{PREBUILT}; {FASTER}"


def test_no_background_build_without_a_compiler_and_a_failed_one_is_said(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    wheels = selected.wheels_dir(tmp_path)
    wheels.mkdir(parents=True)
    monkeypatch.setattr(build.shutil, "which", lambda name: None)
    what, why = build.background(wheels, tmp_path / "model.gguf", sys.executable)
    assert (what, why) == (PREBUILT, "no C and C++ compiler to build one (apt-get install g++)")
    assert selected.building(wheels) == {} and not (wheels / selected.BUILDING).exists()
    selected.remember(wheels, PREBUILT, "the build failed (exit 1): error: no cython", asked=False)
    assert selected.describe(tmp_path) == (f"{PREBUILT}: the last build here kept it (the build failed "
                                           f"(exit 1): error: no cython); {FASTER}")
    selected.remember(wheels, PREBUILT, "as asked (RUNTIME=prebuilt)", asked=True)
    assert selected.describe(tmp_path) == f"{PREBUILT}; {FASTER}"


def test_qa_runtime_says_which_runs_and_how_to_get_the_faster(tmp_path: Path,
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QA_CACHE_DIR", str(tmp_path))
    out = CliRunner().invoke(main, ["runtime"])
    assert out.exit_code == 0 and out.output == f"runtime: {PREBUILT}; {FASTER}\n"
    wheels = selected.wheels_dir(tmp_path)
    selected.select(wheels, _wheel(wheels / "key1"), "xllamacpp built for this CPU (AVX-512)")
    out = CliRunner().invoke(main, ["runtime"])
    assert out.output == f"runtime: xllamacpp built for this CPU (AVX-512) ({wheels / 'key1' / 'site'})\n"
