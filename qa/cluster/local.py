"""A real Ray cluster on this machine: a head node and worker nodes, for tests and benchmarks.

Token authentication is on (RAY_AUTH_MODE=token, a fresh random token per cluster, set in this
process's environment while the cluster runs, so drivers here and the processes they start
connect). Ray 2.60 listens on every interface for a cluster that takes worker nodes, whatever
--node-ip-address says: the token is what keeps others from running code on it. Each node is
started with `ray start` in a session of its own, so stopping kills exactly the processes it
started (by process group), never another user's Ray on the same machine.
"""

from __future__ import annotations

import logging
import os
import secrets
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

log = logging.getLogger(__name__)


def free_port() -> int:
    """A TCP port nobody listens on right now."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


AUTH = ("RAY_AUTH_MODE", "RAY_AUTH_TOKEN")


def _reload_ray_auth() -> None:
    """Make an already imported Ray read RAY_AUTH_* again (it caches them), as `ray start` does."""
    if "ray._raylet" not in sys.modules:
        return  # read when Ray is imported
    from ray._raylet import AuthenticationTokenLoader, Config  # type: ignore[attr-defined]  # compiled

    Config.initialize("")
    AuthenticationTokenLoader.instance().reset_cache()


class LocalCluster:
    """`ray start --head` and `ray start --address` with one CPU each and token authentication;
    stop() ends them all and restores this process's environment."""

    def __init__(self, cpus_per_node: int = 1) -> None:
        self.cpus = cpus_per_node
        # Short: Ray's socket paths live under it and must stay under 108 characters.
        self.temp = Path(tempfile.mkdtemp(prefix="qa-ray-", dir="/tmp"))
        self.port = free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.groups: list[int] = []
        self.token = secrets.token_hex(32)
        self._saved: dict[str, str | None] = {}

    def _authenticate(self) -> None:
        """Put the cluster's token in this process's environment (drivers and children read it)."""
        self._saved = {key: os.environ.get(key) for key in AUTH}
        os.environ.update({"RAY_AUTH_MODE": "token", "RAY_AUTH_TOKEN": self.token})
        _reload_ray_auth()

    def _ray(self, *args: str) -> None:
        """Run `ray start ...` in a new session; its daemons stay in that process group."""
        ray = Path(sys.executable).with_name("ray")
        env = {**os.environ, "RAY_USAGE_STATS_ENABLED": "0"}
        proc = subprocess.Popen([str(ray), "start", *args, "--node-ip-address=127.0.0.1",
                                 f"--num-cpus={self.cpus}", "--disable-usage-stats",
                                 f"--dashboard-agent-listen-port={free_port()}"],
                                stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                                env=env, start_new_session=True)
        self.groups.append(proc.pid)
        out, _ = proc.communicate(timeout=120)
        if proc.returncode != 0:
            raise RuntimeError(f"ray start failed: {out.strip().splitlines()[-1:]}")

    def start(self) -> LocalCluster:
        """Start the head node."""
        self._authenticate()
        self._ray("--head", f"--port={self.port}", f"--temp-dir={self.temp}", "--include-dashboard=false",
                  f"--ray-client-server-port={free_port()}", f"--dashboard-port={free_port()}")
        return self

    def add_node(self) -> None:
        """Start one more worker node and wait until the cluster counts its CPUs."""
        want = self.cpus * (len(self.groups) + 1)
        self._ray(f"--address={self.address}")
        self.wait_for_cpus(want)

    def wait_for_cpus(self, want: int, timeout: float = 60) -> None:
        """Block until the cluster reports want CPUs (a new node registers within seconds)."""
        code = (f"import ray; ray.init(address={self.address!r}, logging_level='ERROR', log_to_driver=False);"
                " print(int(ray.cluster_resources().get('CPU', 0)))")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
            if out.stdout.strip().isdigit() and int(out.stdout.strip()) >= want:
                return
            time.sleep(1)
        raise RuntimeError(f"the cluster at {self.address} did not reach {want} CPUs")

    def processes(self) -> list[int]:
        """Every live process of this cluster: the nodes' daemons and their workers.

        Workers start sessions of their own, so they are found as the daemons' descendants.
        """
        parents: dict[int, int] = {}
        mine: set[int] = set()
        for proc in Path("/proc").iterdir():
            if not proc.name.isdigit():
                continue
            try:
                fields = (proc / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            pid = int(proc.name)
            parents[pid] = int(fields[1])
            if int(fields[2]) in self.groups:  # the process group
                mine.add(pid)
        grew = True
        while grew:
            more = {pid for pid, parent in parents.items() if parent in mine} - mine
            mine |= more
            grew = bool(more)
        return sorted(mine)

    def stop(self) -> None:
        """Kill every process the nodes started, and remove their files."""
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        self.groups.clear()
        shutil.rmtree(self.temp, ignore_errors=True)
        for key, value in self._saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        self._saved = {}
        _reload_ray_auth()

    def __enter__(self) -> LocalCluster:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()
