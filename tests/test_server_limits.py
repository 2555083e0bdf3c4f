"""What the chat server enforces whatever a client sends (a raw Gradio call, not the page): cut
questions and bounded sessions, capped bodies, upload rights on Gradio's own upload route, and
throttled sign-in; refusals are one log line, never a traceback. Real servers, the fake embedder."""

from __future__ import annotations

import json
import logging
import shutil
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from conftest import DATA, EMPTY, FakeEmbedder
from net import serving

import qa
from qa.errors import FAILED
from qa.surfaces.web import throttle
from qa.surfaces.web.serving import MAX_TURNS

NOT_HISTORY = "history must be a list of the earlier questions, as text"

USERS = {"alice": "alice-pass-1", "bob": "bob-pass-2"}
RESPOND = 0  # the chat's ask button: respond(question, line, use_llm, since, until) takes the question,
SERVE = 2  # then (after the page empties the box, 1) serve(line) answers the chat's questions in turn


def _engine(tmp: Path, **settings: object) -> qa.QA:
    shutil.copytree(DATA, tmp / "seeds")
    config = qa.Config.of(seeds_dir=tmp / "seeds", index_dir=tmp / "index", cache_dir=tmp / "cache",
                       chunk_size=200, chunk_overlap=40, min_evidence=0.3, reader="spans", **settings)
    engine = qa.QA(config, embedder=FakeEmbedder())
    engine.build()
    return engine


@pytest.fixture(scope="module")
def open_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with serving(_engine(tmp_path_factory.mktemp("open"), rate=0)) as url:
        yield url


@pytest.fixture
def signed_url(tmp_path: Path) -> Iterator[str]:
    """A server with sign-in of its own for each test: no sign-in count or lock is left behind."""
    engine = _engine(tmp_path, rate=0, uploaders="alice",
                     auth=",".join(f"{u}:{p}" for u, p in USERS.items()))
    with serving(engine) as url:
        yield url


def call(url: str, fn: int, data: list, session: str, client: httpx.Client) -> tuple[int, list, int]:
    """Call a function of the chat as a raw client would: (status of the join, its last outputs, bytes
    received)."""
    joined = client.post(url + "gradio_api/queue/join", json={
        "data": data, "fn_index": fn, "session_hash": session, "event_data": None, "trigger_id": 8})
    if joined.status_code != 200:
        return joined.status_code, [], len(joined.content)
    received, outputs = 0, []
    with client.stream("GET", url + f"gradio_api/queue/data?session_hash={session}") as events:
        for line in events.iter_lines():
            received += len(line)
            message = json.loads(line[5:]) if line.startswith("data:") else {}
            if message.get("msg") == "process_completed":
                outputs = message["output"]["data"]
                break
    return 200, outputs, received


def skipped(output: object) -> bool:
    """Whether an output is one Gradio leaves as it is on the page."""
    return isinstance(output, dict) and output.get("__type__") == "update"


def join(url: str, data: list, session: str, client: httpx.Client | None = None) -> tuple[int, list, int]:
    """Ask as a raw client would: respond() takes the question into the session's chat, then serve()
    answers it: (status of the first join, serve's last outputs, bytes received)."""
    client = client or httpx.Client(timeout=60)
    status, _, received = call(url, RESPOND, data, session, client)
    if status != 200:
        return status, [], received
    _, outputs, more = call(url, SERVE, [None], session, client)
    return status, outputs, received + more


def test_a_20_mb_question_is_refused_before_gradio_reads_it(open_url: str) -> None:
    status, _, _ = join(open_url, ["why? " * 4_000_000, None, False, "", ""], uuid.uuid4().hex)
    assert status == 413


def test_questions_are_cut_and_sessions_keep_at_most_max_turns(open_url: str) -> None:
    session = uuid.uuid4().hex
    long = "How many prisoners " + "x" * 200_000  # under the body cap, far over the question limit
    status, outputs, _ = join(open_url, [long, None, False, "", ""], session)
    assert status == 200 and "x" * 2000 not in outputs[0] and "x" * 1900 in outputs[0]
    sizes = []
    for n in range(MAX_TURNS + 5):
        question = f"Question {n} about the prisoners?"
        status, outputs, received = join(open_url, [question, None, False, "", ""], session)
        assert status == 200
        sizes.append(received)
    page = outputs[0]
    assert page.count('class="qa-q"') == MAX_TURNS
    assert "Question 4 about" not in page and f"Question {MAX_TURNS + 4} about" in page
    assert max(sizes) < 2 * sizes[MAX_TURNS - 1]  # the page stops growing once the turns are full


def test_odd_inputs_to_the_chat_get_a_page_with_one_line_at_most(open_url: str) -> None:
    for data in ([{"x": 1}, None, "yes", ["a"], 5], [None, None, None, None, None], [7, [], 1, "", ""]):
        status, outputs, _ = join(open_url, data, uuid.uuid4().hex)
        # Gradio's textbox makes text of what it can (the dict); what is no text is no question asked.
        page = outputs[0] if outputs and isinstance(outputs[0], str) else ""
        assert status == 200 and outputs and (skipped(outputs[0]) or page.startswith('<div class="qa-chat">'))
        assert page.count("qa-error") <= 1


