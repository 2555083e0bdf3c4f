"""`qa serve --ray`: a Ray Serve application answering over HTTP from the index folder.

Every replica opens the same index folder: the sentence vectors are memory-mapped, so replicas
on one node share those pages in the OS cache instead of each holding a copy.
"""

from __future__ import annotations

import ipaddress
import json
import logging
import os
from pathlib import Path
from types import SimpleNamespace

from qa.cluster.build import connect
from qa.cluster.corpus import ray_module
from qa.cluster.gate import UNAUTHORIZED, authorized, proxy_settings, token_digest
from qa.config import Config
from qa.errors import MissingDependency, QAError
from qa.retrieval.retrieve import MODES

log = logging.getLogger(__name__)

APP = "qa"
MAX_BODY = 64 * 1024  # a question and its history; more is a mistake or an attack
MAX_K = 50
ROUTES = {"/health": "GET", "/ask": "POST", "/search": "POST"}


class BadRequest(Exception):
    """A request the client must fix: the HTTP status and a one-line message."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


def is_loopback(host: str) -> bool:
    """True for addresses only this machine can reach (127.0.0.0/8, ::1, localhost)."""
    if host.strip().lower() in {"localhost", "localhost.localdomain"}:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


class QAService:
    """One Serve replica: the engine over the index folder, and the three routes."""

    def __init__(self, config: Config, token: str = "") -> None:
        from qa.engine import QA
        from qa.index.load import load_index

        self.token = token  # the SHA-256 of QA_SERVE_TOKEN ("" when none is set)
        self.engine = QA(config)
        # Serve what is built, as it is: a replica never builds (the corpus may live elsewhere).
        self.engine.use_index(load_index(config.index_dir))
        # The first answer loads the reader's model (llama.cpp maps the one file in the node's cache:
        # replicas on a node share its pages) and caches the fixed instruction.
        self.engine.answer("Who is named in the articles?")

    async def __call__(self, request):  # starlette Request in, JSONResponse out
        from starlette.responses import JSONResponse

        if not authorized(request.headers.get("authorization"), self.token):
            return JSONResponse({"error": UNAUTHORIZED}, status_code=401,
                                headers={"WWW-Authenticate": "Bearer"})
        length = request.headers.get("content-length", "")
        too_big = JSONResponse({"error": f"the body is over {MAX_BODY // 1024} KB"}, status_code=413)
        if length.isdigit() and int(length) > MAX_BODY:
            return too_big
        body = bytearray()
        async for chunk in request.stream():  # never more than MAX_BODY in memory, whatever is sent
            body += chunk
            if len(body) > MAX_BODY:
                return too_big
        client = request.client.host if request.client else ""
        status, payload = self.respond(request.method, request.url.path, bytes(body), client)
        # Which replica answered: its process, as GET /health names it.
        return JSONResponse(payload, status_code=status, headers={"X-QA-Replica": str(os.getpid())})

    def respond(self, method: str, path: str, body: bytes, client: str = "") -> tuple[int, dict]:
        """(status, JSON object) for a request; bad requests get a 4xx and {"error": one line}.
        Clients take turns for the replica's language model."""
        try:
            return 200, self._route(method, path.rstrip("/") or "/", body, client)
        except BadRequest as exc:
            return exc.status, {"error": str(exc)}
        except QAError as exc:
            return 400, {"error": (str(exc).splitlines() or ["bad request"])[0]}
        except Exception:
            log.exception("failed to answer %s %s", method, path)
            return 500, {"error": "internal error; the server log has the details"}

    def _route(self, method: str, path: str, body: bytes, client: str = "") -> dict:
        if path not in ROUTES:
            raise BadRequest(404, f"no route {path}: use GET /health, POST /ask or POST /search")
        if method != ROUTES[path]:
            raise BadRequest(405, f"{path} takes {ROUTES[path]}, not {method}")
        if path == "/health":
            index = self.engine.index
            return {"status": "ok", "index": index.path.name, "chunks": len(index.chunks), "pid": os.getpid()}
        request = parse(body)
        question = request.get("question")
        if not isinstance(question, str) or not question.strip():
            raise BadRequest(400, 'the body needs "question": a non-empty string')
        if path == "/search":
            k = request.get("k", self.engine.config.retrieval.k)
            if not isinstance(k, int) or isinstance(k, bool) or not 1 <= k <= MAX_K:
                raise BadRequest(400, f'"k" must be a whole number from 1 to {MAX_K}')
            mode = request.get("mode", "hybrid")
            if mode not in MODES:
                raise BadRequest(400, f'"mode" must be one of {", ".join(MODES)}')
            return {"passages": [p.to_dict() for p in self.engine.retrieve(question, k, mode)]}
        turns = history(request.get("history", []))
        return self.engine.answer(question, history=turns, user=client).to_dict()


