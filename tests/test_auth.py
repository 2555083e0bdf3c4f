"""Sign-in: password hashes, QA_AUTH settings, the start-up warning, and a real signed-in server."""

from __future__ import annotations

import hashlib
import shutil
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from net import chromium, free_port, serving
from reading import read_by_model

import app
import qa
from qa.surfaces.cli import main
from qa.surfaces.web.auth import (
    AuthError,
    check_password,
    hash_password,
    is_loopback,
    make_auth,
    open_warning,
    parse_plain,
    read_auth_file,
)
from qa.surfaces.web.throttle import FREE, FREE_ADDRESS, MAX_LOCK, Throttle

SEEDS = Path(__file__).parent.parent / "seeds"
USERS = {"alice": "alice-pass-1", "bob": "bob: pass 2", "dave": "dave-pass-4"}


# ---- Without a server -------------------------------------------------------------------------

def test_hash_round_trip_and_salt() -> None:
    stored = hash_password("correct horse")
    assert stored.startswith("scrypt$") and check_password("correct horse", stored)
    assert not check_password("correct hors", stored) and not check_password("", stored)
    assert hash_password("correct horse") != stored  # a new salt each time
    for broken in ("", "scrypt$1$2", "md5$1$1$1$AA==$AA==", stored[:-4] + "!!!!"):
        assert check_password("correct horse", broken) is False


def test_plain_users_and_their_errors() -> None:
    assert parse_plain("alice:a:b, bob:x ,") == {"alice": "a:b", "bob": "x"}
    for bad in ("alice", ":pw", "alice:"):
        with pytest.raises(AuthError, match="user:password"):
            parse_plain(bad)


def test_auth_file_lines_and_errors(tmp_path: Path) -> None:
    good = tmp_path / "users.txt"
    good.write_text(f"# team\n\ncarol:{hash_password('pw-carol')}\n")
    assert set(read_auth_file(good)) == {"carol"}
    bad = tmp_path / "bad.txt"
    bad.write_text("carol:plaintext\n")
    with pytest.raises(AuthError, match="line 1.*qa hash-password"):
        read_auth_file(bad)
    with pytest.raises(AuthError, match="cannot read"):
        read_auth_file(tmp_path / "missing.txt")


def test_make_auth_checks_both_sources(tmp_path: Path) -> None:
    assert make_auth(qa.Config()) is None
    users = tmp_path / "users.txt"
    users.write_text(f"carol:{hash_password('pw-carol')}\n")
    check = make_auth(qa.Config.of(auth="alice:pw-alice", auth_file=str(users)))
    assert check is not None
    assert check("alice", "pw-alice") and check("carol", "pw-carol")
    assert not check("alice", "pw-carol") and not check("carol", "pw-alice") and not check("eve", "x")


def test_every_check_costs_one_scrypt_whoever_the_user(monkeypatch: pytest.MonkeyPatch, tmp_path) -> None:
    """Plain passwords are hashed at start-up: a known name and an unknown one cost the same."""
    users = tmp_path / "users.txt"
    users.write_text(f"carol:{hash_password('pw-carol')}\n")
    check = make_auth(qa.Config.of(auth="alice:pw-alice", auth_file=str(users)))
    assert check is not None
    calls: list[int] = []
    real = hashlib.scrypt
    monkeypatch.setattr(hashlib, "scrypt", lambda *a, **k: calls.append(1) or real(*a, **k))
    cases = (("alice", "pw-alice", True), ("alice", "wrong", False), ("carol", "wrong", False),
             ("nobody", "pw-alice", False), ("", "", False))
    for user, password, ok in cases:
        calls.clear()
        assert check(user, password) is ok
        assert len(calls) == 1, (user, password)
    assert "pw-alice" not in repr(check.__closure__)  # only its hash is kept


