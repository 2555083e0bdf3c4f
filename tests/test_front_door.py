"""The chat server's front door against a client on the same machine (the second security review):
whose address a sign-in counts under, who a lockout can lock out, what answers before sign-in, and
what malformed calls leave in the log. Real servers of their own, the fake embedder."""

from __future__ import annotations

import contextlib
import json
import logging
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from net import USERS, signed_server

import qa
from qa.surfaces.web import throttle

SPRAY = throttle.FREE_ADDRESS + 2  # wrong sign-ins, each for a name of its own: just past the address's


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The sign-in throttle's clock, standing still unless a test moves it (however slow the run)."""
    now = [time.monotonic()]
    monkeypatch.setattr(throttle, "monotonic", lambda: now[0])
    return now


def sign_in(url: str, user: str, password: str, forwarded: str | None = None) -> int:
    headers = {"X-Forwarded-For": forwarded} if forwarded else {}
    return httpx.post(url + "login", data={"username": user, "password": password}, headers=headers,
                      timeout=30).status_code


def messages(caplog: pytest.LogCaptureFixture, logger: str) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == logger]


# ---- 1. The client's address cannot be forged ------------------------------------------------

def test_a_forged_forwarded_for_is_ignored_and_the_address_still_locks(
        tmp_path: Path, frozen: list[float], caplog: pytest.LogCaptureFixture) -> None:
    with signed_server(tmp_path) as url, caplog.at_level(logging.INFO, logger="qa.surfaces.web.throttle"):
        codes = [sign_in(url, f"m{n}", "x", forwarded=f"10.9.9.{n}") for n in range(SPRAY)]
    logged = messages(caplog, "qa.surfaces.web.throttle")
    assert codes == [400] * len(codes)
    assert [m for m in logged if "10.9.9." in m] == []  # every failure is counted under 127.0.0.1
    assert f"sign-in refused for user 'm{throttle.FREE_ADDRESS}' from 127.0.0.1; locked for 2 s" in logged[-2]
    assert logged[-1].startswith(f"sign-in refused without checking for user 'm{throttle.FREE_ADDRESS + 1}' "
                                 "from 127.0.0.1: locked")


def test_a_trusted_proxy_names_the_client_and_is_logged_beside_it(
        tmp_path: Path, frozen: list[float], caplog: pytest.LogCaptureFixture) -> None:
    with signed_server(tmp_path, trusted_proxies="127.0.0.1") as url, \
            caplog.at_level(logging.INFO, logger="qa.surfaces.web.throttle"):
        # The nearest hop that is not a trusted proxy is the client; a hop that is no address is ignored.
        assert sign_in(url, "alice", "wrong", forwarded="203.0.113.7, 127.0.0.1") == 400
        assert sign_in(url, "bob", "wrong", forwarded="not-an-address") == 400
        # Behind the proxy, each client has its address's own count: none is locked by the others.
        codes = [sign_in(url, f"m{n}", "x", forwarded=f"10.9.9.{n}") for n in range(SPRAY)]
        assert sign_in(url, "alice", USERS["alice"], forwarded="198.51.100.4") == 200
    logged = messages(caplog, "qa.surfaces.web.throttle")
    assert logged[0] == "sign-in refused for user 'alice' from 203.0.113.7 via proxy 127.0.0.1"
    assert logged[1] == "sign-in refused for user 'bob' from 127.0.0.1"
    assert codes == [400] * len(codes) and not [m for m in logged if "locked" in m]
    assert logged[-1] == "signed in: 'alice' from 198.51.100.4 via proxy 127.0.0.1"


