"""One wheel of xllamacpp from its source distribution: unpacked, patched, built with progress,
smoke-tested in a subprocess, and installed into an environment."""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from qa.llm.probe import CPU

VERSION = "2026.10.11549"  # xllamacpp, as pinned in pyproject.toml
PATCH = CPU / "amx_gcc12_fix.patch"
# Each would download during the build (llguidance from GitHub, BoringSSL, the web UI): off, so
# the build needs nothing but PyPI for its build requirements. The product uses none of them.
OFFLINE = ("-DLLAMA_LLGUIDANCE=OFF", "-DLLAMA_BUILD_BORINGSSL=OFF", "-DLLAMA_OPENSSL=OFF",
           "-DLLAMA_USE_PREBUILT_UI=OFF")
PROGRESS_EVERY = 30.0  # seconds between the lines a build prints while it runs
NICE = 10  # the build's priority: low, so the machine stays usable for the 10 minutes it takes
SMOKE_TIMEOUT = 600.0
PIP = ("-m", "pip", "--disable-pip-version-check")
Say = Callable[[str], None]


class BuildFailed(Exception):
    """A build, its smoke test or its install did not give a runtime to use; the message says why."""


def run(cmd: list[str], **kwargs: object) -> subprocess.CompletedProcess:
    """cmd's result, its output captured as text."""
    return subprocess.run(cmd, capture_output=True, text=True, **kwargs)  # type: ignore[call-overload]


def last(text: str) -> str:
    """The line of a tool's output that says what went wrong: the last naming an error, else the last."""
    lines = [line for line in text.strip().splitlines() if line.strip()]
    errors = [line for line in lines if "error" in line.lower()]
    return (errors or lines or ["no output"])[-1].strip()[:200]


def sdist(cache: Path) -> Path:
    """xllamacpp's source distribution, downloaded once into the cache."""
    tarball = cache / f"xllamacpp-{VERSION}.tar.gz"
    if not tarball.is_file():
        with tempfile.TemporaryDirectory(dir=cache) as tmp:
            got = run([sys.executable, *PIP, "download", "--no-deps", "--no-binary", ":all:",
                       f"xllamacpp=={VERSION}", "-d", tmp])
            found = list(Path(tmp).glob("xllamacpp-*.tar.gz"))
            if got.returncode or not found:
                raise BuildFailed("could not download its source: " + last(got.stderr or got.stdout))
            os.replace(found[0], tarball)
    return tarball


def source_tree(cache: Path, patched: bool) -> Path:
    """The unpacked source, kept between builds (a second build recompiles only what changed),
    with amx_gcc12_fix.patch applied or reverted as asked."""
    tree = cache / "src" / f"xllamacpp-{VERSION}"
    if not (tree / "setup.py").is_file():
        shutil.rmtree(tree, ignore_errors=True)
        with tarfile.open(sdist(cache)) as tar:
            tar.extractall(tree.parent, filter="data")
    llama = tree / "thirdparty" / "llama.cpp"
    if shutil.which("patch") is None:
        raise BuildFailed("no `patch` program to apply the AMX fix (apt-get install patch)")
    reverse = run(["patch", "-p1", "-R", "--dry-run", "-s", "-f", "-i", str(PATCH)], cwd=llama)
    applied = reverse.returncode == 0
    if applied != patched:
        done = run(["patch", "-p1", "-s", "-f", *(["-R"] if applied else []), "-i", str(PATCH)], cwd=llama)
        if done.returncode:
            raise BuildFailed(f"{PATCH.name} does not apply: {last(done.stdout + done.stderr)}")
    return tree


