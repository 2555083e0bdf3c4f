"""Multiple choice: score each choice on what the reader and the retrieved sentences say of it.

A conditional logit over the four choices of a question, fitted on RealTime QA back numbers by
`python -m eval fit-reader` (eval/choice_weights.json) and used by `python -m eval realtimeqa`.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from eval import metrics as m
from qa import QA
from qa.reading.reader import Reading
from qa.text.words import tokenize

WEIGHTS_FILE = Path(__file__).with_name("choice_weights.json")
FEATURES = ("reader_p", "reader_exact", "stated", "stated_cos", "stated_terms", "in_passages",
            "pair_cos", "in_question", "mentions")
# A reader span names a choice when their token F1 reaches this.
SPAN_MATCH = 0.5


def features(engine: QA, question: str, choices: Sequence[str], reading: Reading,
             scored: Sequence[tuple[int, float]], passages: Sequence[str]) -> np.ndarray:
    """One row of FEATURES per choice, from the reader's spans and the sentences it read."""
    index = engine.index
    pool = [sid for sid, _ in scored[:20]]
    texts = [index.sentence_text(sid) for sid in pool]
    vectors = index.sent_vectors[pool] if pool else np.zeros((0, 1))
    cos = vectors @ engine.query_embedder.embed([question])[0] if pool else np.zeros(0)
    pairs = engine.query_embedder.embed([f"{question} {c}" for c in choices])
    pair_cos = (vectors @ pairs.T).max(axis=0) if pool else np.zeros(len(choices))
    q_terms = set(tokenize(question))
    joined = " ".join(passages)
    rows = []
    for i, choice in enumerate(choices):
        spans = [s.p for s in reading.spans if m.token_f1(s.candidate.text, [choice]) >= SPAN_MATCH]
        exact = [s.p for s in reading.spans if m.exact_match(s.candidate.text, [choice])]
        stating = [j for j, t in enumerate(texts) if m.contains_answer(t, [choice])]
        terms = max((len(q_terms & set(tokenize(texts[j]))) / max(1, len(q_terms)) for j in stating),
                    default=0.0)
        c_terms = set(tokenize(choice))
        rows.append((
            max(spans, default=0.0),
            max(exact, default=0.0),
            1.0 if stating else 0.0,
            max((float(cos[j]) for j in stating), default=0.0),
            terms,
            m.contains_answer(joined, [choice]),
            float(pair_cos[i]),
            len(c_terms & q_terms) / max(1, len(c_terms)),
            np.log1p(len(stating)),
        ))
    return np.array(rows, dtype=np.float64)


@dataclass(frozen=True)
class Chooser:
    """Standardised linear scores over FEATURES; the highest-scoring choice is picked."""

    weights: np.ndarray
    mean: np.ndarray
    scale: np.ndarray

    @classmethod
    def load(cls, path: Path = WEIGHTS_FILE) -> Chooser:
        data = json.loads(path.read_text("utf-8"))
        if tuple(data["features"]) != FEATURES:
            raise ValueError(f"{path.name} was fitted on other features: run `python -m eval fit-reader`")
        return cls(*(np.array(data[k], dtype=np.float64) for k in ("weights", "mean", "scale")))

    def choose(self, x: np.ndarray) -> int:
        return int(np.argmax(((x - self.mean) / self.scale) @ self.weights))

    def save(self, path: Path, note: str) -> None:
        path.write_text(json.dumps({"features": list(FEATURES),
                                    **{k: [round(float(v), 5) for v in getattr(self, k)]
                                       for k in ("weights", "mean", "scale")},
                                    "fitted": note}, indent=1) + "\n", "utf-8")


def fit(xs: Sequence[np.ndarray], right: Sequence[int], l2: float = 1e-2, steps: int = 1500,
        rate: float = 0.5) -> Chooser:
    """Conditional logit (softmax over each question's choices) by gradient descent."""
    flat = np.vstack(xs)
    mean, scale = flat.mean(axis=0), flat.std(axis=0) + 1e-9
    # Questions have 2 to 5 choices: pad to the most, and give padding no probability.
    width = max(len(x) for x in xs)
    z = np.zeros((len(xs), width, flat.shape[1]))
    pad = np.ones((len(xs), width), dtype=bool)
    for q, x in enumerate(xs):
        z[q, : len(x)] = (x - mean) / scale
        pad[q, : len(x)] = False
    target = np.zeros(pad.shape)
    target[np.arange(len(right)), right] = 1.0
    w = np.zeros(flat.shape[1])
    for _ in range(steps):
        s = np.where(pad, -np.inf, z @ w)
        p = np.exp(s - s.max(axis=1, keepdims=True))
        p /= p.sum(axis=1, keepdims=True)
        w -= rate * (np.einsum("qc,qcf->f", p - target, z) / len(z) + l2 * w)
    return Chooser(w, mean, scale)


def accuracy(chooser: Chooser, xs: Sequence[np.ndarray], right: Sequence[int]) -> float:
    return sum(chooser.choose(x) == r for x, r in zip(xs, right, strict=True)) / max(1, len(xs))
