"""Sign-in sessions that end (the third security review, finding 2): after an idle time and a
lifetime, at sign-out whichever cookie named them, with their open event streams; their cookies
Secure behind HTTPS. And FastAPI's /openapi.json needs sign-in (finding 6). Real servers of their
own, the fake embedder."""

from __future__ import annotations

import logging
import time
from pathlib import Path

import httpx
import pytest
from net import USERS, signed_server

import qa
from qa.surfaces.web.guard import sessions

BEAT = "gradio_api/heartbeat/tab-1"  # the event stream a page keeps open while it is open


@pytest.fixture
def frozen(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The sessions' clock, standing still unless a test moves it (however slow the run)."""
    now = [time.monotonic()]
    monkeypatch.setattr(sessions, "monotonic", lambda: now[0])
    return now


def signed(url: str, user: str = "alice") -> httpx.Client:
    """A client signed in as user (both of Gradio's cookies)."""
    client = httpx.Client(timeout=30)
    assert client.post(url + "login", data={"username": user, "password": USERS[user]}).status_code == 200
    return client


def plain_cookie_only(url: str, user: str = "alice") -> tuple[httpx.Client, httpx.Client]:
    """A client signed in as user, and one holding only its access-token-unsecure-… cookie, as a
    browser keeps over plain HTTP to a host on the network (it drops the Secure one there)."""
    client = signed(url, user)
    plain = httpx.Client(timeout=30, cookies={c.name: c.value for c in client.cookies.jar
                                              if c.name.startswith("access-token-unsecure-")})
    return client, plain


def test_session_times_are_seconds_over_zero(monkeypatch: pytest.MonkeyPatch) -> None:
    assert (qa.Config().team.session_idle, qa.Config().team.session_lifetime) == (1800, 28800)
    monkeypatch.setenv("QA_SESSION_IDLE", "600")
    assert qa.Config.from_env().team.session_idle == 600
    for name, value in (("QA_SESSION_IDLE", "0"), ("QA_SESSION_LIFETIME", "-1")):
        monkeypatch.setenv(name, value)
        with pytest.raises(ValueError, match="QA_SESSION_IDLE and QA_SESSION_LIFETIME must be more than 0"):
            qa.Config.from_env()
        monkeypatch.setenv(name, "60")


def test_openapi_json_needs_sign_in(tmp_path: Path) -> None:
    with signed_server(tmp_path) as url:
        refused = httpx.get(url + "openapi.json")
        assert refused.status_code == 401 and "Not signed in" in refused.json()["detail"]
        assert signed(url).get(url + "openapi.json").status_code == 200


def test_a_session_ends_after_its_idle_time_and_after_its_lifetime(
        tmp_path: Path, frozen: list[float], caplog: pytest.LogCaptureFixture) -> None:
    with signed_server(tmp_path, session_idle=60, session_lifetime=150) as url, \
            caplog.at_level(logging.INFO, logger="qa.app"):
        idle, busy = signed(url, "alice"), signed(url, "bob")
        frozen[0] += 40
        assert busy.get(url + "config").status_code == 200
        frozen[0] += 21  # 61 s since alice's last request, 21 since bob's
        assert idle.get(url + "config").status_code == 401
        assert idle.get(url + "gradio_api/info").json()["detail"].startswith("Not signed in, or the session")
        for _ in range(3):  # a request every 30 s keeps bob's session up to its lifetime...
            assert busy.get(url + "gradio_api/info").status_code == 200
            frozen[0] += 30
        assert busy.get(url + "config").status_code == 401  # ...150 s after sign-in, however busy
        assert signed(url, "alice").get(url + "config").status_code == 200  # a new sign-in works
    ended = [r.getMessage() for r in caplog.records if r.getMessage().startswith("session of")]
    assert ended == ["session of 'alice' ended: no request for 60 seconds (QA_SESSION_IDLE)",
                     "session of 'bob' ended: signed in 2.5 minutes ago (QA_SESSION_LIFETIME)"]


def test_sign_out_ends_the_session_whichever_cookie_named_it(tmp_path: Path) -> None:
    with signed_server(tmp_path) as url:
        alice, plain = plain_cookie_only(url)
        assert plain.get(url + "config").status_code == 200
        out = plain.get(url + "logout?all_session=false")
        assert out.status_code == 302
        assert alice.get(url + "config").status_code == 401 and plain.get(url + "config").status_code == 401
        # Signed out everywhere (Gradio's default): each of the user's sessions ends.
        here, there = signed(url, "bob"), signed(url, "bob")
        assert here.get(url + "logout").status_code == 302
        assert there.get(url + "config").status_code == 401


def test_sign_out_ends_the_sessions_open_streams(tmp_path: Path) -> None:
    with signed_server(tmp_path) as url:
        alice, plain = plain_cookie_only(url)
        # Gradio sends the heartbeat every 15 s: a stream left open would time this read out.
        with alice.stream("GET", url + BEAT, timeout=httpx.Timeout(30, read=10)) as beat:
            lines = beat.iter_lines()
            assert next(lines) == "data: ALIVE"
            assert plain.get(url + "logout?all_session=false").status_code == 302
            signed_out = time.monotonic()
            assert "data: ALIVE" not in list(lines)  # the stream ends...
            assert time.monotonic() - signed_out < 5  # ...at once, not at the next heartbeat
        assert alice.get(url + BEAT).status_code == 401


def test_an_open_stream_ends_with_its_idle_session(tmp_path: Path) -> None:
    with signed_server(tmp_path, session_idle=2) as url:
        alice = signed(url)
        with alice.stream("GET", url + BEAT, timeout=httpx.Timeout(30, read=10)) as beat:
            opened = time.monotonic()
            assert list(beat.iter_lines())[0] == "data: ALIVE"
            assert 1.5 < time.monotonic() - opened < 6  # ended 2 s after its last request
        assert alice.get(url + "config").status_code == 401


def test_session_cookies_are_lax_and_secure_behind_https(tmp_path: Path) -> None:
    with signed_server(tmp_path, trusted_proxies="127.0.0.1") as url:

        def cookies(headers: dict[str, str]) -> list[str]:
            reply = httpx.post(url + "login", data={"username": "alice", "password": USERS["alice"]},
                               headers=headers, timeout=30)
            assert reply.status_code == 200
            return reply.headers.get_list("set-cookie")

        # A TLS proxy on this machine: every session cookie is Secure, Gradio's second one too.
        https = cookies({"X-Forwarded-For": "203.0.113.7", "X-Forwarded-Proto": "https"})
        assert len(https) == 2
        assert all("; HttpOnly" in c and "; SameSite=Lax" in c and c.endswith("; Secure") for c in https)
        # Plain HTTP: the second cookie is the one a browser keeps (it refuses Secure ones there).
        plain = cookies({})
        assert all("; SameSite=Lax" in c for c in plain)
        assert [c.startswith("access-token-unsecure-") for c in plain if "Secure" not in c] == [True]


def test_a_streams_receive_loses_no_message_when_its_caller_gives_up(frozen: list[float]) -> None:
    """Starlette asks "disconnected?" with a receive() in a cancelled scope: the message that then
    arrives is the next receive()'s, not lost; once the session ends, receive() says disconnect."""
    import asyncio

    import anyio

    async def run() -> list[dict]:
        gate = sessions.Sessions(idle=60, lifetime=600)
        gate.open["token"] = sessions.Session("alice", frozen[0], frozen[0], {"token": "alice"})
        inbox: asyncio.Queue[dict] = asyncio.Queue()
        await inbox.put({"type": "http.request", "body": b""})
        ending = gate.receiving("token", inbox.get)
        with anyio.CancelScope() as asked:
            asked.cancel()
            await ending()
        got = [await asyncio.wait_for(ending(), 5)]
        asyncio.get_running_loop().call_later(0.1, gate.end, "token", "signed out")
        got.append(await asyncio.wait_for(ending(), 5))
        ending.close()
        return got

    assert asyncio.run(run()) == [{"type": "http.request", "body": b""}, {"type": "http.disconnect"}]
