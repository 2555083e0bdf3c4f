"""Which xllamacpp a process runs: the one built for this CPU once it passed its smoke test, else
the environment's prebuilt wheel.

A build that passed is unpacked beside its wheel and named in QA_CACHE_DIR/wheels/runtime.json;
each process puts that folder first on sys.path before it imports xllamacpp, so a build finished
while the app runs (`make setup` starts it in the background) is used from the next start, and
nothing is installed into an environment a running process imports from.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import time
from pathlib import Path

from qa.llm.wheel import VERSION

RECORD = "runtime.json"  # the build in use: its unpacked folder, its name
BUILDING = "building.json"  # the background build now running: its process, when it began, its log
OUTCOME = "outcome.json"  # what the last build here chose, and why
LOG = "background.log"
PREBUILT = f"the prebuilt xllamacpp {VERSION} (AVX2)"
FASTER = ("`make runtime` builds one for this CPU's instruction sets, about 1.5× faster where it has "
          "AVX-512 (about 25 minutes on 2 cores, once per machine)")


def wheels_dir(cache_dir: Path) -> Path:
    """Where builds, their records and the background build's log are kept."""
    return cache_dir / "wheels"


def _read(path: Path) -> dict:
    try:
        data = json.loads(path.read_text("utf-8"))
    except (OSError, ValueError):
        return {}
    return data if isinstance(data, dict) else {}


def _write(path: Path, data: dict) -> None:
    """path's new content, whole or not at all (a reader never sees half a record)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}")
    tmp.write_text(json.dumps(data, indent=1), "utf-8")
    os.replace(tmp, tmp.with_name(path.name))


def select(wheels: Path, wheel: Path, name: str) -> bool:
    """Unpack wheel beside it and name it in runtime.json; False when it already was the one in use."""
    site = wheel.parent / "site"
    current = _read(wheels / RECORD)
    if current.get("wheel") == str(wheel) and chosen(wheels):
        return False
    fresh = wheel.parent / f"site.{os.getpid()}"
    shutil.rmtree(fresh, ignore_errors=True)
    shutil.unpack_archive(wheel, fresh, "zip")
    if site.exists():  # a process that imported the old copy keeps its open files; new ones get this
        shutil.rmtree(site)
    os.replace(fresh, site)
    _write(wheels / RECORD, {"version": VERSION, "name": name, "wheel": str(wheel), "site": str(site)})
    return True


def unselect(wheels: Path) -> bool:
    """Back to the prebuilt wheel from the next start; True when a build was in use."""
    try:
        (wheels / RECORD).unlink()
    except FileNotFoundError:
        return False
    return True


def chosen(wheels: Path) -> dict:
    """The build in use (name, site), or {} when it is the prebuilt: none passed, or it is gone or stale."""
    record = _read(wheels / RECORD)
    if record.get("version") != VERSION or not (Path(record.get("site", "")) / "xllamacpp").is_dir():
        return {}
    return record


def use(cache_dir: Path) -> str:
    """Put the build in use first on sys.path (before xllamacpp is imported); what this process runs."""
    record = chosen(wheels_dir(cache_dir))
    loaded = sys.modules.get("xllamacpp")
    if loaded is not None:  # imported already: that one runs, whatever the record says
        site = record.get("site")
        built = site is not None and Path(str(loaded.__file__)).is_relative_to(site)
        return record["name"] if built else PREBUILT
    if not record:
        return PREBUILT
    if record["site"] not in sys.path:
        sys.path.insert(0, record["site"])
    return str(record["name"])


def building(wheels: Path) -> dict:
    """The background build now running (pid, started, log), or {} when none is."""
    record = _read(wheels / BUILDING)
    try:
        os.kill(int(record["pid"]), 0)
        cmdline = Path(f"/proc/{int(record['pid'])}/cmdline").read_bytes()
    except (KeyError, ValueError, OSError):
        return {}
    return record if b"qa.llm.build" in cmdline else {}  # not a process that took its number since


def describe(cache_dir: Path) -> str:
    """One line: the runtime a process started now runs, and how to get the faster one when it is not."""
    wheels = wheels_dir(cache_dir)
    if record := chosen(wheels):
        return f"{record['name']} ({record['site']})"
    if running := building(wheels):
        began = time.strftime("%H:%M", time.localtime(running.get("started", 0)))
        return (f"{PREBUILT}; one built for this CPU is compiling in the background since {began} "
                f"(log: {running.get('log')}), and is used from the next start once it passes its smoke test")
    last = _read(wheels / OUTCOME)
    if last.get("what") == PREBUILT and last.get("why") and not last.get("asked"):
        return f"{PREBUILT}: the last build here kept it ({last['why']}); {FASTER}"
    return f"{PREBUILT}; {FASTER}"


def started(wheels: Path, pid: int, log: Path) -> None:
    """Record the background build just started, for building() and describe()."""
    _write(wheels / BUILDING, {"pid": pid, "started": time.time(), "log": str(log)})


def finished(wheels: Path) -> None:
    """Forget the background build record when it names this process."""
    if _read(wheels / BUILDING).get("pid") == os.getpid():
        (wheels / BUILDING).unlink(missing_ok=True)


def remember(wheels: Path, what: str, why: str, asked: bool) -> None:
    """What the build just chose and why, for describe(); asked: the prebuilt was asked for."""
    _write(wheels / OUTCOME, {"what": what, "why": why, "asked": asked, "at": time.time()})
