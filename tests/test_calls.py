"""Every function of the chat page behind the guard, whatever route or index reaches it, and the
requests that made Gradio log a traceback (the third security review, findings 3 and 4): each is
refused with a 4xx and one log line. A real signed-in server of its own, the fake embedder."""

from __future__ import annotations

import json
import logging
import os
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from net import signed_server

# One user per kind of refusal: the guard logs one refusal a minute per client.
USERS = {"alice": "alice-pass-1", **{f"user{n}": f"pass-{n}-xyz" for n in range(12)}}
FILE = {"_type": "gradio.FileData"}


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """The server's URL and its articles folder."""
    root = tmp_path_factory.mktemp("calls")
    with signed_server(root, users=USERS, uploaders=",".join(USERS)) as url:
        yield url, root / "seeds"


def client(url: str, user: str) -> httpx.Client:
    """A client signed in as user."""
    signed = httpx.Client(timeout=30)
    assert signed.post(url + "login", data={"username": user, "password": USERS[user]}).status_code == 200
    return signed


def functions(user: httpx.Client, url: str) -> dict[str, int]:
    """The page's functions by name, as its config lists them."""
    return {d.get("api_name"): d["id"] for d in user.get(url + "config").json()["dependencies"]}


def raw(user: httpx.Client, url: str, route: str, body: str) -> httpx.Response:
    """POST a JSON body as written (httpx's json= cannot send a lone surrogate's escape)."""
    return user.post(url + "gradio_api/" + route, content=body.encode(),
                     headers={"content-type": "application/json"})