def test_refused_api_calls_log_one_line_and_no_traceback(open_url: str, capfd, caplog) -> None:
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    client = Client(open_url, verbose=False)
    with caplog.at_level(logging.INFO, logger="qa.app"):
        for question, history, message in (("", None, EMPTY), ("Who?", "not a list", NOT_HISTORY),
                                           ("Who?", [1, 2], NOT_HISTORY)):
            with pytest.raises(AppError) as refused_with:
                client.predict(question, history, api_name="/ask")
            assert refused_with.value.message == message  # the refusal itself, nothing generic
    err = capfd.readouterr().err
    assert "Traceback" not in err, err[-2000:]
    refused = [r for r in caplog.records if "/ask refused" in r.getMessage()]
    assert len(refused) == 3 and all("\n" not in r.getMessage() for r in refused)


def test_a_failure_inside_the_server_is_one_log_line_and_one_generic_message(
        open_url: str, capfd, caplog, monkeypatch) -> None:
    from gradio_client import Client
    from gradio_client.exceptions import AppError

    def broken(self: qa.QA, question: str, *args: object, **kwargs: object) -> qa.Answer:
        raise RuntimeError("index 7 is out of bounds\nfor axis 0 with size 3")  # a bug, say numpy's

    monkeypatch.setattr(qa.QA, "answer", broken)
    monkeypatch.setattr(qa.QA, "stream", broken)
    where = f"RuntimeError at {Path(__file__).name}:{broken.__code__.co_firstlineno + 1}"
    with caplog.at_level(logging.INFO, logger="qa.app"):
        with pytest.raises(AppError) as err:
            Client(open_url, verbose=False).predict("How many prisoners?", api_name="/ask")
        status, outputs, _ = join(open_url, ["How many prisoners?", None, False, "", ""], uuid.uuid4().hex)
    assert err.value.message == FAILED  # the client learns nothing of the server's insides
    assert status == 200 and FAILED in outputs[0] and "out of bounds" not in outputs[0]
    failed = [r.getMessage() for r in caplog.records if r.levelno == logging.ERROR]
    said = f"{where}: index 7 is out of bounds for axis 0 with size 3"  # one line, the newline gone
    assert failed == [f"/ask failed for address 127.0.0.1: {said}",
                      f"question failed for address 127.0.0.1: {said}"], failed
    assert "Traceback" not in capfd.readouterr().err


def _sign_in(url: str, user: str, password: str) -> httpx.Response:
    return httpx.post(url + "login", data={"username": user, "password": password}, timeout=30)


def test_a_burst_of_wrong_passwords_locks_the_name_and_the_right_one_waits(signed_url: str, caplog,
                                                                           monkeypatch) -> None:
    now = [time.monotonic()]  # the server's throttle clock stands still during the burst, however slow
    monkeypatch.setattr(throttle, "monotonic", lambda: now[0])
    with caplog.at_level(logging.WARNING, logger="qa.surfaces.web.throttle"):
        statuses = [_sign_in(signed_url, "alice", f"guess-{n}").status_code for n in range(30)]
        assert statuses == [400] * 30
        assert _sign_in(signed_url, "alice", USERS["alice"]).status_code == 400  # locked: not even checked
    checked = [r for r in caplog.records if r.getMessage().startswith("sign-in refused for user 'alice'")]
    locked = [r for r in caplog.records if "without checking" in r.getMessage()]
    assert len(checked) == throttle.FREE + 1  # the free failures, and the one that started the lock
    assert len(locked) == 1  # the rest of the burst is refused quietly
    now[0] += 2.2  # the first lock lasts 2 s
    assert _sign_in(signed_url, "alice", USERS["alice"]).status_code == 200


def test_a_non_uploader_cannot_put_files_in_gradios_folder(signed_url: str, tmp_path: Path) -> None:
    import gradio.utils

    cache = Path(gradio.utils.get_upload_folder())
    before = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file()) if cache.exists() else 0
    with httpx.Client(timeout=30) as bob:
        assert bob.post(signed_url + "login", data={"username": "bob",
                                                    "password": USERS["bob"]}).status_code == 200
        sent = [bob.post(signed_url + "gradio_api/upload", files={"files": ("x.txt", b"y" * 1_500_000)})
                for _ in range(5)]
    assert {r.status_code for r in sent} == {403} and "Uploads are off for you" in sent[0].text
    after = sum(f.stat().st_size for f in cache.rglob("*") if f.is_file()) if cache.exists() else 0
    assert after - before < 1_000_000
    anonymous = httpx.post(signed_url + "gradio_api/upload", files={"files": ("x.txt", b"y")})
    assert anonymous.status_code == 401  # not signed in: no Gradio route answers


def test_an_uploader_is_rate_limited_and_capped(signed_url: str) -> None:
    from qa.surfaces.web.guard import UPLOADS_PER_MINUTE

    with httpx.Client(timeout=30) as alice:
        assert alice.post(signed_url + "login", data={"username": "alice",
                                                      "password": USERS["alice"]}).status_code == 200
        assert alice.post(signed_url + "gradio_api/upload",
                          files={"files": ("big.txt", b"y" * 3_000_000)}).status_code == 413
        small = {"files": ("a.txt", b"Ferry news.")}
        codes = [alice.post(signed_url + "gradio_api/upload", files=small).status_code
                 for _ in range(UPLOADS_PER_MINUTE + 2)]
    assert codes.count(200) == UPLOADS_PER_MINUTE - 1 and codes[-1] == 429  # the 413 counted as one
