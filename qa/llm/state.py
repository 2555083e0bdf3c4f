"""The fixed instruction's KV state: saved once per model file, runtime build, settings and prompt
into QA_CACHE_DIR/kv/, restored into each slot at load instead of reading the instruction again.

llama.cpp saves and restores a slot only through its server's HTTP routes (POST
/slots/N?action=save|restore), which xllamacpp serves on a loopback port behind the runtime's key.
A state file is used only when its sha256 matches the one written beside it after saving.
"""

from __future__ import annotations

import hashlib
import json
import logging
import urllib.error
import urllib.request
from pathlib import Path

log = logging.getLogger(__name__)

Messages = list[dict[str, str]]


def build_id(xllamacpp: object) -> str:
    """The runtime build: its version, the CPU features it was built with, its library's size and time."""
    folder = Path(xllamacpp.__file__).parent  # type: ignore[attr-defined]
    libraries = sorted(f"{p.name}:{p.stat().st_size}:{p.stat().st_mtime_ns}" for p in folder.glob("*.so"))
    return "|".join([xllamacpp.__version__, xllamacpp.get_system_info(), *libraries])  # type: ignore[attr-defined]


def state_name(model: Path, build: str, settings: dict[str, object], prefix: Messages) -> str:
    """The state file's name: the model's stem and a hash of everything the saved state depends on."""
    st = model.stat()
    parts = [model.name, str(st.st_size), str(st.st_mtime_ns), build, json.dumps(settings, sort_keys=True),
             json.dumps(prefix, sort_keys=True)]
    return f"{model.stem}-{hashlib.sha256(chr(0).join(parts).encode()).hexdigest()[:20]}.bin"


def _digest(path: Path) -> str:
    with path.open("rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def _sidecar(path: Path) -> Path:
    return path.with_name(path.name + ".sha256")


def seal(path: Path) -> None:
    """Write the saved file's sha256 beside it: from then on it may be restored."""
    _sidecar(path).write_text(_digest(path), "utf-8")


def intact(path: Path) -> bool:
    """True when path exists and its sha256 is the one sealed beside it."""
    try:
        return _sidecar(path).read_text("utf-8").strip() == _digest(path)
    except OSError:
        return False


def discard(path: Path) -> None:
    """Remove a state file and its seal (stale, corrupt or half written)."""
    for p in (path, _sidecar(path)):
        p.unlink(missing_ok=True)


def slot_action(address: str, key: str, slot: int, action: str, filename: str, timeout: float = 60.0) -> str:
    """POST /slots/{slot}?action=save|restore on the runtime's own port: '' when done, else why not."""
    request = urllib.request.Request(f"{address}/slots/{slot}?action={action}",
                                     json.dumps({"filename": filename}).encode(),
                                     {"Content-Type": "application/json", "Authorization": f"Bearer {key}"})
    try:
        with urllib.request.urlopen(request, timeout=timeout) as reply:
            body = json.loads(reply.read() or b"{}")
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}: {exc.read()[:200].decode(errors='replace')}"
    except (OSError, ValueError) as exc:
        return f"{type(exc).__name__}: {exc}"
    return "" if isinstance(body, dict) and "error" not in body else str(body)[:200]
