"""Every hand-written rule of the reading and answering path, named once, each switchable off.

A rule is a heuristic over words (a word list, a pattern, a special case) that no fitted model or
calibrated threshold decides. Each is on by default; ``QA_RULES_OFF=name,name`` turns some off for the
whole process, and ``python -m eval ablate`` turns each off in turn and measures the change. The
table of rules, with where each came from, is ``rules.toml`` beside this module; ``docs/evaluation.md``
publishes what each is worth on data it was not written from.
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from functools import lru_cache, wraps
from pathlib import Path
from typing import Any, TypeVar

from qa.errors import BadInput

F = TypeVar("F", bound=Callable[..., Any])
RULES_FILE = Path(__file__).with_name("rules.toml")
VARIABLE = "QA_RULES_OFF"


@dataclass(frozen=True)
class Rule:
    """One rule: its name, the stage it acts in, what it does and where it came from."""

    name: str
    stage: str
    does: str
    origin: str


@lru_cache(maxsize=1)
def registry() -> dict[str, Rule]:
    """Every rule by name, read once from rules.toml."""
    data = tomllib.loads(RULES_FILE.read_text("utf-8"))
    return {name: Rule(name, r["stage"], r["does"], r["origin"]) for name, r in data.items()}


@lru_cache(maxsize=64)
def _parse(raw: str) -> frozenset[str]:
    names = frozenset(n.strip() for n in raw.split(",") if n.strip())
    if unknown := sorted(names - registry().keys()):
        raise BadInput(f"{VARIABLE} names no rule {', '.join(map(repr, unknown[:3]))}: "
                       "`python -m eval ablate --list` lists them")
    return names


def turned_off() -> frozenset[str]:
    """The rules QA_RULES_OFF turns off; BadInput naming any that is no rule."""
    return _parse(os.environ.get(VARIABLE, ""))


def on(name: str) -> bool:
    """Whether a rule acts; a name that is no rule is a bug (KeyError), never silently on."""
    if name not in registry():
        raise KeyError(f"no rule {name!r} in {RULES_FILE.name}")
    return name not in turned_off()


@contextmanager
def off(*names: str) -> Iterator[None]:
    """Turn these rules off (besides any already off) for the block: for tests and ablations."""
    before = os.environ.get(VARIABLE)
    _parse(",".join(names))
    os.environ[VARIABLE] = ",".join(sorted(turned_off() | set(names)))
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(VARIABLE, None)
        else:
            os.environ[VARIABLE] = before


def cached(maxsize: int = 2048) -> Callable[[F], F]:
    """lru_cache for a function whose result depends on rules: cached per set of rules turned off."""
    def wrap(fn: F) -> F:
        inner = lru_cache(maxsize)(lambda _off, *args: fn(*args))

        @wraps(fn)
        def call(*args: Any) -> Any:
            return inner(turned_off(), *args)

        call.cache_clear = inner.cache_clear  # type: ignore[attr-defined]
        return call  # type: ignore[return-value]
    return wrap
