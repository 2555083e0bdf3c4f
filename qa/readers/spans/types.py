"""The span reader's prior: which span label answered each kind of question in RealTime QA back numbers."""

from __future__ import annotations

import json
import math
from functools import lru_cache
from pathlib import Path

from qa.question.kinds import ENTITY_LABELS, NUMERIC_LABELS
from qa.question.record import Question

TYPES_FILE = Path(__file__).with_name("types.json")
NOUN_CHUNK_LABEL = "NP"


class TypeTable:
    """Counts of the label that answered each question key and kind, fitted by `python -m eval fit-reader`."""

    def __init__(self, keys: dict[str, dict[str, float]], kinds: dict[str, dict[str, float]],
                 labels: list[str], strength: float = 4.0) -> None:
        self.keys, self.kinds, self.labels, self.strength = keys, kinds, labels, strength

    @lru_cache(maxsize=4096)  # noqa: B019 - one table per process, keys repeat
    def log_prior(self, key: str, kind: str, label: str) -> float:
        """log P(label | question key), backed off to the question's kind."""
        base = self._smoothed(self.kinds.get(kind, {}), 1.0 / len(self.labels), label, 1.0)
        counts = self.keys.get(key, {})
        return math.log(self._smoothed(counts, base, label, self.strength))

    @staticmethod
    def _smoothed(counts: dict[str, float], base: float, label: str, strength: float) -> float:
        total = sum(counts.values())
        return (counts.get(label, 0.0) + strength * base) / (total + strength)


@lru_cache(maxsize=1)
def type_table() -> TypeTable:
    """The shipped table (types.json), read once per process."""
    data = json.loads(TYPES_FILE.read_text("utf-8")) if TYPES_FILE.is_file() else {}
    labels = sorted(ENTITY_LABELS | NUMERIC_LABELS | {NOUN_CHUNK_LABEL})
    return TypeTable(data.get("keys", {}), data.get("kinds", {}), labels)


def prior(question: Question, label: str) -> float:
    """log P(label | question) from the learned table, backed off to the kind."""
    return type_table().log_prior(question.key, question.expects, label)