def test_trusted_proxies_must_be_addresses(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QA_TRUSTED_PROXIES", "127.0.0.1, 10.0.0.0/8, ::1")
    assert qa.Config.from_env().team.trusted_proxies == "127.0.0.1, 10.0.0.0/8, ::1"
    monkeypatch.setenv("QA_TRUSTED_PROXIES", "127.0.0.1,proxy.local")
    with pytest.raises(ValueError, match="QA_TRUSTED_PROXIES entry 'proxy.local' is not an address"):
        qa.Config.from_env()


# ---- 2. A stranger cannot lock a user out where she signs in ----------------------------------

def test_wrong_passwords_from_elsewhere_do_not_lock_out_an_address_that_signed_in_before(
        tmp_path: Path, frozen: list[float]) -> None:
    home, stranger = "198.51.100.4", "203.0.113.9"
    with signed_server(tmp_path, trusted_proxies="127.0.0.1") as url:
        assert sign_in(url, "alice", USERS["alice"], forwarded=home) == 200
        guesses = [sign_in(url, "alice", f"guess-{n}", forwarded=stranger) for n in range(throttle.FREE + 3)]
        assert guesses == [400] * (throttle.FREE + 3)
        assert sign_in(url, "alice", USERS["alice"], forwarded="192.0.2.1") == 400  # the name is locked...
        assert sign_in(url, "alice", USERS["alice"], forwarded=home) == 200  # ...but not where she signed in
        # There the name locks after her own failures (at that address alone), as anywhere.
        typos = [sign_in(url, "alice", "typo", forwarded=home) for _ in range(throttle.FREE + 1)]
        assert typos == [400] * (throttle.FREE + 1)
        assert sign_in(url, "alice", USERS["alice"], forwarded=home) == 400
        frozen[0] += 2.2  # that lock's 2 s
        assert sign_in(url, "alice", USERS["alice"], forwarded=home) == 200


def test_an_address_is_remembered_for_its_user_for_30_days() -> None:
    now = [0.0]
    gate = throttle.Throttle(clock=lambda: now[0])
    assert gate.keys("alice", "10.0.0.9") == ("user 'alice'", "address 10.0.0.9")
    gate.remember("alice", "10.0.0.9")
    assert gate.keys("alice", "10.0.0.9") == ("user 'alice' at 10.0.0.9", "address 10.0.0.9")
    assert gate.keys("bob", "10.0.0.9")[0] == "user 'bob'"
    assert gate.keys("alice", "10.0.0.8")[0] == "user 'alice'"
    now[0] += throttle.REMEMBER + 1
    assert gate.keys("alice", "10.0.0.9")[0] == "user 'alice'"


# ---- 3. Nothing of Gradio's API answers before sign-in; open streams are capped ----------------

SIGNED_OUT = [("GET", "heartbeat/anything"), ("GET", "app_id"), ("GET", "token"), ("GET", "user"),
              ("GET", "startup-events"), ("GET", "runs"), ("GET", "info"), ("GET", "login_check"),
              ("GET", "queue/data?session_hash=x"), ("GET", "upload_progress?upload_id=x"),
              ("POST", "queue/join"), ("POST", "upload"), ("POST", "reset"), ("POST", "cancel"), ("GET", "")]


def _status(client: httpx.Client, method: str, url: str) -> int:
    """The status a request gets, without waiting for an event stream to end."""
    with client.stream(method, url, json={} if method == "POST" else None) as reply:
        return reply.status_code


@pytest.fixture(scope="module")
def signed_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with signed_server(tmp_path_factory.mktemp("front")) as url:
        yield url


def test_every_gradio_api_route_is_refused_before_sign_in(signed_url: str) -> None:
    with httpx.Client(timeout=30) as stranger:
        assert {route: _status(stranger, method, signed_url + "gradio_api/" + route)
                for method, route in SIGNED_OUT} == {route: 401 for _, route in SIGNED_OUT}
        assert "Not signed in" in stranger.get(signed_url + "gradio_api/app_id").text
        assert stranger.get(signed_url).status_code == 200  # the login page
        assert stranger.post(signed_url + "login", data={"username": "bob",
                                                          "password": USERS["bob"]}).status_code == 200
        assert _status(stranger, "GET", signed_url + "gradio_api/heartbeat/anything") == 200  # signed in now


def test_a_client_holds_a_bounded_number_of_event_streams(signed_url: str) -> None:
    from qa.surfaces.web.guard import STREAMS_PER_CLIENT

    limits = httpx.Limits(max_connections=STREAMS_PER_CLIENT + 8)
    with httpx.Client(timeout=30, limits=limits) as bob, httpx.Client(timeout=30) as alice, \
            contextlib.ExitStack() as held:
        for user, client in (("bob", bob), ("alice", alice)):
            assert client.post(signed_url + "login", data={"username": user,
                                                            "password": USERS[user]}).status_code == 200
        streams = [held.enter_context(bob.stream("GET", signed_url + f"gradio_api/heartbeat/s{n}"))
                   for n in range(STREAMS_PER_CLIENT)]
        assert {s.status_code for s in streams} == {200}
        assert _status(bob, "GET", signed_url + "gradio_api/heartbeat/one-more") == 429
        assert _status(alice, "GET", signed_url + "gradio_api/heartbeat/hers") == 200  # per client
        streams[0].close()
        deadline = time.monotonic() + 30  # the server notices the closed stream's disconnect
        while (code := _status(bob, "GET", signed_url + "gradio_api/heartbeat/again")) == 429:
            assert time.monotonic() < deadline
            time.sleep(0.2)
        assert code == 200


@pytest.mark.browser
def test_the_login_page_needs_nothing_from_gradios_api(signed_url: str) -> None:
    from net import chromium

    with chromium() as browser:
        page = browser.new_context().new_page()
        refused: list[str] = []
        page.on("response", lambda r: refused.append(r.url) if r.status >= 400 else None)
        page.goto(signed_url)
        page.wait_for_selector("input[type=password]", timeout=30_000)
        page.fill("input[type=text]", "bob")
        page.fill("input[type=password]", USERS["bob"])
        page.click("button:has-text('Login')")
        page.wait_for_selector("text=articles indexed", timeout=60_000)
        assert refused == []


# ---- 4. Malformed calls: one line in the log, no traceback ------------------------------------

def _join(client: httpx.Client, url: str, fn_index: object, data: list) -> int:
    """The status of a raw queue/join call, its event (when one is queued) read to the end."""
    session = uuid.uuid4().hex
    joined = client.post(url + "gradio_api/queue/join", json={"data": data, "fn_index": fn_index,
                                                              "session_hash": session, "trigger_id": None})
    if joined.status_code == 200:
        with client.stream("GET", url + f"gradio_api/queue/data?session_hash={session}") as events:
            for line in events.iter_lines():
                if line.startswith("data:") and json.loads(line[5:]).get("msg") == "process_completed":
                    break
    return joined.status_code


def test_malformed_calls_are_refused_in_one_line_without_a_traceback(
        signed_url: str, capfd: pytest.CaptureFixture, caplog: pytest.LogCaptureFixture) -> None:
    hostname = {"path": "/etc/hostname", "meta": {"_type": "gradio.FileData"}}
    with httpx.Client(timeout=30) as alice, caplog.at_level(logging.WARNING, logger="qa.app"):
        assert alice.post(signed_url + "login", data={"username": "alice",
                                                       "password": USERS["alice"]}).status_code == 200
        fns = {d.get("api_name"): d["id"] for d in alice.get(signed_url + "config").json()["dependencies"]}
        capfd.readouterr()
        codes = []
        for _ in range(3):
            codes += [_join(alice, signed_url, fns["respond"], ["Who?"]),  # it takes 5 inputs
                      _join(alice, signed_url, fns["upload"], [hostname]),
                      _join(alice, signed_url, fns["upload"], ["/etc/hostname"]),
                      _join(alice, signed_url, 999, []),
                      alice.post(signed_url + "gradio_api/call/nosuch", json={"data": []}).status_code,
                      alice.post(signed_url + "gradio_api/call/ask", json={"data": []}).status_code]
        refusal = alice.post(signed_url + "gradio_api/call/upload", json={"data": [hostname]})
        well_formed = _join(alice, signed_url, fns["respond"], ["Who?", None, False, "", ""])
    err = capfd.readouterr().err
    assert "Traceback" not in err and "Exception in ASGI" not in err, err[-3000:]
    assert codes == [422] * 18 and well_formed == 200
    assert refusal.json() == {"detail": "upload's input 1 names a file that was not uploaded "
                                        "(POST /gradio_api/upload first)"}
    refused = [m for m in messages(caplog, "qa.app") if m.startswith("malformed call refused")]
    assert refused == ["malformed call refused for user alice: respond takes 5 inputs, not 1 (further ones "
                       "in the next minute are not logged)"]
