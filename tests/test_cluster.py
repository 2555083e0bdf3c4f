"""The cluster build and service on a real local Ray cluster: a head and a worker node, one CPU each.

Run alone with `pytest -m cluster`. The corpus is the seeds plus about 100 RealTime QA passages
(from ../shared, left out when absent), given to the cluster as JSON Lines.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pytest
from conftest import REAL_READ_TIMEOUT
from reading import read_by_model

pytest.importorskip("ray", reason="the cluster extra is not installed: pip install -e '.[cluster]'")

from qa import QA, Config
from qa.articles.load import load_articles
from qa.cluster.local import LocalCluster, free_port
from qa.cluster.shards import shard_vectors
from qa.index.load import load_index

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
ROOT = Path(__file__).resolve().parent.parent
TALIBAN = "How many Taliban prisoners will be released each day?"
ARTICLES = 60  # the killed build's corpus: 8 batches of 8 for the two actors, one taken when the kill lands


@pytest.fixture(scope="module")
def cluster():
    """Two nodes on 127.0.0.1 ports, one CPU each, which this process joins once; every process
    they started is killed after."""
    import ray

    from qa.cluster.build import connect

    nodes = LocalCluster()
    joined = False
    try:
        nodes.start()
        nodes.add_node()
        # One Ray session in this process for the whole module: joining again after a shutdown
        # leaves Ray's threads on freed state, and the process can crash at exit
        # (ray-project/ray#31145). The builds below find it joined and leave it so.
        joined = connect(nodes.address)
        yield nodes
    finally:
        if joined:
            ray.shutdown()
        nodes.stop()


@pytest.fixture(scope="module")
def corpus(tmp_path_factory) -> tuple[Path, list]:
    """The seeds and some RealTime QA articles as JSON Lines, and the same articles as records."""
    from eval.paths import MissingData, eval_articles
    from eval.perf.scale_data import rtqa_articles

    articles = load_articles(eval_articles())
    try:
        articles += rtqa_articles(100)
    except MissingData:  # RealTime QA is not on this machine: the seeds alone
        pass
    path = tmp_path_factory.mktemp("corpus") / "articles.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for a in articles:
            fh.write(json.dumps({"id": a.source, "title": a.title, "text": a.text, "url": f"https://x/{a.source}",
                                 "date": "2020-03-11T08:00:00Z"})
                     + "\n")
    return path, articles


def _config(cache: Path, index_dir: Path) -> Config:
    """The settings of the environment, with the index in index_dir and the tests' model cache."""
    return Config.from_env(index_dir=index_dir, cache_dir=cache)


def _engine(index_dir: Path, cache: Path) -> QA:
    """An engine answering from the index in index_dir as it is (never rebuilding it)."""
    engine = QA(_config(cache, index_dir))
    engine.use_index(load_index(index_dir))
    return engine


@pytest.fixture(scope="module")
def single(corpus, tmp_path_factory, onnx_cache) -> Path:
    """The single-machine build of the same articles."""
    index_dir = tmp_path_factory.mktemp("single") / "index"
    QA(_config(onnx_cache, index_dir)).build(articles=corpus[1])
    return index_dir


@pytest.fixture(scope="module")
def clustered(cluster, corpus, tmp_path_factory, onnx_cache) -> Path:
    """The cluster build of the JSON Lines corpus, in shards of 20 chunk vectors."""
    from qa.cluster.build import build_on_ray

    index_dir = tmp_path_factory.mktemp("cluster") / "index"
    build_on_ray(_config(onnx_cache, index_dir), cluster.address, corpus[0], shard_rows=20)
    return index_dir


