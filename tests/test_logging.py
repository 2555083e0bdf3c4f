"""The logging contract of docs/team.md: sign-ins, refusals, uploads and rate limits are logged
with who did them; passwords, questions and answers are not. A real server, the fake embedder."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest
from fake_llm import FakeLLM
from gradio_client import Client, handle_file
from gradio_client.exceptions import AppError
from net import serving

import qa

ALICE, BOB = "alice-pw-7391", "bob-pw-2846"
WRONG = "not-her-password-55"
QUESTION = "How many cars cross the bridge every day?"
FOLLOW_UP = "How much did the repairs cost?"
OFF_TOPIC = "What is the price of tea in Kenya?"


def _log_info(caplog: pytest.LogCaptureFixture) -> None:
    """Capture what app.py logs: INFO and up, from every logger (the CLI, run by other tests in this
    process, may have set the qa logger to WARNING; that is put back after the test)."""
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.INFO, logger="qa")


def _logged(caplog: pytest.LogCaptureFixture) -> str:
    return "\n".join(record.getMessage() for record in caplog.records)


def test_the_server_logs_who_did_what_and_never_passwords_questions_or_answers(
        fake_qa: qa.QA, tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    fake_qa.config = fake_qa.config.replace(auth=f"alice:{ALICE},bob:{BOB}", uploaders="alice", rate=3)
    ferry = tmp_path / "ferry_log.txt"
    ferry.write_text("Ferry Report\n\nThe Tollby ferry carried 412 passengers on its first crossing.\n")
    photo = tmp_path / "photo.txt"
    photo.write_bytes(b"\xff\xd8\xff\xe0\x00\x10JFIF\x00")
    _log_info(caplog)
    with serving(fake_qa) as url:
        with pytest.raises(ValueError, match="Could not login"):
            Client(url, auth=("alice", WRONG), verbose=False)
        alice = Client(url, auth=("alice", ALICE), verbose=False)
        answers = [alice.predict(QUESTION, api_name="/ask"),
                   alice.predict(FOLLOW_UP, [QUESTION], api_name="/ask"),  # the history is asked again
                   alice.predict(OFF_TOPIC, api_name="/ask")]
        with pytest.raises(AppError, match="Too many questions"):
            alice.predict(QUESTION, api_name="/ask")
        assert "Added ferry_log.txt" in alice.predict(handle_file(str(ferry)), api_name="/upload")[0]
        assert "Not added" in alice.predict(handle_file(str(photo)), api_name="/upload")[0]
        bob = Client(url, auth=("bob", BOB), verbose=False)
        with pytest.raises(Exception, match="403 Forbidden"):  # refused before the file is stored
            bob.predict(handle_file(str(ferry)), api_name="/upload")
    logged = _logged(caplog)
    for line in ("signed in: 'alice'", "sign-in refused for user 'alice'", "signed in: 'bob'",
                 "rate limit: user alice sent 3 questions in a minute",
                 "upload of 'photo.txt' by user alice refused: photo.txt: not a text file",
                 "file upload refused: user bob may not upload"):
        assert line in logged, line
    assert any(m.startswith("upload of ferry_log.txt (") and m.endswith("by user alice: added")
               for m in logged.splitlines()), logged
    assert answers[0]["answered"] and answers[1]["answered"] and not answers[2]["answered"]
    said = [QUESTION, FOLLOW_UP, OFF_TOPIC, "Kenya", "40,000", "12 million"]
    said += [c["text"] for a in answers for c in a["citations"]]
    for text in [ALICE, BOB, WRONG, *said]:
        assert text not in logged, text


def test_dropped_generated_sentences_are_not_logged(fake_qa: qa.QA, caplog: pytest.LogCaptureFixture) -> None:
    base = fake_qa.answer(QUESTION)
    n = next(i for i, p in enumerate(base.passages, 1) if "40,000" in p.text)
    # A number with a comma: a port in a logged URL can hold any digits, never a comma.
    invented = "The bridge was painted purple by 77,031 volunteers"
    fake_qa.config = fake_qa.config.replace(llm_timeout=5.0)
    _log_info(caplog)
    with FakeLLM(f"About 40,000 cars cross the bridge every day [{n}]. {invented} [{n}].") as server:
        fake_qa.config = fake_qa.config.replace(llm_url=server.url)
        answer = fake_qa.answer_llm(QUESTION)
    assert answer.method == "llm" and answer.dropped == (f"{invented}.",)
    logged = _logged(caplog)
    assert "dropped 1 generated sentence" in logged
    for text in (invented, "purple", "77,031", QUESTION, "40,000"):
        assert text not in logged, text