def test_the_throttle_locks_names_and_addresses_with_doubling_waits() -> None:
    now = [0.0]
    gate = Throttle(clock=lambda: now[0])
    keys = ("user 'alice'", "address 10.0.0.9")
    assert [gate.failed(keys) for _ in range(FREE)] == [0.0] * FREE
    assert gate.locked(keys) == (0.0, False)
    assert gate.failed(keys) == 2.0 and gate.locked(keys) == (2.0, True)
    assert gate.locked(keys)[1] is False  # the first refusal of a lock is the one logged
    now[0] += 2.0
    assert gate.locked(keys)[0] == 0.0 and gate.failed(keys) == 4.0
    gate.succeeded(keys[0])  # the name is cleared; the address keeps its count
    assert gate.locked(("user 'alice'",))[0] == 0.0
    # A spray of names from one address: each name is fresh, the address has failed 7 times so far.
    assert all(gate.failed((f"user 'u{n}'", keys[1])) == 0.0 for n in range(FREE_ADDRESS - FREE - 2))
    assert gate.failed(("user 'z'", keys[1])) == 2.0  # more than FREE_ADDRESS from the address
    for _ in range(40):
        lock = gate.failed(("user 'eve'",))
    assert lock == MAX_LOCK
    now[0] += 10_000  # quiet for longer than FORGET: failures are forgotten
    assert gate.failed(("user 'eve'",)) == 0.0


def test_hash_password_command_makes_a_usable_line(tmp_path: Path) -> None:
    result = CliRunner().invoke(main, ["hash-password", "carol"], input="s3cret-pw\ns3cret-pw\n")
    assert result.exit_code == 0, result.output
    line = result.stdout.strip().splitlines()[-1]
    users = tmp_path / "users.txt"
    users.write_text(line + "\n")
    check = make_auth(qa.Config.of(auth_file=str(users)))
    assert check is not None and check("carol", "s3cret-pw") and not check("carol", "s3cret")
    piped = CliRunner().invoke(main, ["hash-password", "dan", "--stdin"], input="pw-dan-123\n")
    assert piped.exit_code == 0 and check_password("pw-dan-123", piped.stdout.strip().split(":", 1)[1])
    bad = CliRunner().invoke(main, ["hash-password", "a:b", "--stdin"], input="x\n")
    assert bad.exit_code == 2 and "Traceback" not in bad.output


def test_non_loopback_without_sign_in_warns() -> None:
    assert is_loopback("127.0.0.1") and is_loopback("::1") and is_loopback("localhost")
    assert not is_loopback("0.0.0.0") and not is_loopback("192.168.1.4")
    assert open_warning("127.0.0.1", signed_in=False) is None
    assert open_warning("0.0.0.0", signed_in=True) is None
    warning = open_warning("0.0.0.0", signed_in=False)
    assert warning and "\n" not in warning and "QA_AUTH" in warning and "add articles" not in warning
    assert "add articles (QA_UPLOADS=1)" in (open_warning("10.0.0.2", False, uploads=True) or "")


def test_app_main_prints_the_warning_once(monkeypatch: pytest.MonkeyPatch, capsys, fake_qa: qa.QA) -> None:
    launched: list[tuple] = []
    monkeypatch.setattr(app, "launch", lambda demo, config, host, port: launched.append((host, port)))
    monkeypatch.setattr(app.qa, "QA", lambda config: fake_qa)
    for key in ("QA_AUTH", "QA_AUTH_FILE"):
        monkeypatch.delenv(key, raising=False)
    port = free_port()  # app.main checks that it may listen there: any free port, no root needed
    monkeypatch.setattr("sys.argv", ["app.py", "--host", "0.0.0.0", "--port", str(port)])
    app.main()
    err = capsys.readouterr().err.strip().splitlines()
    assert [line for line in err if line.startswith("warning:")] == [err[0]] and "0.0.0.0" in err[0]
    monkeypatch.setenv("QA_AUTH", "alice:pw")
    app.main()
    assert "warning:" not in capsys.readouterr().err
    monkeypatch.setenv("QA_AUTH", "nocolon")
    with pytest.raises(SystemExit, match="user:password"):
        app.main()
    assert launched == [("0.0.0.0", port), ("0.0.0.0", port)]


# ---- A real signed-in server ------------------------------------------------------------------

@pytest.fixture(scope="module")
def signed(real_qa: qa.QA, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, qa.QA]]:
    """The real model behind a signed-in server: alice may upload, bob may not, carol is in a file."""
    root = tmp_path_factory.mktemp("auth")
    shutil.copytree(SEEDS, root / "seeds")
    users = root / "users.txt"
    users.write_text(f"carol:{hash_password('carol-pass-3')}\n")
    config = real_qa.config.replace(
        seeds_dir=root / "seeds", index_dir=root / "index", uploaders="alice", uploads=False, rate=5,
        auth=",".join(f"{u}:{p}" for u, p in USERS.items()), auth_file=str(users))
    engine = qa.QA(config, embedder=real_qa.embedder)
    engine.build()
    with serving(engine) as url:
        yield url, engine


