"""Progress on stderr for every eval command: a bar with the time left, or a line per step."""

from __future__ import annotations

import sys
import time
from collections.abc import Iterable
from typing import TypeVar

from tqdm import tqdm

T = TypeVar("T")


def bar(items: Iterable[T] | None = None, total: int | None = None, desc: str = "", unit: str = "q",
        every: float = 2.0) -> tqdm:
    """A tqdm bar on stderr: done of total, elapsed, the time left at the pace so far, the rate."""
    return tqdm(items, total=total, desc=desc, unit=unit, mininterval=every, file=sys.stderr,
                dynamic_ncols=True)


def clock(seconds: float) -> str:
    """Seconds as 42s, 3m05s or 1h02m."""
    s = int(round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{s % 3600 // 60:02d}m"


class Steps:
    """One line per step on stderr: which step of how many, the time so far, and the time left.

    ``plan`` names each step with its expected seconds on the reference machine (2 cores); the
    time left is what the plan says is left, scaled by how the steps so far compared with it.
    """

    def __init__(self, command: str, plan: dict[str, float]) -> None:
        self.command = command
        self.plan = dict(plan)
        self.began = time.monotonic()
        self.done = 0.0  # planned seconds of the steps finished
        self.current: str | None = None

    def step(self, name: str, detail: str = "") -> None:
        """Say that step `name` of the plan starts now (the previous one finished)."""
        if self.current is not None:
            self.done += self.plan.get(self.current, 0.0)
        self.current = name
        names = list(self.plan)
        at = names.index(name) + 1 if name in self.plan else len(names)
        left = sum(self.plan[n] for n in names[at - 1:]) if name in self.plan else 0.0
        elapsed = time.monotonic() - self.began
        pace = elapsed / self.done if self.done > 0 and elapsed > 0 else 1.0
        guess = "planned" if self.done == 0 else "at this pace"
        line = (f"[{self.command} {at}/{len(names)}] {name}{f' ({detail})' if detail else ''}: "
                f"{clock(elapsed)} so far, about {clock(left * pace)} left ({guess})")
        print(line, file=sys.stderr, flush=True)

    def finish(self) -> float:
        """Say the command is done; its seconds."""
        elapsed = time.monotonic() - self.began
        print(f"[{self.command}] done in {clock(elapsed)}", file=sys.stderr, flush=True)
        return elapsed
