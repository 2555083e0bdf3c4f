"""`qa serve`'s routes (qa/cluster/serve.py) answered by one replica's service object, without Ray:
GET /health, wrong methods, oversized and malformed bodies, /ask with history, /search options.
The real cluster, SIGTERM and Parquet input are in test_cluster.py."""

from __future__ import annotations

import json

import pytest
from reading import read_by_model

import qa
from qa.cluster.serve import MAX_BODY, QAService


@pytest.fixture(scope="module")
def service(real_qa: qa.QA) -> QAService:
    """A replica over real_qa's built index, as `qa serve` starts each one."""
    return QAService(real_qa.config)


def _call(service: QAService, method: str, path: str, body: object = None) -> tuple[int, dict]:
    raw = body if isinstance(body, bytes) else b"" if body is None else json.dumps(body).encode()
    status, payload = service.respond(method, path, raw)
    json.dumps(payload)  # what the HTTP reply carries
    return status, payload


def test_health_names_the_index_it_serves(service: QAService, real_qa: qa.QA) -> None:
    status, health = _call(service, "GET", "/health")
    assert status == 200 and health["status"] == "ok"
    assert health["index"] == real_qa.index.path.name and health["chunks"] == len(real_qa.index.chunks)
    assert _call(service, "GET", "/health/")[0] == 200


@pytest.mark.parametrize(("method", "path", "message"), [
    ("POST", "/health", "/health takes GET, not POST"),
    ("GET", "/ask", "/ask takes POST, not GET"),
    ("PUT", "/search", "/search takes POST, not PUT"),
])
def test_a_wrong_method_is_405_naming_the_right_one(service: QAService, method: str, path: str,
                                                    message: str) -> None:
    assert _call(service, method, path, {"question": "Who?"}) == (405, {"error": message})


def test_bad_bodies_are_one_line_4xx_errors(service: QAService) -> None:
    big = json.dumps({"question": "Who is the Taliban's spokesman?", "pad": "x" * MAX_BODY}).encode()
    assert _call(service, "POST", "/ask", big) == (413, {"error": "the body is over 64 KB"})
    for body, error in [(b"{not json", "the body is not JSON"), (b"[1]", "the body must be a JSON object"),
                        ({"question": "  "}, 'the body needs "question"'),
                        ({"question": "Who?", "history": "Who?"}, '"history" must be a list'),
                        ({"question": "Who?", "history": [["only the question"]]}, '"history" items'),
                        ({"question": "Who?", "history": [["Q?", 3]]}, '"history" answers must be')]:
        status, reply = _call(service, "POST", "/ask", body)
        assert status == 400 and list(reply) == ["error"] and reply["error"].startswith(error), reply
        assert "\n" not in reply["error"]
    for k in (0, 51, "3", True):
        assert _call(service, "POST", "/search", {"question": "Who?", "k": k}) == (
            400, {"error": '"k" must be a whole number from 1 to 50'})
    assert _call(service, "GET", "/nowhere")[0] == 404


def test_ask_follows_the_history_it_is_given(service: QAService) -> None:
    status, first = _call(service, "POST", "/ask", {"question": "Who is the Taliban's spokesman?"})
    assert status == 200 and first["short"] == "Suhail Shaheen"
    read_by_model(first)
    question = "What did he tweet?"
    alone = _call(service, "POST", "/ask", {"question": question})[1]
    assert "Seddiqi" in alone["passages"][0]["text"]  # two men tweeted; which one the model cites is its call
    # History as /ask replies (their query and short answer resolve "he"), or as plain text.
    for history in ([{"question": "Who is the Taliban's spokesman?", "answer": first}],
                    [["Who is the Taliban's spokesman?", first]],
                    [["Who is the Taliban's spokesman?", first["text"]]]):
        status, follow = _call(service, "POST", "/ask", {"question": question, "history": history})
        assert status == 200 and follow["answered"], history
        read_by_model(follow)
        cited = [c["text"] for c in follow["citations"]]
        # His tweet first, the other man's never (what the answer goes on with names him, or no one).
        assert "Shaheen" in cited[0] and not any("Seddiqi" in c for c in cited), (history, cited)


def test_search_takes_k_and_mode(service: QAService, real_qa: qa.QA) -> None:
    for mode in ("hybrid", "dense", "bm25"):
        body = {"question": "prisoner release", "k": 3, "mode": mode}
        status, found = _call(service, "POST", "/search", body)
        assert status == 200
        want = real_qa.retrieve("prisoner release", 3, mode)  # type: ignore[arg-type]
        assert [(p["source"], p["start"], p["score"]) for p in found["passages"]] == [
            (p.source, p.start, p.score) for p in want]
    status, error = _call(service, "POST", "/search", {"question": "x", "mode": "fuzzy"})
    assert status == 400 and error["error"] == '"mode" must be one of hybrid, dense, bm25'
