"""Settings: where the articles and index live, and a frozen dataclass of settings per component
(``components.py``), each field overridable by a ``QA_<FIELD>`` variable, checked when loaded."""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from qa.config.components import (
    DEFAULT_MODEL,
    MAX_CONTEXT,
    MIN_CONTEXT,
    READERS,
    Answering,
    Generation,
    Indexing,
    ReaderName,
    Reading,
    Retrieval,
    Serving,
    Team,
)
from qa.errors import BadInput

__all__ = ["DEFAULT_MODEL", "MAX_CONTEXT", "MIN_CONTEXT", "READERS", "Answering", "Config", "Generation",
           "Indexing", "ReaderName", "Reading", "Retrieval", "Serving", "Team", "project_root"]

_PATHS = ("seeds_dir", "index_dir", "cache_dir")
COMPONENTS = {"indexing": Indexing, "retrieval": Retrieval, "reading": Reading, "answering": Answering,
              "generation": Generation, "serving": Serving, "team": Team}
# Which component each setting belongs to: its name is its variable's, QA_<NAME>.
OWNER = {f.name: part for part, kind in COMPONENTS.items() for f in fields(kind)}


def project_root(start: Path | None = None) -> Path:
    """QA_HOME, else the nearest folder from start (the working folder) upwards holding seeds/."""
    if home := os.environ.get("QA_HOME"):
        return Path(home).expanduser()
    here = (start or Path.cwd()).resolve()
    return next((d for d in (here, *here.parents) if (d / "seeds").is_dir()), here)


def _default_cache() -> Path:
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "qa"


@dataclass(frozen=True)
class Config:
    """Where the articles, the index and the per-machine files live, and each component's settings."""

    seeds_dir: Path = Path("seeds")
    index_dir: Path = Path("index")
    # Per-machine files made once: the ONNX exports of the packaged model, the reader's model.
    cache_dir: Path = field(default_factory=_default_cache)
    indexing: Indexing = field(default_factory=Indexing)
    retrieval: Retrieval = field(default_factory=Retrieval)
    reading: Reading = field(default_factory=Reading)
    answering: Answering = field(default_factory=Answering)
    generation: Generation = field(default_factory=Generation)
    serving: Serving = field(default_factory=Serving)
    team: Team = field(default_factory=Team)

    def __post_init__(self) -> None:
        # Paths may be given as strings, as users write them: Config(seeds_dir="news").
        for key in _PATHS:
            value = getattr(self, key)
            if not isinstance(value, Path):
                if not isinstance(value, str):
                    raise TypeError(f"{key} must be a str or Path, not {type(value).__name__}")
                object.__setattr__(self, key, Path(value))

    @classmethod
    def of(cls, **settings: Any) -> Config:
        """A Config from settings by their own names, whatever component holds them:
        ``Config.of(seeds_dir="news", k=3, reader="spans")``."""
        return cls().replace(**settings)

    def replace(self, **settings: Any) -> Config:
        """A copy with some settings changed, by their own names (or whole components)."""
        top: dict[str, Any] = {}
        parts: dict[str, dict[str, Any]] = {}
        for name, value in settings.items():
            if name in OWNER:
                parts.setdefault(OWNER[name], {})[name] = value
            elif name in {f.name for f in fields(self)}:
                top[name] = value
            else:
                raise TypeError(f"Config has no setting {name!r}")
        for part, changed in parts.items():
            top[part] = dataclasses.replace(top.get(part, getattr(self, part)), **changed)
        return dataclasses.replace(self, **top)

    @classmethod
    def from_env(cls, **overrides: object) -> Config:
        """Defaults, then ``QA_<NAME>`` variables, then overrides (by setting name).

        Relative articles and index folders are found like git finds its repository: in the project
        root (``QA_HOME``, else the nearest folder upwards holding ``seeds/``).
        """
        from qa import rules

        rules.turned_off()  # a QA_RULES_OFF naming no rule stops here, in one line
        values: dict[str, object] = {}
        for name, default in _defaults().items():
            raw = os.environ.get(f"QA_{name.upper()}")
            if raw is not None and raw != "":
                values[name] = _convert(name, raw, default)
        values.update({k: v for k, v in overrides.items() if v is not None})
        defaults = [key for key in ("seeds_dir", "index_dir") if key not in values]
        if defaults and (root := project_root()) != Path.cwd().resolve():
            # Set folders (a variable, --seeds) stay relative to the working folder, as users mean.
            values.update({key: root / getattr(cls, key) for key in defaults})
        return cls.of(**values)


def _defaults() -> dict[str, object]:
    """Every setting's name and default, the paths and each component's."""
    out: dict[str, object] = {"seeds_dir": Config.seeds_dir, "index_dir": Config.index_dir,
                              "cache_dir": _default_cache()}
    for kind in COMPONENTS.values():
        out.update({f.name: f.default for f in fields(kind)})
    return out


def _convert(name: str, raw: str, default: object) -> object:
    """Turn an environment string into the type of the setting's default."""
    try:
        if isinstance(default, bool):
            return raw.strip().lower() in {"1", "true", "yes", "on"}
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError as exc:
        raise BadInput(f"QA_{name.upper()}={raw!r} is not a valid {type(default).__name__}") from exc
    if isinstance(default, Path):
        return Path(raw)
    return raw