def test_cluster_build_gives_the_single_machine_chunks_vectors_and_top5(single, clustered, onnx_cache):
    one, many = load_index(single), load_index(clustered)
    spans = [(c.source, c.start, c.end) for c in one.chunks]
    assert [(c.source, c.start, c.end) for c in many.chunks] == spans
    assert many.sent_sources == one.sent_sources and (many.sent_spans == one.sent_spans).all()
    mine = shard_vectors(many)
    theirs = one.dense.reconstruct_n(0, one.dense.ntotal)
    assert (np.sum(mine * theirs, axis=1) >= 0.9999).all()
    cos = np.sum(np.asarray(many.sent_vectors, np.float32) * one.sent_vectors, axis=1)
    assert cos.min() >= 0.9999
    assert len(many.meta["shards"]) == -(-len(many.chunks) // 20) > 1
    questions = [json.loads(line)["question"] for line in (ROOT / "eval/questions.jsonl").open()][:20]
    a, b = _engine(single, onnx_cache), _engine(clustered, onnx_cache)
    for q in questions:
        top = [(p.source, p.start) for p in a.retrieve(q, 5)]
        assert [(p.source, p.start) for p in b.retrieve(q, 5)] == top, q
    # The rows' URL and date are the articles' own, and every passage carries them.
    first = b.retrieve(questions[0], 1)[0]
    assert first.url == f"https://x/{first.source}" and first.date == "2020-03-11"


def test_a_damaged_shard_is_refused_on_load(clustered, tmp_path):
    import shutil

    copy = tmp_path / "index"
    shutil.copytree(clustered, copy, symlinks=True)
    shard = load_index(copy).path / "shards" / "chunks-00000.npy"
    shard.write_bytes(shard.read_bytes()[:-8] + b"\0" * 8)
    with pytest.raises(Exception, match="shards/chunks-00000.npy is missing or corrupt"):
        load_index(copy)


def _worker_pids(cluster: LocalCluster, title: str) -> list[int]:
    """Processes of this cluster whose title contains title."""
    found = []
    for pid in cluster.processes():
        try:
            if title in Path(f"/proc/{pid}/cmdline").read_bytes().decode(errors="replace"):
                found.append(pid)
        except OSError:
            continue
    return found


def test_a_worker_killed_mid_build_costs_a_retry_not_the_build(cluster, corpus, tmp_path, onnx_cache,
                                                                monkeypatch):
    import qa.cluster.build as cluster_build
    from qa.cluster.build import build_on_ray
    from qa.text.chunk import chunk_article

    # Copies of the corpus under other ids, ARTICLES in all, so that the build outlasts the kill
    # whether or not RealTime QA is on the machine (28 articles once ended before the kill landed).
    rows = [json.loads(line) for line in corpus[0].open()]
    picked = [(k // len(rows), k % len(rows)) for k in range(max(ARTICLES, len(rows)))]
    big = tmp_path / "big.jsonl"
    big.write_text("".join(json.dumps({**rows[i], "id": f"{n}-{rows[i]['id']}"}) + "\n" for n, i in picked))
    # The build's own progress: each article's result as the driver takes it from the pool. The kill
    # lands as the driver takes the first: the pool is then mid-build, with most batches to come.
    taken: list[str] = []
    events: list[tuple[str, int]] = []  # ("kill", pieces taken by then), ("returned", ...), in order
    killed: list[int] = []
    unpack = cluster_build.unpack

    def counted(payload):
        if not taken:
            kill_one()
        taken.append("piece")
        return unpack(payload)

    def kill_one() -> None:
        for pid in _worker_pids(cluster, "ArticleWorker"):
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                continue  # it ended meanwhile: take the next one
            killed.append(pid)
            events.append(("kill", len(taken)))
            return

    monkeypatch.setattr(cluster_build, "unpack", counted)
    report = build_on_ray(_config(onnx_cache, tmp_path / "index"), cluster.address, big)
    events.append(("returned", len(taken)))
    assert killed, "no ArticleWorker actor was seen to kill"
    # The kill landed while the build ran, and articles were still taken from the pool after it.
    (kill, before), (returned, after) = events
    assert (kill, returned) == ("kill", "returned") and before < after and after >= len(picked), events
    built = load_index(tmp_path / "index")
    expected = sum(len(chunk_article(corpus[1][i])) for _, i in picked)
    assert report.embedded_chunks == len(built.chunks) == expected


def test_a_rerun_embeds_only_new_or_changed_articles(cluster, corpus, tmp_path, onnx_cache):
    from qa.cluster.build import build_on_ray

    path, articles = corpus
    rows = [json.loads(line) for line in path.open()][:6]  # 4 when RealTime QA is not on the machine
    last = len(rows) - 1
    small = tmp_path / "small.jsonl"
    small.write_text("".join(json.dumps(r) + "\n" for r in rows[:last]))
    config = _config(onnx_cache, tmp_path / "index")
    build_on_ray(config, cluster.address, small)
    assert build_on_ray(config, cluster.address, small).up_to_date
    rows[0]["text"] += "\n\nA sentence added later."
    small.write_text("".join(json.dumps(r) + "\n" for r in rows))
    report = build_on_ray(config, cluster.address, small)
    assert (report.added, report.changed, len(report.unchanged)) == ([rows[last]["id"]], [rows[0]["id"]],
                                                                     last - 1)
    assert report.embedded_chunks == sum(1 for c in load_index(config.index_dir).chunks
                                         if c.source in {rows[0]["id"], rows[last]["id"]})


def test_build_ray_auto_joins_the_cluster_here_and_replace_swaps_the_corpus(cluster, corpus, tmp_path,
                                                                         onnx_cache):
    # As a user runs it, in its own process: --ray auto joins the cluster RAY_ADDRESS names.
    rows = [json.loads(line) for line in corpus[0].open()][:4]
    first, other = tmp_path / "first.jsonl", tmp_path / "other.jsonl"
    first.write_text("".join(json.dumps(r) + "\n" for r in rows[:3]))
    other.write_text("".join(json.dumps(r) + "\n" for r in rows[2:]))
    qa_bin = Path(sys.executable).with_name("qa")
    env = {**os.environ, "RAY_ADDRESS": cluster.address, "QA_CACHE_DIR": str(onnx_cache)}

    def build(path: Path, *flags: str) -> subprocess.CompletedProcess:
        return subprocess.run([str(qa_bin), "--index", str(tmp_path / "index"), "build", "--ray", "auto",
                               "--corpus", str(path), *flags], cwd=tmp_path, env=env, capture_output=True,
                              text=True, timeout=600)

    made = build(first)
    assert made.returncode == 0, made.stderr[-2000:]
    ids = [r["id"] for r in rows]
    assert sorted(load_index(tmp_path / "index").articles) == sorted(ids[:3])
    refused = build(other)  # another corpus: its articles would remove two of the index's
    assert refused.returncode == 2 and refused.stderr.strip().endswith("or add --replace"), refused.stderr
    assert sorted(load_index(tmp_path / "index").articles) == sorted(ids[:3])
    replaced = build(other, "--replace")
    assert replaced.returncode == 0, replaced.stderr[-2000:]
    assert sorted(load_index(tmp_path / "index").articles) == sorted(ids[2:])


TOKEN = "t0ken-" + "a" * 58


def _call(url: str, body: bytes | None = None, token: str | None = TOKEN, replica: list | None = None,
          method: str | None = None) -> tuple[int, dict]:
    """(status, JSON) of a request; the answering replica's process id is appended to replica."""
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    request = urllib.request.Request(url, data=body, method=method or ("POST" if body is not None else "GET"),
                                     headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=120) as reply:
            if replica is not None:
                replica.append(int(reply.headers.get("X-QA-Replica", "0")))
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as exc:
        return exc.code, json.loads(exc.read() or b"{}")


def _rss_mb(pid: int) -> float:
    # Anonymous and shared memory, where a buffered body would be: the model file's mapped pages
    # come and go with the machine's page cache and say nothing of what a request holds.
    fields = dict(ln.split(":", 1) for ln in Path(f"/proc/{pid}/status").read_text().splitlines())
    return sum(int(fields[kind].split()[0]) for kind in ("RssAnon", "RssShmem")) / 1024


def _peak_growth_mb(pids: list[int], work: callable) -> tuple[object, float]:
    """What work() returns, and the most any of pids' memory rose above its start while it ran."""
    start = {pid: _rss_mb(pid) for pid in pids}
    peak = dict(start)
    done = threading.Event()

    def sample() -> None:
        while not done.wait(0.02):  # a buffered body lives as long as its upload: sampled, it shows
            for pid in pids:
                peak[pid] = max(peak[pid], _rss_mb(pid))

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    try:
        result = work()
    finally:
        done.set()
        sampler.join()
    return result, max(peak[pid] - start[pid] for pid in pids)


def _post_chunked(url: str, megabytes: int) -> int:
    """POST megabytes of body in chunks (no Content-Length); the status, or 0 if the server hung up."""
    import http.client
    from urllib.parse import urlsplit

    parts = urlsplit(url)
    connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
    try:
        connection.request("POST", parts.path, body=(b"x" * 1_000_000 for _ in range(megabytes)),
                           headers={"Authorization": f"Bearer {TOKEN}"}, encode_chunked=True)
        return connection.getresponse().status
    except OSError:
        return 0
    finally:
        connection.close()


def test_serve_answers_over_http_and_survives_a_killed_replica(cluster, clustered, onnx_cache):
    port = free_port()
    qa = Path(sys.executable).with_name("qa")
    server = subprocess.Popen([str(qa), "--index", str(clustered), "serve", "--ray", cluster.address,
                               "--replicas", "2", "--port", str(port)],
                              env={**os.environ, "QA_SERVE_TOKEN": TOKEN, "QA_CACHE_DIR": str(onnx_cache),
                                   "QA_READER": "lm", "QA_READ_TIMEOUT": str(REAL_READ_TIMEOUT)},
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    url = f"http://127.0.0.1:{port}"
    ask = json.dumps({"question": TALIBAN}).encode()
    lines: list[str] = []
    # `qa serve` says "Serving" once every replica is up (serve.run returns when the app runs).
    def read() -> None:
        for line in server.stderr:
            lines.append(line)

    threading.Thread(target=read, daemon=True).start()
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline and not any(line.startswith("Serving") for line in lines):
            assert server.poll() is None, "".join(lines)[-2000:]
            time.sleep(1)
        assert any(line.startswith("Serving") for line in lines), "".join(lines)[-2000:]
        status, answer = _call(url + "/ask", ask)
        assert status == 200 and answer["answered"] and "100" in answer["text"]
        read_by_model(answer)
        assert _call(url + "/ask", ask, token=None)[0] == 401
        assert _call(url + "/health", token="nope")[0] == 401
        status, found = _call(url + "/search", json.dumps({"question": "prisoner release", "k": 3}).encode())
        assert status == 200 and len(found["passages"]) == 3
        for body, code in [(b"{not json", 400), (b'{"question": 3}', 400), (b"[1]", 400),
                           (json.dumps({"question": "x", "k": 0}).encode(), 400)]:
            status, error = _call(url + "/search", body)
            assert status == code and list(error) == ["error"] and "\n" not in error["error"]
        assert _call(url + "/nowhere")[0] == 404
        assert _call(url + "/search", b"[" * 30_000 + b"]" * 30_000)[0] == 400  # nested too deeply
        status, health = _call(url + "/health")
        served = load_index(clustered).path.name
        assert status == 200 and (health["status"], health["index"]) == ("ok", served)
        assert _call(url + "/health", b"{}")[0] == 405 and _call(url + "/ask", method="GET")[0] == 405
        big = json.dumps({"question": TALIBAN, "pad": "x" * 70_000}).encode()
        assert _call(url + "/ask", big) == (413, {"error": "the body is over 64 KB"})
        # A follow-up with its history is resolved by the replica: "he" is the spokesman named before.
        spokesman = "Who is the Taliban's spokesman?"
        status, first = _call(url + "/ask", json.dumps({"question": spokesman}).encode())
        assert status == 200 and first["short"] == "Suhail Shaheen"
        follow_up = {"question": "Which agency did he speak to?"}
        history = [{"question": spokesman, "answer": first}]
        status, follow = _call(url + "/ask", json.dumps({**follow_up, "history": history}).encode())
        alone = _call(url + "/ask", json.dumps(follow_up).encode())[1]
        assert status == 200 and "Shaheen" in follow["query"] and alone["query"] == follow_up["question"]
        assert [c["text"] for c in follow["citations"]] != [c["text"] for c in alone["citations"]]
        replicas = _worker_pids(cluster, "ServeReplica:qa:QAService")
        while time.monotonic() < deadline and len(replicas) < 2:
            time.sleep(1)
            replicas = _worker_pids(cluster, "ServeReplica:qa:QAService")
        assert len(replicas) == 2, replicas
        # Each replica reads with the language model, from the one model file on the node.
        # Six questions at once: Serve keeps to the proxy's node until its replica holds two.
        read_by: dict[int, dict] = {}
        reading_deadline = time.monotonic() + 240
        while time.monotonic() < reading_deadline and len(read_by) < 2:
            def asked(_: int) -> tuple[int, dict, int]:
                pid: list[int] = []
                return (*_call(url + "/ask", ask, replica=pid), pid[0])

            with ThreadPoolExecutor(6) as pool:
                for status, answer, pid in pool.map(asked, range(6)):
                    assert status == 200, answer
                    read_by[pid] = answer
        assert set(read_by) == set(replicas), (read_by.keys(), replicas)
        for answer in read_by.values():
            read_by_model(answer)
            assert answer["short"] == "100" and answer["timings"]["read_ms"] > 0
        status, grew = _peak_growth_mb(replicas, lambda: _post_chunked(url + "/ask", 300))
        print(f"replica memory while a 300 MB body was sent: +{grew:.0f} MB at most")
        assert status in (413, 0) and grew < 100, (status, grew)  # 300 MB: refused at 64 KB
        os.kill(replicas[0], signal.SIGKILL)
        answered = 0
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and answered < 10:
            try:
                status, answer = _call(url + "/ask", ask)
            except OSError:
                status = 0
            answered = answered + 1 if status == 200 and "100" in answer["text"] else 0
        assert answered == 10, f"{answered} answers in a row after the kill; last: {status}"
        while time.monotonic() < deadline and len(_worker_pids(cluster, "ServeReplica:qa:QAService")) < 2:
            time.sleep(1)
        now = _worker_pids(cluster, "ServeReplica:qa:QAService")
        assert replicas[0] not in now and len(now) == 2, (replicas, now)
        # SIGTERM stops `qa serve` cleanly (exit 0), and takes its application off the cluster. Under
        # the whole suite on 2 cores, Serve once took just over 60 s to stop both replicas (exit 0).
        server.send_signal(signal.SIGTERM)
        assert server.wait(120) == 0, "".join(lines)[-2000:]
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            try:
                _call(url + "/health")
            except OSError:
                break
            time.sleep(0.5)
        else:
            pytest.fail(f"{url} still answers after qa serve stopped")
    finally:
        if server.poll() is None:
            server.send_signal(signal.SIGTERM)
            try:
                server.wait(30)
            except subprocess.TimeoutExpired:
                server.kill()


def test_a_parquet_corpus_is_read_like_json_lines(cluster, corpus, single, tmp_path, onnx_cache):
    import pyarrow as pa
    import pyarrow.parquet as pq

    from qa.cluster.build import build_on_ray

    rows = [json.loads(line) for line in corpus[0].open()][:4]
    path = tmp_path / "articles.parquet"
    pq.write_table(pa.Table.from_pylist(rows), path)
    report = build_on_ray(_config(onnx_cache, tmp_path / "index"), cluster.address, path)
    built, whole = load_index(tmp_path / "index"), load_index(single)
    ids = [r["id"] for r in rows]
    assert sorted(report.added) == sorted(ids) and sorted(built.articles) == sorted(ids)
    # The same articles give the same chunks and sentence vectors as the single-machine build.
    assert [(c.source, c.start, c.end) for c in built.chunks] == [
        (c.source, c.start, c.end) for c in whole.chunks if c.source in ids]
    mine = [i for i, s in enumerate(whole.sent_sources) if s in ids]
    cos = np.sum(np.asarray(built.sent_vectors, np.float32) * whole.sent_vectors[mine], axis=1)
    assert cos.min() >= 0.9999
    first = built.articles[ids[0]]
    assert first.url == f"https://x/{ids[0]}" and first.date == "2020-03-11"


@pytest.mark.parametrize("args, message", [
    (["serve", "--ray", "auto", "--host", "0.0.0.0"], "set QA_SERVE_TOKEN"),
    (["build", "--corpus", "seeds"], "--corpus is read on a Ray cluster: add --ray ADDRESS"),
    (["build", "--ray", "localhost"], "--ray 'localhost' is not HOST:PORT or auto"),
    (["build", "--ray", "127.0.0.1:{free}"], "no Ray cluster at 127.0.0.1:"),  # a port free when run
    (["serve", "--ray", "auto"], "no index in"),
])
def test_cli_mistakes_are_one_line_errors(args, message, tmp_path):
    # As a user runs it, in its own process: this one may have joined the test cluster already.
    qa = Path(sys.executable).with_name("qa")
    (tmp_path / "seeds").mkdir()  # a folder of articles there is, read without --ray
    env = {k: v for k, v in os.environ.items() if k != "QA_SERVE_TOKEN"}
    args = [a.replace("{free}", str(free_port())) for a in args]
    result = subprocess.run([str(qa), "--index", str(tmp_path / "none"), *args], cwd=tmp_path, env=env,
                            capture_output=True, text=True, timeout=120)
    output = result.stdout + result.stderr
    assert result.returncode == 2 and message in output and len(output.strip().splitlines()) == 1, output


def test_a_corpus_without_text_is_a_one_line_error_and_keeps_the_index(cluster, clustered, tmp_path,
                                                                       model_cache):
    from click.testing import CliRunner

    from qa.index.load import current_path
    from qa.surfaces.cli import main

    before = current_path(clustered)
    for name, content in [("rows.jsonl", '{"id": "a", "title": "no text"}\n'), ("rows.csv", "id,text\n")]:
        (tmp_path / name).write_text(content)
        result = CliRunner().invoke(main, ["--index", str(clustered), "build", "--ray", cluster.address,
                                           "--corpus", str(tmp_path / name)])
        assert result.exit_code == 2, result.output
        assert len(result.output.strip().splitlines()) == 1 and "corpus" in result.output
    assert current_path(clustered) == before


def test_the_test_cluster_wants_its_token(cluster) -> None:
    code = ("import ray; ray.init(address={!r}, logging_level='ERROR'); "
            "print(ray.get(ray.remote(lambda: 6 * 7).remote()))")
    assert os.environ["RAY_AUTH_MODE"] == "token" and os.environ["RAY_AUTH_TOKEN"] == cluster.token
    run = [sys.executable, "-c", code.format(cluster.address)]
    ok = subprocess.run(run, capture_output=True, text=True, timeout=300)
    assert ok.returncode == 0 and ok.stdout.strip() == "42", ok.stderr[-2000:]
    bare = {k: v for k, v in os.environ.items() if not k.startswith("RAY_AUTH")}
    refused = subprocess.run(run, env={**bare, "HOME": "/nonexistent"}, capture_output=True, text=True,
                             timeout=300)
    assert refused.returncode != 0 and "InvalidAuthToken" in refused.stderr