def refusals(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [m for r in caplog.records if r.name == "qa.app" and (m := r.getMessage()).startswith("malformed")]


LATER = " (further ones in the next minute are not logged)"


def test_the_function_gradio_runs_is_the_one_checked_whatever_the_route(
        server: tuple[str, Path], capfd: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture) -> None:
    """fn_index wins over the name in run/ and api/ (Gradio's own lookup): the guard checks that one."""
    url, seeds = server
    user = client(url, "user0")
    fns = functions(user, url)
    article = {"path": str(sorted(seeds.iterdir())[0]), "meta": FILE}
    capfd.readouterr()
    with caplog.at_level(logging.WARNING, logger="qa.app"):
        replies = [user.post(url + "gradio_api/run/ask", json={"data": ["Who?", None], "fn_index": 999}),
                   user.post(url + "gradio_api/api/ask", json={"data": ["Who?", None], "fn_index": "999"}),
                   # The upload function, by its index behind ask's name, given an article's path.
                   user.post(url + "gradio_api/run/ask", json={"data": [article], "fn_index": fns["upload"]}),
                   # The step that empties the box, run by the page alone, by index (true is 1 to
                   # Gradio, which failed with a traceback); respond (5 inputs) by its name, as a batch;
                   # the page's other events by their names.
                   user.post(url + "gradio_api/run/ask", json={"data": ["Who?", "Who?"], "fn_index": True}),
                   user.post(url + "gradio_api/call/respond", json={"data": ["Who?"]}),
                   user.post(url + "gradio_api/queue/join", json={
                       "data": ["Who?", None, False, "", ""], "fn_index": fns["respond"],
                       "session_hash": uuid.uuid4().hex, "batched": True}),
                   user.post(url + "gradio_api/call/example", json={"data": ["Who?", None]}),
                   user.post(url + "gradio_api/call/stop", json={"data": []}),
                   user.post(url + "gradio_api/call/new_chat", json={"data": []})]
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception in ASGI" not in err, err[-3000:]
    assert [(r.status_code, r.json()["detail"]) for r in replies] == [
        (422, "there is no function '999': /gradio_api/info lists them"),
        (422, "there is no function '999': /gradio_api/info lists them"),
        (422, "upload's input 1 names a file that was not uploaded (POST /gradio_api/upload first)"),
        (422, f"{ {i: name for name, i in fns.items()}[1]} runs in the page, not on the server: there is "
              "nothing to call"),
        (422, "respond takes 5 inputs, not 1"),
        (422, "respond takes one call at a time, not a batch (send batched: false)"),
        (422, "example takes 5 inputs, not 2"),
        (422, "stop takes 1 inputs, not 0"),
        (422, "new_chat takes 1 inputs, not 0")]
    assert refusals(caplog) == ["malformed call refused for user user0: there is no function '999': "
                                "/gradio_api/info lists them" + LATER]


def test_what_made_gradio_log_a_traceback_is_a_4xx_and_one_line(
        server: tuple[str, Path], capfd: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """Each of the review's requests, each from a user of its own: a 4xx saying why, and one line."""
    from gradio.utils import get_upload_folder

    url, _ = server
    users = {name: client(url, name) for name in USERS if name.startswith("user") and name != "user0"}
    fns = functions(users["user1"], url)
    dotfile = {"files": (".notes.txt", b"Talks resumed.\n")}
    notes = users["user8"].post(url + "gradio_api/upload", files=dotfile)
    capfd.readouterr()

    def join(who: str, fn: str, data: str) -> httpx.Response:
        return raw(users[who], url, "queue/join", f'{{"data": {data}, "fn_index": {fns[fn]}, '
                                                    f'"session_hash": "{uuid.uuid4().hex}"}}')

    with caplog.at_level(logging.WARNING, logger="qa.app"):
        replies = {
            "user1": users["user1"].post(url + "gradio_api/call/v2/nosuch", json={}),
            "user2": users["user2"].post(url + "gradio_api/call/v2/ask", json={"question": "Who?", "x": 1}),
            # Gradio's temp folder itself (it then tried to delete the folder at shutdown).
            "user3": join("user3", "upload", json.dumps([{"path": get_upload_folder(), "meta": FILE}])),
            "user4": users["user4"].post(url + "gradio_api/component_server", json={
                "component_id": 9999, "fn_name": "x", "data": None, "session_hash": "s"}),
            "user5": users["user5"].get(url + "gradio_api/queue/data?session_hash=nosuch"),
            "user6": users["user6"].get(url + "gradio_api/call/ask/nosuchevent"),
            "user7": join("user7", "respond", '["\\ud800", null, false, "", ""]'),
            "user9": users["user9"].post(url + "gradio_api/stream/anyevent", json={"data": []}),
            "user10": raw(users["user10"], url, "call/ask", '{"data": ["\\udc00", null]}'),
        }
        # An uploaded dotfile, with the working folder above Gradio's temp folder (a server started
        # from / or /tmp): Gradio refused it with a traceback and {'error': None}.
        monkeypatch.chdir(os.path.dirname(os.path.realpath(get_upload_folder())))
        replies["user8"] = join("user8", "upload", json.dumps([{"path": notes.json()[0], "meta": FILE}]))
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception in ASGI" not in err, err[-3000:]
    unknown = "there is no such session or event in the queue: join it first (POST /gradio_api/queue/join)"
    broken = "the request holds a broken character (a lone surrogate, such as \\ud800): send Unicode text"
    why = {
        "user1": (422, "there is no function named 'nosuch': /gradio_api/info lists them"),
        "user2": (422, "ask has no parameter 'x'; it takes question, history"),
        "user3": (422, "upload's input 1 names a file that was not uploaded (POST /gradio_api/upload first)"),
        "user4": (422, "no component serves a function 'x' (component 9999)"),
        "user5": (404, unknown), "user6": (404, unknown), "user7": (422, broken),
        "user9": (422, "no input of this page streams: /gradio_api/stream/ has nothing to take"),
        "user10": (422, broken),
        "user8": (422, "upload's input 1 is a file whose name begins with '.' (.notes.txt), which this "
                       "server cannot read: rename it, e.g. notes.txt")}
    assert {who: (r.status_code, r.json()["detail"]) for who, r in replies.items()} == why
    assert sorted(refusals(caplog)) == sorted(f"malformed call refused for user {who}: {detail}{LATER}"
                                              for who, (_, detail) in why.items())
