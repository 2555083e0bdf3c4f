"""The habits CI keeps: ruff clean (no unused noqa either) and qa/ type-checked by mypy."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_ruff_is_clean() -> None:
    command = [sys.executable, "-m", "ruff", "check", "--no-cache", "qa", "tests", "eval", "app.py"]
    out = subprocess.run(command, cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0, out.stdout[-3000:]


@pytest.mark.slow
def test_mypy_checks_qa(tmp_path: Path) -> None:
    out = subprocess.run([sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "mypy")],
                         cwd=ROOT, capture_output=True, text=True)
    assert out.returncode == 0 and "Success" in out.stdout, out.stdout[-3000:]
