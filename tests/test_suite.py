"""The suite's own rules: a missing browser fails with its fix, never skips; the Makefile installs
the browser the tests drive; real-model tests are marked slow; no test writes into the repository."""

from __future__ import annotations

import re
from pathlib import Path

import net
import pytest

ROOT = Path(__file__).resolve().parent.parent


def test_a_missing_chromium_fails_in_one_line_naming_the_fix(monkeypatch: pytest.MonkeyPatch,
                                                             tmp_path: Path) -> None:
    monkeypatch.setattr(net, "CHROMIUM", str(tmp_path / "chromium"))
    with pytest.raises(pytest.fail.Exception) as failed:
        net.needs_chromium()
    assert str(failed.value) == (f"Debian's chromium is not at {tmp_path / 'chromium'}: install it with "
                                 "`make browser` (apt-get install chromium)")


def test_make_browser_installs_the_chromium_the_tests_drive() -> None:
    makefile = (ROOT / "Makefile").read_text()
    assert f"CHROMIUM := {net.CHROMIUM}\n" in makefile and "test -x $(CHROMIUM)" in makefile
    assert re.search(r"^test: .*\bbrowser\b", makefile, re.M)  # `make test` installs it first


def test_no_test_skips_for_a_missing_browser_or_writes_into_the_repository() -> None:
    for path in sorted((ROOT / "tests").glob("*.py")):
        text = path.read_text("utf-8")
        assert "test-output" not in text or path.name == Path(__file__).name, path.name
        assert not re.search(r"skip\w*\([^)]*(chromium|browser)", text, re.I), path.name


def test_real_model_fixtures_mark_a_test_slow(request: pytest.FixtureRequest) -> None:
    from conftest import REAL

    items = request.session.items
    real = [item for item in items if REAL & set(getattr(item, "fixturenames", ()))]
    assert all(item.get_closest_marker("slow") for item in real)


def test_the_longest_files_go_first() -> None:
    """Each file conftest starts first is a test file here, and a session's tests come in that order."""
    from conftest import LONGEST_FIRST

    assert all((ROOT / "tests" / name).is_file() for name in LONGEST_FIRST)
    assert len(set(LONGEST_FIRST)) == len(LONGEST_FIRST)
