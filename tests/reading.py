"""Who read an answer: the one check every real-model test of an answer makes, so that a language
model that fails (and is silently replaced by the span reader) fails the test."""

from __future__ import annotations

from typing import Any

from qa.notices import FALLBACK, FALLBACK_CODES


def _fields(answer: Any) -> tuple[str, str, str]:
    """(reader, notice, notice code) of an Answer or of its JSON (``to_dict``, /ask, `qa ask --json`)."""
    if isinstance(answer, dict):
        return str(answer["reader"]), answer.get("notice") or "", answer.get("notice_code") or ""
    return str(answer.reader), answer.notice or "", answer.notice_code or ""


def read_by_model(answer: Any) -> None:
    """Assert that the language model read this answer: reader "lm" and no fallback notice."""
    reader, notice, code = _fields(answer)
    assert reader == "lm" and code not in FALLBACK_CODES and FALLBACK not in notice, (
        f"not read by the language model: reader={reader!r}, notice={notice!r}")


def no_fallback(answer: Any) -> None:
    """Assert that the span reader did not stand in for a failed model (a refusal made before any
    reading, which the span reader's evidence rules, passes)."""
    reader, notice, code = _fields(answer)
    assert code not in FALLBACK_CODES and FALLBACK not in notice, (
        f"the language model failed: reader={reader!r}, notice={notice!r}")


def fell_back(answer: Any) -> str:
    """Assert that the span reader answered in the language model's place, saying so; the notice."""
    reader, notice, code = _fields(answer)
    assert reader == "spans" and code in FALLBACK_CODES and FALLBACK in notice, (
        f"no fallback to the span reader: reader={reader!r}, notice={notice!r}")
    return notice
