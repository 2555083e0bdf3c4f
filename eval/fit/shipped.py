"""The files the package ships that eval fits, named once, and the one function that writes them."""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from qa.readers.lm.calibration import CALIBRATION_FILE, default_calibration
from qa.readers.spans.ranker import RANKER_FILE, default_ranker
from qa.readers.spans.types import TYPES_FILE, type_table
from qa.sentences.evidence import EVIDENCE_FILE, default_model


@dataclass(frozen=True)
class Shipped:
    """A fitted file of the package: where it lives, the cache that reads it, how it is laid out."""

    path: Path
    cache: Callable[[], object]  # an lru_cache'd reader of the file, cleared once it is rewritten
    sort_keys: bool = False


# The span reader's ranker and type table (python -m eval fit-reader), the language model's
# calibration (python -m eval fit-lm --write).
SHIPPED = {"ranker": Shipped(RANKER_FILE, default_ranker),
           "types": Shipped(TYPES_FILE, type_table, sort_keys=True),
           "lm_calibration": Shipped(CALIBRATION_FILE, default_calibration),
           # What the language model reads first (python -m eval fit-evidence --write).
           "evidence": Shipped(EVIDENCE_FILE, default_model)}


def write_shipped(name: str, data: dict) -> Path:
    """Write one of SHIPPED whole (a reader never sees half a file), then clear the cache that read
    it, so this process reads what was fitted; its path."""
    entry = SHIPPED[name]
    tmp = entry.path.with_name(f".{entry.path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_text(json.dumps(data, indent=1, sort_keys=entry.sort_keys) + "\n", "utf-8")
        os.replace(tmp, entry.path)
    finally:
        tmp.unlink(missing_ok=True)
    entry.cache.cache_clear()  # type: ignore[attr-defined]
    return entry.path
