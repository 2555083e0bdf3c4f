"""The span reader's logistic ranker and its calibration, as fitted by `python -m eval fit-reader`."""

from __future__ import annotations

import json
import math
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import numpy as np

from qa.config import ReaderName
from qa.readers.base import Candidate, Reading, Span
from qa.sentences.record import Sentence

RANKER_FILE = Path(__file__).with_name("ranker.json")
# No feature counts how many sentences or articles repeat a span: in the back numbers each
# question's passages are about different things, in a real index they are about one story,
# whose names every sentence repeats. Rarity (idf over the index) says "topic, not answer" in both.
SPAN_FEATURES = ("prior", "match", "noun_chunk", "gap", "rank", "distance", "near", "overlap", "words",
                 "names_noun", "proper", "position", "rarity", "subject", "object", "main", "clause",
                 "agent")
NO_ANSWER_TOP = 3  # the no-answer score is the product of (1 - p) over this many best spans


@dataclass(frozen=True)
class SpanCalibration:
    """P(the span is the answer) from its probability and its lead over the runner-up, as fitted
    out of fold by eval's fit-reader: a span far ahead of its rivals is right more often."""

    weight_p: float
    weight_margin: float
    bias: float

    def __call__(self, p: float, margin: float) -> float:
        return 1.0 / (1.0 + math.exp(-(self.weight_p * p + self.weight_margin * margin + self.bias)))


@dataclass(frozen=True)
class Ranker:
    """A logistic model over SPAN_FEATURES: weights and bias, and the calibration of its best span."""

    weights: np.ndarray
    bias: float
    calibration: SpanCalibration | None = None

    @classmethod
    def load(cls, path: Path = RANKER_FILE) -> Ranker:
        """The ranker fitted into path; ValueError when it was fitted on other features."""
        data = json.loads(path.read_text("utf-8"))
        if tuple(data["features"]) != SPAN_FEATURES or "confidence" not in data:
            raise ValueError(f"{path.name} was fitted on other features: run `python -m eval fit-reader`")
        c = data["confidence"]
        return cls(np.array(data["weights"], dtype=np.float64), float(data["bias"]),
                   SpanCalibration(float(c["p"]), float(c["margin"]), float(c["bias"])))

    def p(self, x: np.ndarray) -> np.ndarray:
        """Each row's probability of being the answer."""
        return 1.0 / (1.0 + np.exp(-(x @ self.weights + self.bias)))


@lru_cache(maxsize=1)
def default_ranker() -> Ranker:
    """The shipped ranker (ranker.json), read once per process."""
    return Ranker.load()


def reading_of(found: Sequence[tuple[Sentence, Candidate]], p: np.ndarray,
               calibration: SpanCalibration | None = None) -> Reading:
    """The reading of scored candidates: best first, one per distinct text."""
    best: dict[str, int] = {}
    for i in np.argsort(-p, kind="stable"):
        best.setdefault(found[i][1].key, int(i))
    order = list(best.values())
    top = [float(p[i]) for i in order[:2]]
    spans = []
    for rank, i in enumerate(order):
        # The best span's lead is over the second; any other's is its gap to the best.
        margin = float(p[i]) - (top[1] if rank == 0 and len(top) > 1 else top[0] if rank else 0.0)
        confidence = calibration(float(p[i]), margin) if calibration else float(p[i])
        spans.append(Span(found[i][0], found[i][1], float(p[i]), confidence))
    return Reading(tuple(spans), float(np.prod([1 - s.p for s in spans[:NO_ANSWER_TOP]])),
                   reader=ReaderName.SPANS)