def build(name: str, cmake: tuple[str, ...], patched: bool, cache: Path, out: Path, say: Say) -> Path:
    """Build the wheel with llama.cpp's cmake flags into out, at low priority, saying every
    PROGRESS_EVERY s how long it has run; its log is out/build.log. Raises BuildFailed."""
    tree = source_tree(cache, patched)
    out.mkdir(parents=True, exist_ok=True)
    log_file = out / "build.log"
    env = {**os.environ, "CMAKE_ARGS": " ".join((*cmake, *OFFLINE)), "NPROC": str(os.cpu_count() or 2)}
    cmd = [sys.executable, *PIP, "wheel", "--no-deps", "-v", str(tree), "-w", str(out)]
    began = time.monotonic()
    with log_file.open("w") as log:
        proc = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env,
                                preexec_fn=lambda: os.nice(max(0, NICE - os.nice(0))))
        while proc.poll() is None:
            try:
                proc.wait(PROGRESS_EVERY)
            except subprocess.TimeoutExpired:
                say(f"      building xllamacpp for {name}: {time.monotonic() - began:.0f} s so far"
                    f"{_step(log_file)}")
    wheels = sorted(out.glob("xllamacpp-*.whl"))
    if proc.returncode or not wheels:
        raise BuildFailed(f"the build failed (exit {proc.returncode}): {last(log_file.read_text())} "
                          f"(log: {log_file})")
    return wheels[-1]


def _step(log: Path) -> str:
    """Where the compile is, from the last '[ 45%]' line of its log."""
    with log.open("rb") as fh:
        fh.seek(max(0, log.stat().st_size - 65536))
        tail = fh.read().decode(errors="replace")
    steps = re.findall(r"\[\s*(\d+)%\]", tail)
    return f", compiling ({steps[-1]}%)" if steps else ""


def smoke(wheel: Path, model: Path, features: tuple[str, ...]) -> None:
    """Read with the model through the wheel, alone in a subprocess; BuildFailed unless a grammar,
    log-probabilities and a stopped stream all work and every feature is reported."""
    with tempfile.TemporaryDirectory(prefix="qa-smoke-") as tmp:
        shutil.unpack_archive(wheel, tmp, "zip")
        try:
            ran = run([sys.executable, str(CPU / "smoke.py"), str(model), *features],
                      env={**os.environ, "PYTHONPATH": tmp}, cwd=tmp, timeout=SMOKE_TIMEOUT)
        except subprocess.TimeoutExpired:
            raise BuildFailed(f"the smoke test hung for {SMOKE_TIMEOUT:.0f} s") from None
    if ran.returncode < 0:
        raise BuildFailed(f"the smoke test was killed by {signal.Signals(-ran.returncode).name}")
    if ran.returncode:
        raise BuildFailed(f"the smoke test failed: {last(ran.stdout + ran.stderr)}")


def installed(python: str) -> tuple[str, str]:
    """python's xllamacpp: (the URL of the wheel file it came from, '' from an index; its version)."""
    code = ("import importlib.metadata as m, json\ntry:\n    d = m.distribution('xllamacpp')\n"
            "except m.PackageNotFoundError:\n    print('\\n')\nelse:\n"
            "    t = d.read_text('direct_url.json')\n    print(json.loads(t)['url'] if t else '')\n"
            "    print(d.version)")
    lines = run([python, "-c", code]).stdout.split("\n")
    return lines[0].strip(), (lines[1] if len(lines) > 1 else "").strip()


def install(python: str, wheel: Path | None) -> bool:
    """Install wheel into python's environment (None: the prebuilt wheel from the index) unless it
    is there; True when installed now. Raises BuildFailed when pip cannot."""
    url, version = installed(python)
    if (url == wheel.as_uri()) if wheel else (version == VERSION and not url):
        return False
    spec = [str(wheel)] if wheel else [f"xllamacpp=={VERSION}", "--only-binary", "xllamacpp"]
    got = run([python, *PIP, "install", "--no-deps", "--force-reinstall", *spec])
    if got.returncode:
        raise BuildFailed(f"pip could not install {spec[0]}: {last(got.stderr or got.stdout)}")
    return True
