"""`qa serve`'s service without a cluster: its bearer token, its body limit read no further than
needed, deeply nested JSON, malformed history, and the refusal to serve a public address without a
token."""

from __future__ import annotations

import asyncio
import json
import logging

import pytest
from click.testing import CliRunner

import qa
from qa.cluster import gate, serve
from qa.surfaces.cli import main

TOKEN = "s3cret-token-" + "x" * 40


class _Engine:
    """Just enough engine for /health."""

    class index:  # stands in for an Index
        path = type("P", (), {"name": "v-1"})()
        chunks = [1, 2]


def _service(token: str = TOKEN) -> serve.QAService:
    service = serve.QAService.__new__(serve.QAService)  # no engine load: the routes below need none
    service.token, service.engine = serve.token_digest(token), _Engine()
    return service


def _call(service: serve.QAService, headers: dict[str, str], chunks: list[bytes], path: str = "/health",
          method: str = "GET") -> tuple[int, bytes, int]:
    """Run the ASGI app on a request; (status, body, how many body chunks it pulled)."""
    from starlette.requests import Request

    pulled = 0

    async def receive() -> dict:
        nonlocal pulled
        pulled += 1
        if pulled > len(chunks):
            return {"type": "http.disconnect"}
        return {"type": "http.request", "body": chunks[pulled - 1], "more_body": pulled < len(chunks)}

    scope = {"type": "http", "method": method, "path": path, "headers": [(k.lower().encode(), v.encode())
             for k, v in headers.items()], "query_string": b"", "server": ("127.0.0.1", 8000)}
    response = asyncio.run(service(Request(scope, receive)))
    return response.status_code, response.body, pulled


def test_requests_need_the_bearer_token_when_one_is_set() -> None:
    service = _service()
    for headers in ({}, {"Authorization": "Bearer wrong"}, {"Authorization": TOKEN},
                    {"Authorization": f"Basic {TOKEN}"}):
        status, body, pulled = _call(service, headers, [b"{}"])
        assert status == 401 and b"Bearer" in body and pulled == 0  # refused before the body is read
    assert _call(service, {"Authorization": f"Bearer {TOKEN}"}, [b""])[0] == 200
    assert _call(_service(""), {}, [b""])[0] == 200  # no token set: open, as on loopback
    assert TOKEN not in repr(vars(service))  # a replica keeps the token's hash only


def test_a_huge_body_is_refused_after_reading_just_past_the_limit() -> None:
    service, auth = _service(), {"Authorization": f"Bearer {TOKEN}"}
    chunk = b"x" * 16_384
    status, _, pulled = _call(service, auth, [chunk] * 20_000, path="/ask", method="POST")  # 300 MB, chunked
    assert status == 413 and pulled == serve.MAX_BODY // len(chunk) + 1
    status, _, pulled = _call(service, {**auth, "Content-Length": "300000000"}, [chunk], "/ask", "POST")
    assert status == 413 and pulled == 0


def test_deeply_nested_json_is_a_400() -> None:
    for body in (b"[" * 30_000 + b"]" * 30_000, b'{"question": ' + b"[" * 30_000 + b"]" * 30_000 + b"}"):
        with pytest.raises(serve.BadRequest) as refused:
            serve.parse(body[: serve.MAX_BODY])
        assert refused.value.status == 400


def test_a_malformed_history_answer_is_a_400_not_a_traceback(fake_qa: qa.QA,
                                                            caplog: pytest.LogCaptureFixture) -> None:
    """A history answer given as an /ask reply whose fields are not what /ask gives (the third
    security review: {"query": 5} answered 500 with a traceback in the log)."""
    fake_qa.build()
    service = serve.QAService.__new__(serve.QAService)
    service.token, service.engine = "", fake_qa
    error = ('"history" answers\' "query" and "short" must be strings (or null) and "answered" true or '
             "false, as /ask replies give them")
    with caplog.at_level(logging.INFO):
        for answer in ({"query": 5}, {"short": ["Shaheen"]}, {"query": {"q": 1}}, {"answered": "no"}):
            body = json.dumps({"question": "What did he say?", "history": [["Who spoke?", answer]]})
            assert service.respond("POST", "/ask", body.encode()) == (400, {"error": error}), answer
    assert [r.getMessage() for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info] == []
    reply = {"query": "Who spoke?", "short": None}
    fine = {"question": "What did he say?", "history": [["Who spoke?", reply]]}
    assert service.respond("POST", "/ask", json.dumps(fine).encode())[0] == 200


def test_a_public_host_needs_a_token(tmp_path) -> None:
    with pytest.raises(qa.QAError, match="QA_SERVE_TOKEN"):
        serve.start_service(qa.Config.of(index_dir=tmp_path), "auto", 1, "0.0.0.0", 8000)
    args = ["--index", str(tmp_path), "serve", "--ray", "auto", "--host", "10.1.2.3"]
    result = CliRunner().invoke(main, args)
    assert result.exit_code == 2 and "QA_SERVE_TOKEN" in result.output
    assert len(result.output.strip().splitlines()) == 1


def test_serves_proxy_routes_want_the_token_too(monkeypatch: pytest.MonkeyPatch) -> None:
    """Serve's proxy answers /-/routes and /-/healthz itself: the gate it loads checks them."""
    from starlette.applications import Starlette
    from starlette.responses import PlainTextResponse
    from starlette.routing import Route
    from starlette.testclient import TestClient

    proxy = Starlette(routes=[Route("/-/routes", lambda r: PlainTextResponse('{"/":"qa"}')),
                              Route("/-/healthz", lambda r: PlainTextResponse("success")),
                              Route("/health", lambda r: PlainTextResponse("the replica checks"))])
    monkeypatch.setenv(gate.DIGEST, serve.token_digest(TOKEN))
    (middleware,) = gate.proxy_gate()
    client = TestClient(middleware.cls(proxy, *middleware.args, **middleware.kwargs))
    for path in ("/-/routes", "/-/healthz"):
        for headers in ({}, {"Authorization": "Bearer wrong"}):
            refused = client.get(path, headers=headers)
            assert refused.status_code == 401 and refused.json() == {"error": gate.UNAUTHORIZED}
        assert client.get(path, headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    assert client.get("/health").text == "the replica checks"  # the rest is the replica's to check
    # `qa serve` puts the callback and the token's digest (never the token) in Serve's environment.
    settings = gate.proxy_settings(serve.token_digest(TOKEN))
    assert settings == {"RAY_SERVE_HTTP_PROXY_CALLBACK_IMPORT_PATH": "qa.cluster.gate:proxy_gate",
                        "QA_SERVE_TOKEN_SHA256": serve.token_digest(TOKEN)}
    assert gate.proxy_settings("") == {}
    monkeypatch.delenv(gate.DIGEST)
    assert gate.proxy_gate() == []