def parse(body: bytes) -> dict:
    """The JSON object in a request body, or BadRequest saying what is wrong with it."""
    if len(body) > MAX_BODY:
        raise BadRequest(413, f"the body is over {MAX_BODY // 1024} KB")
    try:
        request = json.loads(body or b"null")
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise BadRequest(400, f"the body is not JSON ({exc.msg if hasattr(exc, 'msg') else exc})") from None
    except RecursionError:
        raise BadRequest(400, "the body's JSON is nested too deeply") from None
    if not isinstance(request, dict):
        raise BadRequest(400, 'the body must be a JSON object such as {"question": "..."}')
    return request


def history(raw: object) -> list[tuple[str, object]]:
    """Earlier turns: [question, answer text] pairs or {"question", "answer"} objects (an answer
    may be a /ask reply, whose query and short answer resolve follow-ups)."""
    if not isinstance(raw, list):
        raise BadRequest(400, '"history" must be a list of [question, answer] pairs')
    turns: list[tuple[str, object]] = []
    for item in raw:
        if isinstance(item, dict):
            item = [item.get("question"), item.get("answer")]
        if not (isinstance(item, list) and len(item) == 2 and isinstance(item[0], str)):
            raise BadRequest(400, '"history" items must be [question, answer] pairs')
        question, answer = item
        if isinstance(answer, dict):
            query, short, answered = answer.get("query"), answer.get("short"), answer.get("answered", True)
            texts = all(v is None or isinstance(v, str) for v in (query, short))
            if not texts or not isinstance(answered, bool):
                raise BadRequest(400, '"history" answers\' "query" and "short" must be strings (or null) and '
                                      '"answered" true or false, as /ask replies give them')
            answer = SimpleNamespace(query=query or question, short=short, answered=answered)
        elif answer is not None and not isinstance(answer, str):
            raise BadRequest(400, '"history" answers must be strings or /ask replies')
        turns.append((question, answer))
    return turns


def start_service(config: Config, address: str, replicas: int, host: str, port: int, cpus: int = 1,
                  max_replicas: int | None = None) -> str:
    """Deploy the service on the cluster (replacing an earlier one) and return its URL: ``replicas``
    of ``cpus`` CPUs each (the language model reads with as many threads), scaled up to
    ``max_replicas`` while requests queue."""
    from qa.index.load import load_index

    if not config.serving.serve_token and not is_loopback(host):
        raise QAError(f"--host {host} would answer anyone who can reach it: set QA_SERVE_TOKEN to a long "
                      "random token (clients send Authorization: Bearer <token>), or serve on 127.0.0.1")
    # Replicas get the token's hash, not the token.
    token, config = token_digest(config.serving.serve_token), config.replace(serve_token="")

    load_index(config.index_dir)  # a missing or damaged index is a one-line error here, not in replicas
    # Replicas run in other folders, maybe on other nodes: every path absolute.
    config = config.replace(reader_threads=cpus, **{k: Path(getattr(config, k)).resolve()
                                                    for k in ("index_dir", "seeds_dir", "cache_dir")})
    ray_module()
    try:
        from ray import serve
    except ImportError:
        raise MissingDependency("Ray Serve is not installed: run `pip install -e '.[cluster]'`") from None
    connect(address)
    serve.start(proxy_location="HeadOnly", http_options={"host": host, "port": port},
                controller_options={"runtime_env": {"env_vars": proxy_settings(token)}})
    scale = ({"num_replicas": "auto", "autoscaling_config": {
        "min_replicas": replicas, "max_replicas": max_replicas, "initial_replicas": replicas,
        # A replica reads reader_slots questions at once; more waiting means another is needed.
        "target_ongoing_requests": config.reading.reader_slots, "upscale_delay_s": 5,
        "downscale_delay_s": 60}}
             if max_replicas and max_replicas > replicas else {"num_replicas": replicas})
    deployment = serve.deployment(
        QAService, name="QAService", **scale,
        # `cpus` each: replicas spread over the nodes; a dead one is restarted by the controller,
        # which notices within a health-check period (the first start loads the model).
        ray_actor_options={"num_cpus": cpus}, health_check_period_s=2, health_check_timeout_s=60,
        # Serve sends to the proxy's own node until its replicas hold this many: kept near what a
        # replica reads at once, more questions wait at the router for whichever replica frees first
        # instead of in one replica's line while another node idles.
        max_ongoing_requests=2 * config.reading.reader_slots,
    )
    # Called with the class, serve.deployment returns the Deployment.
    serve.run(deployment.bind(config, token), name=APP, route_prefix="/", blocking=False)
    return f"http://{host}:{port}"


def stop_service() -> None:
    """Remove the application and Serve's proxy from the cluster."""
    from ray import serve

    serve.shutdown()
