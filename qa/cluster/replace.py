"""Which corpus an index folder holds: a cluster build replaces another corpus's index only when asked."""

from __future__ import annotations

import json
from pathlib import Path

from qa.cluster.corpus import Corpus
from qa.config import Config
from qa.errors import IndexProblem
from qa.index.load import current_path


def refuse_replacing(config: Config, source: Path, corpus: Corpus) -> None:
    """Refuse a build that would remove the articles of another corpus from the index folder (the
    chat's index of seeds/, say): those are only replaced when asked (replace=True)."""
    path = current_path(config.index_dir)
    try:
        meta = json.loads((path / "meta.json").read_text("utf-8")) if path is not None else None
    except (OSError, ValueError):
        return  # no usable index: nothing to keep
    if not meta:
        return
    built_from = Path(meta.get("corpus") or config.seeds_dir.resolve())  # `qa build` reads seeds/
    removed = set(meta.get("articles", {})) - {a.source for a in corpus.articles}
    if built_from == source or not removed:
        return
    folder, held = _shown(config.index_dir.resolve()), len(meta.get("articles", {}))
    raise IndexProblem(
        f"{folder}/ holds the index of {_shown(built_from)} ({held} articles), and building "
        f"{_shown(source)} into it would remove {len(removed)} of them: give this corpus its own "
        f"folder (qa --index {source.stem}-index build …), or add --replace")


def _shown(path: Path) -> str:
    """A path as the user would write it: relative to the working folder when inside it."""
    try:
        return str(path.relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)
