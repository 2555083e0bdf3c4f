"""Pure-Python evaluation metrics for the news QA chatbot (stdlib only).

Answer metrics follow the RealTime QA / SQuAD conventions, except that ``normalize_answer``
does NOT remove articles ("a", "an", "the"): it lower-cases, deletes every punctuation
character (ASCII and Unicode, so curly quotes and dashes vanish and "1,500" becomes "1500")
and collapses whitespace. An empty gold list (an unanswerable question) is treated as the
single gold "" so that only an empty prediction matches it.

Retrieval metrics take a ranked list of booleans (True = relevant) with binary relevance.

Citation metrics (``citation_precision_recall``) judge cited sentences against the gold
evidence spans of a question:

* a cited sentence is *correct* if its character span overlaps a gold evidence span of the
  same source article, or its text contains a gold answer (``contains_answer``);
* precision = correct cited sentences / cited sentences (0.0 when nothing is cited);
* recall = max(share of gold evidence spans overlapped by at least one cited sentence,
  1.0 if any cited sentence contains a gold answer), and 0.0 when there is no gold evidence.
  Gold evidence sentences that restate one fact in several articles are alternatives, so
  citing any sentence that states the answer counts as fully supported; otherwise partial
  credit is the share of gold spans the citations cover.

Spans are half-open character offsets ``[start, end)``; two spans overlap when
``a_start < b_end and b_start < a_end``.
"""

from __future__ import annotations

import math
import string
import unicodedata
from collections import Counter

_ASCII_PUNCT = frozenset(string.punctuation)


def _is_punct(ch: str) -> bool:
    """Return True for ASCII punctuation or any Unicode punctuation character (category P*)."""
    return ch in _ASCII_PUNCT or unicodedata.category(ch).startswith("P")


def normalize_answer(s: str) -> str:
    """Lower-case, delete punctuation (incl. curly quotes and dashes) and collapse whitespace."""
    s = "".join(ch for ch in s.lower() if not _is_punct(ch))
    return " ".join(s.split())


def _golds_or_empty(golds: list[str]) -> list[str]:
    """Return golds, or [""] when the list is empty (unanswerable question)."""
    return golds if golds else [""]


def exact_match(prediction: str, golds: list[str]) -> float:
    """Return 1.0 if the normalized prediction equals any normalized gold, else 0.0."""
    pred = normalize_answer(prediction)
    return max(float(pred == normalize_answer(g)) for g in _golds_or_empty(golds))


def _f1_single(pred_tokens: list[str], gold_tokens: list[str]) -> float:
    """Return SQuAD token F1 between two token lists (1.0 only if both are empty)."""
    if not pred_tokens or not gold_tokens:
        return float(pred_tokens == gold_tokens)
    common = Counter(pred_tokens) & Counter(gold_tokens)
    num_same = sum(common.values())
    if num_same == 0:
        return 0.0
    precision = num_same / len(pred_tokens)
    recall = num_same / len(gold_tokens)
    return 2 * precision * recall / (precision + recall)


def token_f1(prediction: str, golds: list[str]) -> float:
    """Return the maximum SQuAD-style token F1 of the prediction over the golds."""
    pred_tokens = normalize_answer(prediction).split()
    return max(_f1_single(pred_tokens, normalize_answer(g).split()) for g in _golds_or_empty(golds))


def _contains_tokens(haystack: list[str], needle: list[str]) -> bool:
    """Return True if needle occurs in haystack as a contiguous token sequence."""
    n = len(needle)
    return any(haystack[i : i + n] == needle for i in range(len(haystack) - n + 1))


def contains_answer(text: str, golds: list[str]) -> float:
    """Return 1.0 if any non-empty normalized gold occurs as a whole-token run in the text."""
    tokens = normalize_answer(text).split()
    for gold in golds:
        gold_tokens = normalize_answer(gold).split()
        if gold_tokens and _contains_tokens(tokens, gold_tokens):
            return 1.0
    return 0.0


def hit_at_k(ranked: list[bool], k: int) -> float:
    """Return 1.0 if any of the top-k ranked items is relevant, else 0.0."""
    return float(any(ranked[: max(k, 0)]))


def mrr_at_k(ranked: list[bool], k: int) -> float:
    """Return the reciprocal rank of the first relevant item in the top k (0.0 if none)."""
    for i, relevant in enumerate(ranked[: max(k, 0)]):
        if relevant:
            return 1.0 / (i + 1)
    return 0.0


def ndcg_at_k(ranked: list[bool], k: int, n_relevant: int) -> float:
    """Return binary nDCG@k with ideal DCG from min(n_relevant, k) hits, capped at 1.0."""
    if n_relevant <= 0 or k <= 0:
        return 0.0
    dcg = sum(1.0 / math.log2(i + 2) for i, rel in enumerate(ranked[:k]) if rel)
    idcg = sum(1.0 / math.log2(i + 2) for i in range(min(n_relevant, k)))
    return min(dcg / idcg, 1.0)


def precision_recall(tp: int, fp: int, fn: int) -> tuple[float, float]:
    """Return (tp/(tp+fp), tp/(tp+fn)), each defined as 0.0 when its denominator is 0."""
    precision = tp / (tp + fp) if tp + fp > 0 else 0.0
    recall = tp / (tp + fn) if tp + fn > 0 else 0.0
    return precision, recall


def percentile(values: list[float], q: float) -> float:
    """Return the q-th percentile (0-100) with linear interpolation, like numpy's default."""
    if not values:
        raise ValueError("percentile of an empty list")
    if not 0.0 <= q <= 100.0:
        raise ValueError(f"q must be in [0, 100], got {q}")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = math.floor(pos)
    hi = math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _overlaps(a_start: int, a_end: int, b_start: int, b_end: int) -> bool:
    """Return True if half-open spans [a_start, a_end) and [b_start, b_end) overlap."""
    return a_start < b_end and b_start < a_end


def citation_precision_recall(
    cited: list[tuple[str, int, int, str]],
    gold_evidence: list[tuple[str, int, int]],
    golds: list[str],
) -> tuple[float, float]:
    """Return (precision, recall) of cited sentences against gold spans, as in the module doc."""
    if cited:
        correct = 0
        for source, start, end, text in cited:
            hits_span = any(
                source == g_source and _overlaps(start, end, g_start, g_end)
                for g_source, g_start, g_end in gold_evidence
            )
            if hits_span or contains_answer(text, golds) > 0.0:
                correct += 1
        precision = correct / len(cited)
    else:
        precision = 0.0
    if not gold_evidence:
        return precision, 0.0
    covered = sum(
        1
        for g_source, g_start, g_end in gold_evidence
        if any(
            source == g_source and _overlaps(start, end, g_start, g_end)
            for source, start, end, _ in cited
        )
    )
    recall = covered / len(gold_evidence)
    if any(contains_answer(text, golds) > 0.0 for _, _, _, text in cited):
        recall = 1.0
    return precision, recall
