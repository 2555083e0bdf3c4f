"""Requests from a page of another origin (the third security review, finding 1): another port of
this host is one *site* to a browser, so its pages got the user's cookies along and acted for her
(an upload stored as alice, a sign-in, her token read through Gradio's CORS). Refused with 403
unless the origin is the server's own or listed in QA_ALLOWED_ORIGINS; the page itself works as
before in Chromium. Real servers of their own, the fake embedder."""

from __future__ import annotations

import contextlib
import http.server
import logging
import threading
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from net import USERS, chromium, free_port, signed_server

import qa

ALLOWED = "https://chat.example.com"  # a TLS proxy's address, as QA_ALLOWED_ORIGINS would list it


def signed(url: str, user: str = "alice") -> httpx.Client:
    client = httpx.Client(timeout=30)
    assert client.post(url + "login", data={"username": user, "password": USERS[user]}).status_code == 200
    return client


def test_requests_from_another_origin_are_refused(tmp_path: Path, caplog: pytest.LogCaptureFixture) -> None:
    other = "http://127.0.0.1:9"  # another port of this host
    with signed_server(tmp_path, allowed_origins=ALLOWED) as url, \
            caplog.at_level(logging.WARNING, logger="qa.app"):
        own, alice = url.rstrip("/"), signed(url)  # a script: no Origin, as gradio_client sends
        fns = {d.get("api_name"): d["id"] for d in alice.get(url + "config").json()["dependencies"]}

        def status(method: str, path: str, origin: str | None, headers: dict | None = None,
                   **kw: object) -> int:
            sent = {**(headers or {}), **({"Origin": origin} if origin else {})}
            return alice.request(method, url + path, headers=sent, **kw).status_code  # type: ignore[arg-type]

        login = {"data": {"username": "alice", "password": USERS["alice"]}}  # signs her in again
        article = {"files": {"files": ("planted.txt", b"An article the other page planted.\n")}}
        join = {"json": {"data": ["Who?", None, False, "", ""], "fn_index": fns["respond"],
                         "session_hash": uuid.uuid4().hex}}
        ask = {"json": {"data": ["Who?", None]}}
        acting = [("POST", "login", login), ("POST", "gradio_api/upload", article),
                  ("POST", "gradio_api/queue/join", join), ("POST", "gradio_api/run/ask", ask),
                  ("POST", "gradio_api/call/ask", ask), ("GET", "gradio_api/token", {})]
        assert [status(m, p, other, **kw) for m, p, kw in acting] == [403] * len(acting)
        assert [status(m, p, "null", **kw) for m, p, kw in acting[:3]] == [403] * 3  # a sandboxed frame
        assert [status(m, p, origin, **kw) for m, p, kw in acting[:5] for origin in (own, ALLOWED, None)] == [
            200] * 15
        refused = httpx.post(url + "login", headers={"Origin": other}, **login)  # type: ignore[arg-type]
        assert refused.json()["detail"].startswith("Refused: this request came from another web page "
                                                   "(http://127.0.0.1:9), not from the chat's own page.")
        # Sign-out, which a page can send as an image: refused when the browser says it comes from
        # another page, done from the chat's own.
        logout = {"follow_redirects": False}
        assert status("GET", "logout", None, headers={"Sec-Fetch-Site": "same-site"}, **logout) == 403
        assert status("GET", "config", None) == 200
        assert status("GET", "logout", None, headers={"Sec-Fetch-Site": "same-origin"}, **logout) == 302
    lines = [r.getMessage() for r in caplog.records if "another origin" in r.getMessage()]
    assert lines == [
        "request from another origin refused for user alice: POST /login from http://127.0.0.1:9 "
        "(further ones in the next minute are not logged)",
        "request from another origin refused for address 127.0.0.1: POST /login from http://127.0.0.1:9 "
        "(further ones in the next minute are not logged)"]