@pytest.mark.slow
def test_without_credentials_page_and_api_are_refused(signed: tuple[str, qa.QA]) -> None:
    from gradio_client import Client
    from gradio_client.exceptions import AuthenticationError

    url, _ = signed
    assert httpx.get(url + "config").status_code == 401
    assert httpx.post(url + "gradio_api/call/ask", json={"data": ["Who?", []]}).status_code == 401
    assert httpx.post(url + "login", data={"username": "alice", "password": "nope"}).status_code == 400
    with pytest.raises(AuthenticationError, match="credentials were not provided"):
        Client(url, verbose=False)
    with pytest.raises(ValueError, match=r"Could not login to http://127\.0\.0\.1:\d+/"):
        Client(url, auth=("alice", "wrong"), verbose=False)


@pytest.mark.slow
def test_gradio_client_with_credentials(signed: tuple[str, qa.QA]) -> None:
    from gradio_client import Client

    url, engine = signed
    for user, password in (("bob", USERS["bob"]), ("carol", "carol-pass-3")):
        client = Client(url, auth=(user, password), verbose=False)
        answer = client.predict("How many Taliban prisoners will be released each day?", api_name="/ask")
        assert answer["answered"] and answer["short"] == "100"
        read_by_model(answer)
        for c in answer["citations"]:
            assert engine.index.articles[c["source"]].text[c["start"]:c["end"]] == c["text"]


@pytest.mark.slow
def test_rate_limit_answers_with_a_message(signed: tuple[str, qa.QA]) -> None:
    from gradio_client import Client

    client = Client(signed[0], auth=("dave", USERS["dave"]), verbose=False)
    for _ in range(5):  # QA_RATE=5 in this server
        client.predict("Who is the Taliban's spokesman?", api_name="/ask")
    with pytest.raises(Exception, match="Too many questions: the limit is 5 a minute"):
        client.predict("Who is the Taliban's spokesman?", api_name="/ask")


@pytest.mark.slow
def test_uploads_need_the_right(signed: tuple[str, qa.QA], tmp_path: Path) -> None:
    from gradio_client import Client, handle_file

    url, engine = signed
    article = tmp_path / "rights_test.txt"
    article.write_text("Harbour Notes\n\nThe Tollby harbour handled 73 ferries in March.\n")
    bob = Client(url, auth=("bob", USERS["bob"]), verbose=False)
    with pytest.raises(Exception, match="403 Forbidden"):  # the file never reaches the server
        bob.predict(handle_file(str(article)), api_name="/upload")
    assert not (engine.config.seeds_dir / "rights_test.txt").exists()
    alice = Client(url, auth=("alice", USERS["alice"]), verbose=False)
    status, _ = alice.predict(handle_file(str(article)), api_name="/upload")
    assert "Added rights_test.txt" in status and "rights_test.txt" in engine.index.articles


@pytest.mark.slow
@pytest.mark.browser
def test_page_asks_for_sign_in_and_shows_uploads_to_uploaders(signed: tuple[str, qa.QA]) -> None:
    url, _ = signed
    with chromium() as browser:
        for user, uploads in (("bob", False), ("alice", True)):
            page = browser.new_context().new_page()
            page.goto(url)
            page.wait_for_selector("input[type=password]", timeout=30_000)
            assert page.locator("#qa-question").count() == 0  # nothing of the app before sign-in
            page.fill("input[type=text]", user)
            page.fill("input[type=password]", "wrong password")
            page.click("button:has-text('Login')")
            page.wait_for_selector("text=Incorrect", timeout=10_000)
            page.fill("input[type=text]", user)  # the refused form comes back empty
            page.fill("input[type=password]", USERS[user])
            page.click("button:has-text('Login')")
            page.wait_for_selector("text=articles indexed", timeout=60_000)
            assert page.locator("#qa-upload").is_visible() is uploads
            assert page.locator(".qa-account").inner_text() == f"Signed in as {user} · Sign out"
            page.fill("#qa-question textarea", "Who is the Taliban's spokesman?")
            page.click("#qa-ask")
            page.wait_for_selector(".qa-answered", timeout=30_000)
            assert "Shaheen" in page.locator(".qa-answered").last.inner_text()
            page.click(".qa-account a:has-text('Sign out')")  # this browser only: bob stays signed in
            page.wait_for_selector("input[type=password]", timeout=30_000)
            assert page.locator("#qa-question").count() == 0
            page.goto(url)
            page.wait_for_selector("input[type=password]", timeout=30_000)
