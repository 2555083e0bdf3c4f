"""The reader's runtime built for this CPU, once per machine: make setup's last step.

    .venv/bin/python -m qa.llm.build              # the fastest xllamacpp that runs here (make runtime)
    .venv/bin/python -m qa.llm.build --background # the same, in a process of its own at low priority
    .venv/bin/python -m qa.llm.build --prebuilt   # the prebuilt wheel (make setup RUNTIME=prebuilt)
    .venv/bin/python -m qa.llm.build --rebuild    # build again, whatever the cache holds

It probes the CPU in subprocesses (qa/llm/probe.py), builds the pinned xllamacpp's source with the
flags that run there, AMX first, then without it (qa/llm/wheel.py), smoke-tests each wheel in a
subprocess (qa/llm/cpu/smoke.py), keeps it in QA_CACHE_DIR/wheels/<key>/ (the key hashes the
version, the flags, the patch and the compilers), and selects it (qa/llm/selected.py: processes
started from then on run it); it keeps the prebuilt wheel when there is no compiler or every build
or smoke test fails. It prints one line: which runtime, why, and how long it took. --background
returns at once, the build going on in a process of its own at the lowest priority, its output in
QA_CACHE_DIR/wheels/background.log (make setup's last step: the prebuilt wheel answers meanwhile).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from qa.llm import wheel
from qa.llm.probe import TILECFG, TILECFG_PATCHED, Verdict, cmake_flags, enabled, probe
from qa.llm.selected import LOG, PREBUILT, building, chosen, finished, remember, select, started, unselect
from qa.llm.wheel import OFFLINE, PATCH, VERSION, BuildFailed, Say

CHILD = ("-m", "qa.llm.build")  # what the background process runs: this module
SHOWN = {"AVX512": "AVX-512", "AVX512_VNNI": "VNNI", "AVX512_BF16": "BF16", "AVX512_VBMI": "VBMI",
         "AVX_VNNI": "AVX-VNNI", "AMX_INT8": "AMX"}


@dataclass(frozen=True)
class Candidate:
    """One build worth trying: its name, llama.cpp's flags, whether the source needs the AMX patch,
    and the extensions its get_system_info() must report."""

    name: str
    cmake: tuple[str, ...]
    patched: bool
    features: tuple[str, ...]


def candidates(found: dict[str, Verdict]) -> list[Candidate]:
    """The builds to try, fastest first: with AMX where ggml's tile config runs (patched when only
    the patch makes it run), then without; none when nothing beyond the prebuilt's AVX2 runs."""
    plain = enabled(found, amx=False)
    if not found["AVX2"].ok or plain == ("AVX2",):
        return []
    out = []
    if found["AMX_INT8"].ok and (found[TILECFG].ok or found[TILECFG_PATCHED].ok):
        patched = not found[TILECFG].ok
        amx = enabled(found, amx=True)
        out.append(Candidate(_title(amx) + (" with ggml's g++ 12 tile fix" if patched else ""),
                             cmake_flags(found, amx=True), patched, amx))
    out.append(Candidate(_title(plain), cmake_flags(found, amx=False), False, plain))
    return out


def _title(features: tuple[str, ...]) -> str:
    return ", ".join(SHOWN.get(f, f) for f in features if f != "AVX2")


def compiler_id(cc: str, cxx: str) -> str:
    """The C and C++ compilers' first --version lines."""
    return " | ".join(wheel.run([c, "--version"]).stdout.partition("\n")[0] for c in (cc, cxx))


def cache_key(version: str, cmake: tuple[str, ...], patch: str, compiler: str) -> str:
    """What a built wheel depends on, hashed: the version, every CMake flag, the patch, the compilers."""
    parts = [version, " ".join((*cmake, *OFFLINE)), patch, compiler]
    return hashlib.sha256("\x00".join(parts).encode()).hexdigest()[:16]


def compilers() -> tuple[str | None, str | None]:
    """This machine's C and C++ compilers, or None each."""
    return shutil.which("cc") or shutil.which("gcc"), shutil.which("c++") or shutil.which("g++")


def blocker(model: Path | None, prebuilt: bool = False) -> str:
    """Why no build is tried here ('' when one may be): asked not to, no compiler, no model to smoke-test."""
    if prebuilt:
        return "as asked (RUNTIME=prebuilt)"
    if not all(compilers()):
        return "no C and C++ compiler to build one (apt-get install g++)"
    if model is None:
        return "no reader model to smoke-test a build with (run `qa install-reader`)"
    return ""