def test_allowed_origins_must_be_origins(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("QA_ALLOWED_ORIGINS", "https://chat.example.com, http://10.0.0.2:8080/, http://[::1]:7860")
    assert qa.Config.from_env().team.allowed_origins.startswith("https://chat.example.com")
    for bad in ("chat.example.com", "https://chat.example.com/chat", "null", "ftp://chat.example.com"):
        monkeypatch.setenv("QA_ALLOWED_ORIGINS", f"https://ok.example.com,{bad}")
        with pytest.raises(ValueError, match=f"QA_ALLOWED_ORIGINS entry '{bad}' is not an origin; write "):
            qa.Config.from_env()


# The other page, on another port of 127.0.0.1: it tries to read alice's token, store an article
# as her, and sign the browser in as bob, each with the cookies the browser adds.
ATTACK = """async chat => {
  const seen = {};
  try { const r = await fetch(chat + "gradio_api/token", {credentials: "include"});
        seen.token = await r.text(); } catch (e) { seen.token = "unread"; }
  const form = new FormData();
  form.append("files", new Blob(["An article the other page planted."]), "planted.txt");
  await fetch(chat + "gradio_api/upload",
              {method: "POST", body: form, credentials: "include", mode: "no-cors"});
  const login = new URLSearchParams({username: "bob", password: BOB});
  await fetch(chat + "login", {method: "POST", body: login, credentials: "include", mode: "no-cors"});
  return seen; }"""


@contextlib.contextmanager
def other_page() -> Iterator[str]:
    """A page on another port of this host (an empty one: the test runs its script)."""

    class Empty(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            body = b"<!doctype html><title>another page</title>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: object) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", free_port()), Empty)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/"
    finally:
        server.shutdown()
        server.server_close()


@pytest.mark.browser
def test_another_page_in_the_same_browser_cannot_act_for_the_user(tmp_path: Path) -> None:
    """Alice signs in and asks on the chat's page; another page in her browser then tries to read
    her token, store an article as her and sign her browser in as bob: each is refused."""
    with signed_server(tmp_path) as url, other_page() as elsewhere, chromium() as browser:
        context = browser.new_context()
        answered: list[tuple[str, str, int]] = []
        context.on("response", lambda r: answered.append((r.request.method, r.url[len(url) - 1:], r.status))
                   if r.url.startswith(url) else None)
        page = context.new_page()
        # The page works as before: sign in, ask, read the answer.
        page.goto(url)
        page.fill("input[type=text]", "alice")
        page.fill("input[type=password]", USERS["alice"])
        page.click("button:has-text('Login')")
        page.wait_for_selector("text=articles indexed", timeout=60_000)
        page.fill("#qa-question textarea", "Who won the election?")
        page.click("#qa-ask")
        page.wait_for_function("!document.querySelector('.qa-pending, .qa-still-reading') && "
                               "document.querySelectorAll('.qa-a:not(.qa-pending)').length === 1",
                               timeout=60_000)
        assert [a for a in answered if a[2] >= 400] == []
        own = len(answered)
        # The other page, in a tab of the same browser.
        attacker = context.new_page()
        attacker.goto(elsewhere)
        seen = attacker.evaluate(ATTACK.replace("BOB", repr(USERS["bob"])), url)
        attacker.wait_for_timeout(500)
        theirs = [a for a in answered[own:] if a[0] != "OPTIONS"]
        assert sorted(theirs) == [("GET", "/gradio_api/token", 403), ("POST", "/gradio_api/upload", 403),
                                  ("POST", "/login", 403)]
        assert seen["token"] == "unread" or "Refused" in seen["token"]
        page.reload()
        page.wait_for_selector("text=Signed in as", timeout=60_000)
        assert "Signed in as alice" in page.inner_text("#qa-account")  # not bob
        # The page's own sign-out passes (a link of the same origin), and signs her out.
        page.click(".qa-account a:has-text('Sign out')")
        page.wait_for_selector("input[type=password]", timeout=30_000)
        assert ("GET", "/logout?all_session=false", 302) in answered
