"""The language-model reader's calibrated scores: P(its phrase is right) and P(no sentence answers)."""

from __future__ import annotations

import json
import logging
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from qa.llm.base import Token

log = logging.getLogger(__name__)

CALIBRATION_FILE = Path(__file__).with_name("calibration.json")
# What the confidence is fitted on: the phrase's summed, first and weakest token log-probability,
# and the probability the model gave to declining at its first token.
TOKEN_FEATURES = ("logprob", "first", "weakest", "declined")
# And what the reading says of the phrase: how many sentences it read hold it, where the one it is
# cited from stands in what it read (0: first), and whether it is of the kind the question asks for.
READING_FEATURES = ("found_in", "found_rank", "typed")
CONFIDENCE_FEATURES = TOKEN_FEATURES + READING_FEATURES
# What the no-answer score is fitted on: that probability, and whether no sentence held the phrase.
NO_ANSWER_FEATURES = ("declined", "unverified")


def features(tokens: Sequence[Token], declined: str) -> tuple[float, ...]:
    """TOKEN_FEATURES of a reply, from its tokens' log-probabilities and their best alternatives."""
    lps = [t.logprob for t in tokens if t.text.strip()] or [-20.0]
    first = tokens[0] if tokens else Token("", -20.0)
    p_declined = sum(math.exp(lp) for text, lp in first.top
                     if text.strip() and declined.startswith(text.strip().lower()))
    return (sum(lps), lps[0], min(lps), min(1.0, p_declined))


@dataclass(frozen=True)
class Logistic:
    """A fitted logistic model: weights over named features, and a bias."""

    features: tuple[str, ...]
    weights: tuple[float, ...]
    bias: float

    def __call__(self, values: Mapping[str, float]) -> float:
        z = self.bias + sum(w * values.get(f, 0.0) for f, w in zip(self.features, self.weights, strict=True))
        return 1.0 / (1.0 + math.exp(-max(-50.0, min(50.0, z))))


@dataclass(frozen=True)
class LMCalibration:
    """Both scores, fitted out of fold on RealTime QA 2022 by `python -m eval fit-lm`; without a
    fit, the phrase's own probability and the model's probability of declining."""

    right: Logistic | None = None
    none: Logistic | None = None

    def confidence(self, values: Mapping[str, float]) -> float:
        """P(the phrase is the right answer), from its CONFIDENCE_FEATURES."""
        return self.right(values) if self.right else math.exp(values.get("logprob", -20.0))

    def no_answer(self, declined: float, unverified: bool) -> float:
        """P(the sentences the model read don't hold the answer)."""
        if self.none:
            return self.none({"declined": declined, "unverified": float(unverified)})
        return max(declined, 0.5) if unverified else declined


@lru_cache(maxsize=1)
def default_calibration() -> LMCalibration:
    """The shipped calibration, read once per process."""
    return load_calibration()


def load_calibration(path: Path = CALIBRATION_FILE) -> LMCalibration:
    """The fitted calibration, or the unfitted one (with a warning) when the file does not match."""
    if not path.is_file():
        return LMCalibration()
    data = json.loads(path.read_text("utf-8"))
    right, none = data.get("confidence", {}), data.get("no_answer", {})
    if (not set(right.get("features", ())) <= set(CONFIDENCE_FEATURES) or not right.get("features")
            or tuple(none.get("features", ())) != NO_ANSWER_FEATURES):
        log.warning("%s was fitted on other features: run `python -m eval fit-lm --write`", path.name)
        return LMCalibration()
    return LMCalibration(Logistic(tuple(right["features"]), tuple(right["weights"]), float(right["bias"])),
                         Logistic(NO_ANSWER_FEATURES, tuple(none["weights"]), float(none["bias"])))