def choose(cache: Path, model: Path | None, python: str, say: Say, prebuilt: bool = False,
           rebuild: bool = False) -> tuple[str, str]:
    """Select the fastest runtime that runs here for the processes started from now on; (what, why)."""
    cc, cxx = compilers()
    tried: list[str] = [why] if (why := blocker(model, prebuilt)) else []
    if not tried and cc and cxx and model is not None:
        found, compiler = probe(cc, cxx), compiler_id(cc, cxx)
        for c in candidates(found):
            folder = cache / cache_key(VERSION, c.cmake, PATCH.read_text() if c.patched else "", compiler)
            record = {} if rebuild else _record(folder)
            wheels = sorted(folder.glob("xllamacpp-*.whl"))
            if record.get("smoke") == "passed" and wheels:
                fresh = select(cache, wheels[-1], _built(c))
                return _built(c), "; ".join([*tried, f"the cached wheel {folder}" + ("" if fresh else
                                                                                     ", already in use")])
            if str(record.get("smoke", "")).startswith("failed"):
                tried.append(f"{c.name}: {record['smoke']} (when built; --rebuild tries again)")
                continue
            began = time.monotonic()
            try:
                built = wheel.build(c.name, c.cmake, c.patched, cache, folder, say)
                wheel.smoke(built, model, c.features)
            except BuildFailed as exc:
                tried.append(f"{c.name}: {exc}")
                if "smoke test" in str(exc):  # a build that runs wrong here: never tried again
                    _save(folder, c, compiler, f"failed: {exc}", time.monotonic() - began)
                    for w in folder.glob("*.whl"):
                        w.unlink()
                continue
            _save(folder, c, compiler, "passed", time.monotonic() - began)
            select(cache, built, _built(c))
            shutil.rmtree(cache / "src", ignore_errors=True)  # the wheel is kept; its 400 MB tree is not
            done = f"built in {time.monotonic() - began:.0f} s, smoke test passed"
            return _built(c), "; ".join([*tried, done])
        tried = tried or ["this CPU runs nothing the prebuilt wheel lacks"]
        shutil.rmtree(cache / "src", ignore_errors=True)
    unselect(cache)
    if not wheel.install(python, None):  # an environment a build was installed into before: the prebuilt back
        tried.append("already installed")
    return PREBUILT, "; ".join(tried)


def _built(c: Candidate) -> str:
    return f"xllamacpp {VERSION} built for this CPU ({c.name})"


def _record(folder: Path) -> dict:
    try:
        return json.loads((folder / "build.json").read_text("utf-8"))
    except (OSError, ValueError):
        return {}


def _save(folder: Path, c: Candidate, compiler: str, smoked: str, seconds: float) -> None:
    record = {"version": VERSION, "candidate": c.name, "cmake": [*c.cmake, *OFFLINE], "patched": c.patched,
              "compiler": compiler, "build_and_smoke_s": round(seconds), "smoke": smoked}
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "build.json").write_text(json.dumps(record, indent=1), "utf-8")


def lowest_priority() -> None:
    """Nice 19 for this process and, where Linux groups CPU time by session, for its session too."""
    os.nice(max(0, 19 - os.nice(0)))
    # With autogroup scheduling a new session competes as a whole with the user's sessions: nice 19
    # inside it alone left the compile 43% of a loaded 2-core machine (measured), not the ~1% it asks.
    try:
        Path("/proc/self/autogroup").write_text("19")
    except OSError:  # no autogroup (not Linux, or the kernel's scheduler groups otherwise)
        pass


def background(cache: Path, model: Path | None, python: str) -> tuple[str, str]:
    """Start choose() in a process of its own at the lowest priority and return; (what runs now, why)."""
    if record := chosen(cache):
        return str(record["name"]), "built here before"
    if running := building(cache):
        return PREBUILT, f"a build for this CPU is still compiling in the background (log: {running['log']})"
    if why := blocker(model):
        return PREBUILT, why
    log = cache / LOG
    with log.open("w") as out:  # the child writes on; this process returns at once
        child = subprocess.Popen([sys.executable, *CHILD, "--python", python],
                                 stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                 start_new_session=True, preexec_fn=lowest_priority)
    started(cache, child.pid, log)
    return PREBUILT, (f"one built for this CPU is compiling in the background at low priority (log: {log}), "
                      "used from the next start once it passes its smoke test")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m qa.llm.build", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--prebuilt", action="store_true", help="install the prebuilt wheel, build nothing")
    parser.add_argument("--rebuild", action="store_true", help="build again, ignoring the cache")
    parser.add_argument("--background", action="store_true",
                        help="build in a process of its own at the lowest priority; return at once")
    parser.add_argument("--python", default=sys.executable, help="the environment to install into")
    args = parser.parse_args(argv)
    from qa.config import Config
    from qa.errors import QAError
    from qa.llm.model_file import model_path

    began = time.monotonic()
    config = Config.from_env()
    try:
        model: Path | None = model_path(config.cache_dir, config.reading.reader_model)
    except QAError:
        model = None
    (cache := config.cache_dir / "wheels").mkdir(parents=True, exist_ok=True)
    try:
        if args.background and not (args.prebuilt or args.rebuild):
            what, why = background(cache, model, args.python)
        else:
            what, why = choose(cache, model, args.python, lambda line: print(line, flush=True), args.prebuilt,
                               args.rebuild)
            remember(cache, what, why, args.prebuilt)
    except (BuildFailed, subprocess.SubprocessError, OSError) as exc:
        remember(cache, PREBUILT, str(exc), False)
        print(f"error: the reader's runtime: {exc}", file=sys.stderr)
        return 1
    finally:
        finished(cache)  # when this process is the background build: no longer running
    print(f"      runtime: {what}: {why} ({time.monotonic() - began:.0f} s)", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
