"""docs/cluster.md's one-machine commands, run as written (own port and temp folder): they start a
cluster that checks Ray's token and listens on 127.0.0.1 only; `qa build --ray` works with the
token and is refused in one line without it; `qa serve` wants its bearer token. README agrees.

Run alone with `flock /tmp/ray.lock pytest -m cluster`.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

pytest.importorskip("ray", reason="the cluster extra is not installed: pip install -e '.[cluster]'")

from qa.cluster.local import LocalCluster, free_port
from qa.index.load import load_index

pytestmark = [pytest.mark.cluster, pytest.mark.slow]
ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
# The README's first lines start the cluster, as docs/cluster.md's do; its last one stops it.
STARTS = 4
LOOPBACK = re.compile(r"^(127\.\d+\.\d+\.\d+|\[::ffff:127\.\d+\.\d+\.\d+\]|\[::1\]):\d+ ")


def _block(text: str, heading: str) -> list[str]:
    """The command lines of the first bash block after heading."""
    block = text[text.index(heading):].split("```bash\n", 1)[1].split("```", 1)[0]
    return [line.split("  #", 1)[0].rstrip() for line in block.splitlines()
            if line and not line.startswith("#")]


def test_the_readme_starts_the_cluster_as_docs_cluster_md_does() -> None:
    docs = _block((ROOT / "docs/cluster.md").read_text(), "### On one machine")
    readme = _block((ROOT / "README.md").read_text(), "## Running on a cluster")
    assert [line for line in docs if not line.startswith(".venv/bin/ray status")] == readme[:STARTS]


def _own(lines: list[str], ports: dict[str, int], temp: Path, log: Path) -> list[str]:
    """Documented lines with this test's own ports, temp folder and log (the documented ones may be
    taken on this machine), and the venv it runs in."""
    out = []
    for line in lines:
        line = line.replace(".venv/bin/", f"{BIN}/").replace(">/tmp/qa-ray.log", f">{log}")
        line = line.replace("--temp-dir=/tmp/qa-ray", f"--temp-dir={temp}")
        for documented, own in ports.items():
            line = line.replace(documented, str(own))
        out.append(line)
    return out


def _listening(pids: set[int]) -> list[str]:
    """Each local address these processes listen on (TCP), and which process: from `ss -ltnp`."""
    out = subprocess.run(["ss", "-ltnpH"], capture_output=True, text=True, check=True).stdout
    return [f"{line.split()[3]} {line.split()[-1]}" for line in out.splitlines()
            if any(f"pid={p}," in line for p in pids)]


def _running(pid: int) -> bool:
    """True while the process runs (a zombie, dead but not yet reaped, does not)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] != "Z"
    except OSError:
        return False


def _grpc_refused(port: int) -> bool:
    """True when a Serve replica's gRPC port refuses a call that carries no token."""
    import grpc

    with grpc.insecure_channel(f"127.0.0.1:{port}") as channel:
        call = channel.unary_unary("/ray.serve.ASGIService/HandleRequest",
                                   request_serializer=lambda b: b, response_deserializer=lambda b: b)
        try:
            call(b"", timeout=30)
        except grpc.RpcError as exc:
            return exc.code() == grpc.StatusCode.UNAUTHENTICATED
    return False


def _get(url: str, token: str | None) -> int:
    request = urllib.request.Request(url, headers={"Authorization": f"Bearer {token}"} if token else {})
    try:
        with urllib.request.urlopen(request, timeout=30) as reply:
            return reply.status
    except urllib.error.HTTPError as exc:
        return exc.code
    except OSError:  # not listening yet
        return 0


def _serve_is_private(web: int, token: str, cluster: LocalCluster) -> None:
    """The README's `qa serve`, from outside: every route wants the bearer token, and what listens
    beyond loopback (each replica's gRPC port) refuses a call without Ray's token."""
    assert len(token) == 64 and _get(f"http://127.0.0.1:{web}/health", token) == 200
    assert _get(f"http://127.0.0.1:{web}/health", None) == 401
    assert _get(f"http://127.0.0.1:{web}/health", "wrong") == 401
    for route in ("/-/routes", "/-/healthz"):  # answered by Serve's proxy, not a replica
        assert _get(f"http://127.0.0.1:{web}{route}", None) == 401, route
        assert _get(f"http://127.0.0.1:{web}{route}", token) == 200, route
    # Serve's proxy listens on 127.0.0.1 too; each replica opens one gRPC port of its own on every
    # interface (Ray 2.60 hard-codes "[::]:0"), which refuses calls without the token.
    public = [a for a in _listening(set(cluster.processes())) if not LOOPBACK.match(a)]
    assert public and all('"ray::ServeRepli"' in a for a in public), public
    for address in public:
        assert _grpc_refused(int(address.split()[0].rsplit(":", 1)[1]))


