"""Setting up: the Makefile's steps as a new user sees them, what `make eval` and `make bench`
install, and a script beside a clone named qa importing the package, not the folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
FILES = ("Makefile", "pyproject.toml", "requirements-nlp.txt", "requirements-reader.txt")


def _project(tmp_path: Path, python: str, installed: bool) -> Path:
    """The Makefile and what it depends on, with a stand-in .venv/bin/python (a shell script)."""
    for name in FILES:
        shutil.copy(ROOT / name, tmp_path / name)
    bin_dir = tmp_path / ".venv" / "bin"
    bin_dir.mkdir(parents=True)
    (bin_dir / "python").write_text("#!/bin/sh\n" + python)
    (bin_dir / "python").chmod(0o755)
    if installed:
        (tmp_path / ".venv" / ".installed-stamp").touch()
    return tmp_path


def _make(folder: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MAKE")}
    return subprocess.run(["make", "--no-print-directory", *args], cwd=folder, env=env, capture_output=True,
                          text=True, timeout=120)


def test_make_eval_and_bench_install_only_the_eval_extra(tmp_path: Path) -> None:
    folder = _project(tmp_path, "exit 0\n", installed=True)
    for target in ("eval", "bench"):
        planned = _make(folder, "-n", target).stdout
        assert "-e '.[eval]'" in planned and "-m eval" in planned, planned
        assert "[test" not in planned and "llama" not in planned and "cluster" not in planned, planned


def test_setup_says_each_step_and_stops_where_pip_fails(tmp_path: Path) -> None:
    # pip fails on the first package; everything else this python is asked succeeds.
    python = ('if [ "$1 $2 $3" = "-m pip install" ]; then echo "ERROR: No matching distribution found '
              'for torch==2.13.0"; exit 1; fi\nexit 0\n')
    out = _make(_project(tmp_path, python, installed=False), "setup")
    assert out.returncode != 0
    lines = out.stdout.splitlines()
    assert lines[0].startswith("Setting up .venv/ (about") and lines[1] == "[1/6] torch 2.13.0 (CPU build)"
    assert "ERROR: No matching distribution found for torch==2.13.0" in out.stdout
    assert "[2/6]" not in out.stdout and not (tmp_path / ".venv" / ".installed-stamp").exists()


def test_setup_shows_pips_own_progress() -> None:
    makefile = (ROOT / "Makefile").read_text()
    installs = [line for line in makefile.splitlines() if "$(PIP)" in line]
    assert installs and all("-q" not in line.split() for line in installs)
    assert "PIP := $(PY) -m pip install --disable-pip-version-check\n" in makefile


def test_a_script_beside_a_clone_named_qa_imports_the_package(tmp_path: Path) -> None:
    """`make setup` installs the project as a path entry: the folder qa/ (a clone) beside a script
    is no namespace package standing in for it."""
    (tmp_path / "qa").symlink_to(ROOT)
    (tmp_path / "script.py").write_text("import qa\nprint(qa.__file__, callable(qa.retrieve))\n")
    out = subprocess.run([sys.executable, "script.py"], cwd=tmp_path, capture_output=True, text=True,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.split() == [str(ROOT / "qa" / "__init__.py"), "True"]


# A python whose matplotlib is missing: an import finder that refuses it, ahead of every other.
NO_MATPLOTLIB = """
import runpy, sys
class Refuse:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == "matplotlib":
            raise ModuleNotFoundError(f"No module named {name!r}")
sys.meta_path.insert(0, Refuse())
sys.argv = ["python -m eval", *sys.argv[1:]]
runpy.run_module("eval", run_name="__main__", alter_sys=True)
"""


def test_eval_without_the_eval_extra_is_one_line_naming_the_fix(tmp_path: Path) -> None:
    """After `make chat` alone (no eval extra), `python -m eval realtimeqa` says how to get it."""
    env = {**os.environ, "QA_EVAL_OUT": str(tmp_path)}
    out = subprocess.run([sys.executable, "-c", NO_MATPLOTLIB, "realtimeqa", "--limit", "2"], cwd=ROOT,
                         capture_output=True, text=True, timeout=120, env=env)
    assert out.returncode == 1 and out.stdout == "", out.stdout
    assert out.stderr.splitlines() == [
        "error: python -m eval needs the eval extra (matplotlib, for the report's charts), which `make chat` "
        "does not install: run `make eval-extra` once"]
    planned = _make(_project(tmp_path, "exit 0\n", installed=True), "-n", "eval-extra").stdout
    assert "-e '.[eval]'" in planned and "-m eval" not in planned and "[test" not in planned, planned