def test_the_documented_commands_start_a_private_authenticated_cluster(tmp_path: Path) -> None:
    port, home = free_port(), tmp_path / "home"
    home.mkdir()
    cluster = LocalCluster()  # a short temp folder (socket paths); finds and kills what the commands start
    web = free_port()
    ports = {"6380": port, "6381": free_port(), "6382": free_port(), "8000": web}
    lines = _own(_block((ROOT / "docs/cluster.md").read_text(), "### On one machine"), ports, cluster.temp,
                 tmp_path / "ray.log")
    status = [line for line in lines if line.startswith(f"{BIN}/ray status")]
    lines = [line for line in lines if line not in status]  # run below, once the node has registered
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("RAY_")}, "HOME": str(home),
           "PATH": f"{BIN}{os.pathsep}{os.environ['PATH']}", "RAY_USAGE_STATS_ENABLED": "0"}
    # Run as written, then note `ray start --block`'s process id for the README's last line, below.
    script = "set -e\n" + "\n".join(lines) + "\necho $ray > ray.pid\nenv | grep '^RAY_' > ray.env\n"
    head = subprocess.Popen(["bash", "-c", script], cwd=tmp_path, env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    cluster.groups.append(head.pid)
    other = None
    try:
        out, _ = head.communicate(timeout=300)
        assert head.returncode == 0, out[-3000:]
        token_file = home / ".ray" / "auth_token"
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        addresses = _listening(set(cluster.processes()))
        assert addresses and [a for a in addresses if not LOOPBACK.match(a)] == []
        documented = dict(line.split("=", 1) for line in (tmp_path / "ray.env").read_text().splitlines())
        driver = {**env, **documented}
        deadline, shown = time.monotonic() + 120, ""
        while status and "Active:" not in shown and time.monotonic() < deadline:
            time.sleep(2)
            shown = subprocess.run(["bash", "-c", status[0]], env=driver, capture_output=True, text=True,
                                   timeout=120).stdout
        assert "Active:" in shown and "2.0 CPU" in shown.replace("/2.0 CPU", " 2.0 CPU"), shown
        # The README's commands after the start, as written (its ports changed to this test's), but
        # for the last, which stops the cluster: run at the end.
        shutil.copytree(ROOT / "seeds", tmp_path / "seeds")
        readme = _own(_block((ROOT / "README.md").read_text(), "## Running on a cluster")[STARTS:], ports,
                      cluster.temp, tmp_path / "ray.log")
        readme, stop = readme[:-1], readme[-1]
        assert stop == "kill $ray" and readme[-1] == "kill $serve", (readme, stop)
        build = shlex.split(readme[0])
        # Someone on this machine who knows the address but has no token (no file, no RAY_AUTH_*).
        stranger = {**env, "HOME": str(tmp_path), "RAY_ENABLE_WINDOWS_OR_OSX_CLUSTER": "0"}
        refused = subprocess.run(build, cwd=tmp_path, env=stranger, capture_output=True, text=True,
                                 timeout=300)
        assert refused.returncode == 2 and "token" in refused.stderr, refused.stderr[-2000:]
        assert len(refused.stderr.strip().splitlines()) == 1, refused.stderr[-2000:]
        # Run up to `kill $serve`, which waits until the server has been checked from outside.
        script = "set -e\n" + "\n".join(readme[:-1]) + '\necho\necho "$QA_SERVE_TOKEN" > serve.token\n' \
            + "read -r _ || true\n" + readme[-1]
        with open(tmp_path / "readme.out", "w") as out_file, open(tmp_path / "readme.err", "w") as err_file:
            readme_run = subprocess.Popen(["bash", "-c", script], cwd=tmp_path, env=driver,
                                          start_new_session=True, stdin=subprocess.PIPE, stdout=out_file,
                                          stderr=err_file, text=True)
        cluster.groups.append(readme_run.pid)
        deadline = time.monotonic() + 600
        while not (tmp_path / "serve.token").exists():
            assert readme_run.poll() is None and time.monotonic() < deadline, (
                (tmp_path / "readme.err").read_text()[-3000:])
            time.sleep(1)
        _serve_is_private(web, (tmp_path / "serve.token").read_text().strip(), cluster)
        readme_run.communicate("\n", timeout=120)
        out = (tmp_path / "readme.out").read_text()
        assert readme_run.returncode == 0, (out[-2000:], (tmp_path / "readme.err").read_text()[-3000:])
        built = out.splitlines()[0]
        reply = out[out.index('{"question"'):]
        answer, end = json.JSONDecoder().raw_decode(reply)
        assert reply[end:].strip() == ""  # stopping the server (`kill $serve`) printed nothing more
        assert "4 added, 0 changed, 0 removed" in built, out
        assert answer["answered"] and "100" in answer["text"], answer
        deadline = time.monotonic() + 60  # `kill $serve` stopped qa serve: let it finish stopping
        group = ["pgrep", "-g", str(readme_run.pid)]
        while time.monotonic() < deadline and subprocess.run(group, capture_output=True).returncode == 0:
            time.sleep(1)

        # Another corpus, its optional fields on some rows only: refused over the seeds' index in one
        # line, built into a folder of its own; a bad row stops it in one line naming the row and field.
        corpus = tmp_path / "articles.jsonl"
        some = {"url": "https://example.org/1", "title": "Harbour 1"}
        rows = [{"id": f"a{n}.txt", "text": f"The Tollby harbour handled {70 + n} ferries in March."}
                | (some if n == 1 else {}) for n in range(3)]
        corpus.write_text("".join(json.dumps(row) + "\n" for row in rows))
        qa_bin = str(BIN / "qa")

        def cluster_build(index: str, path: Path) -> subprocess.CompletedProcess:
            return subprocess.run([qa_bin, "--index", index, "build", "--ray", f"127.0.0.1:{port}",
                                   "--corpus", path.name], cwd=tmp_path, env=driver, capture_output=True,
                                  text=True, timeout=600)

        over = cluster_build("cluster-index", corpus)
        assert over.returncode == 2 and over.stderr.strip().splitlines() == [
            "Error: cluster-index/ holds the index of seeds (4 articles), and building articles.jsonl "
            "into it would remove 4 of them: give this corpus its own folder (qa --index articles-index "
            "build …), or add --replace"], over.stderr[-2000:]
        own = cluster_build("articles-index", corpus)
        assert own.returncode == 0 and "3 added" in own.stdout, own.stderr[-3000:]
        held = load_index(tmp_path / "articles-index").articles
        assert [held[f"a{n}.txt"].url for n in range(3)] == [None, "https://example.org/1", None]
        assert held["a1.txt"].title == "Harbour 1" and held["a0.txt"].title.startswith("The Tollby harbour")
        corpus.write_text(corpus.read_text() + '{"id": "a3.txt", "text": "x", "date": "March"}\n')
        bad = cluster_build("articles-index", corpus)
        assert bad.returncode == 2 and bad.stderr.strip().splitlines() == [
            "Error: corpus articles.jsonl, row 4 (id 'a3.txt'): date 'March' is not a date (YYYY-MM-DD; "
            "it is optional)"], bad.stderr[-3000:]
        assert set(load_index(tmp_path / "articles-index").articles) == {"a0.txt", "a1.txt", "a2.txt"}

        # The README's last line stops its cluster, and no other Ray on the machine (`ray stop` would).
        other = LocalCluster().start()
        theirs, ours = set(other.processes()), set(cluster.processes())
        stopped = subprocess.run(["bash", "-c", f"ray=$(cat ray.pid)\n{stop}"], cwd=tmp_path, env=driver,
                                 capture_output=True, text=True, timeout=60)
        assert stopped.returncode == 0, stopped.stderr
        deadline = time.monotonic() + 120  # orphaned workers count too: each process that ran, by id
        while (left := [p for p in ours if _running(p)]) and time.monotonic() < deadline:
            time.sleep(1)
        assert left == []
        assert theirs and theirs <= set(other.processes())  # every process of the other cluster lives
        alive = subprocess.run([str(BIN / "ray"), "status", f"--address={other.address}"],
                               capture_output=True, text=True, timeout=120)
        assert alive.returncode == 0, alive.stderr[-2000:]
    finally:
        cluster.stop()
        if other is not None:
            other.stop()
    # Stopped, a LocalCluster leaves this process's environment as it found it.
    assert other is not None and os.environ.get("RAY_AUTH_TOKEN") != other.token
