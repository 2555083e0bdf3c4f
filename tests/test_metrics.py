"""Tests of eval.quality.metrics on hand-made cases with hand-computed values."""

import math
import random

import pytest

from eval.quality.metrics import (
    citation_precision_recall,
    contains_answer,
    exact_match,
    hit_at_k,
    mrr_at_k,
    ndcg_at_k,
    normalize_answer,
    percentile,
    precision_recall,
    token_f1,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("  The  Big, CAT! ", "the big cat"),
        ("1,500", "1500"),
        ("al-Qaeda", "alqaeda"),
        ("Taliban\u2019s \u201cgoodwill\u201d", "talibans goodwill"),
        ("Feb. 29", "feb 29"),
        ("a\n\tb", "a b"),
        ("the a an", "the a an"),
        ("-- ... !", ""),
        ("", ""),
    ],
)
def test_normalize_answer(raw: str, expected: str) -> None:
    assert normalize_answer(raw) == expected


def test_exact_match_keeps_articles() -> None:
    assert exact_match("The Wilson Center.", ["wilson center"]) == 0.0
    assert exact_match("The Wilson Center.", ["the wilson center"]) == 1.0


def test_exact_match_max_over_golds_and_punctuation() -> None:
    assert exact_match("Wilson Center!", ["the Wilson Center", "Wilson Center"]) == 1.0
    assert exact_match("1500", ["1,500"]) == 1.0
    assert exact_match("1000", ["1,500", "3,500"]) == 0.0


def test_exact_match_empty_golds_means_no_answer() -> None:
    assert exact_match("", []) == 1.0
    assert exact_match("Paris", []) == 0.0


def test_token_f1_partial_overlap() -> None:
    # pred {the, big, cat}, gold {big, dog}: P = 1/3, R = 1/2, F1 = 2*(1/6)/(5/6) = 0.4
    assert token_f1("the big cat", ["big dog"]) == pytest.approx(0.4)


def test_token_f1_max_over_golds() -> None:
    # second gold: common 2, P = 2/3, R = 1, F1 = 0.8
    assert token_f1("the big cat", ["big dog", "big cat"]) == pytest.approx(0.8)


def test_token_f1_counts_duplicates() -> None:
    # common = min counts: a -> 1, b -> 1; P = R = 2/3
    assert token_f1("a a b", ["a b b"]) == pytest.approx(2 / 3)


def test_token_f1_exact_and_disjoint() -> None:
    assert token_f1("Suhail Shaheen", ["suhail shaheen"]) == 1.0
    assert token_f1("Reuters", ["AFP"]) == 0.0


def test_token_f1_empty_cases() -> None:
    assert token_f1("", [""]) == 1.0
    assert token_f1("...", ["!"]) == 1.0
    assert token_f1("", []) == 1.0
    assert token_f1("", ["x"]) == 0.0
    assert token_f1("x", [""]) == 0.0
    assert token_f1("x", []) == 0.0


def test_contains_answer_whole_tokens() -> None:
    assert contains_answer("Every day, 100 Taliban prisoners", ["100"]) == 1.0
    assert contains_answer("1000 prisoners", ["100"]) == 0.0
    assert contains_answer("released 1,500 prisoners", ["1500"]) == 1.0
    assert contains_answer("the Wilson Center think-tank", ["wilson center"]) == 1.0
    assert contains_answer("the Wilson Center think-tank", ["center wilson"]) == 0.0
    assert contains_answer("talks in Qatar.", ["Doha", "qatar"]) == 1.0


def test_contains_answer_empty_golds() -> None:
    assert contains_answer("anything", []) == 0.0
    assert contains_answer("anything", [""]) == 0.0
    assert contains_answer("", ["x"]) == 0.0


def test_hit_at_k() -> None:
    assert hit_at_k([False, False, True], 2) == 0.0
    assert hit_at_k([False, False, True], 3) == 1.0
    assert hit_at_k([True], 0) == 0.0
    assert hit_at_k([], 5) == 0.0


def test_mrr_at_k() -> None:
    assert mrr_at_k([False, True, True], 3) == 0.5
    assert mrr_at_k([False, False, True], 3) == pytest.approx(1 / 3)
    assert mrr_at_k([False, False, True], 2) == 0.0
    assert mrr_at_k([True], 1) == 1.0


def test_ndcg_at_k() -> None:
    # one relevant at rank 2: 1/log2(3) / 1
    assert ndcg_at_k([False, True], 2, 1) == pytest.approx(1 / math.log2(3))
    # ranks 1 and 3 relevant, 2 relevant in total: (1 + 1/2) / (1 + 1/log2(3)) = 0.91972
    assert ndcg_at_k([True, False, True], 3, 2) == pytest.approx(1.5 / (1 + 1 / math.log2(3)))
    assert ndcg_at_k([True, False, True], 3, 2) == pytest.approx(0.919720, abs=1e-6)


def test_ndcg_at_k_edge_cases() -> None:
    assert ndcg_at_k([True, True], 2, 0) == 0.0
    assert ndcg_at_k([False, False], 2, 3) == 0.0
    assert ndcg_at_k([True, True], 2, 5) == 1.0  # ideal uses min(n_relevant, k) = 2
    assert ndcg_at_k([True, True], 2, 1) == 1.0  # more hits than n_relevant: capped
    assert ndcg_at_k([False, False, True], 2, 1) == 0.0  # relevant item beyond k


def test_precision_recall() -> None:
    assert precision_recall(3, 1, 2) == pytest.approx((0.75, 0.6))
    assert precision_recall(0, 0, 0) == (0.0, 0.0)
    assert precision_recall(0, 2, 0) == (0.0, 0.0)
    assert precision_recall(2, 0, 0) == (1.0, 1.0)
    assert precision_recall(2, 0, 2) == (1.0, 0.5)
    assert precision_recall(0, 0, 4) == (0.0, 0.0)


def test_percentile_hand_values() -> None:
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == pytest.approx(2.5)
    assert percentile([4.0, 1.0, 3.0, 2.0], 90) == pytest.approx(3.7)  # pos 2.7 -> 3 + 0.7
    assert percentile([3.0, 1.0, 2.0], 0) == 1.0
    assert percentile([3.0, 1.0, 2.0], 100) == 3.0
    assert percentile([10.0], 90) == 10.0


def test_percentile_errors() -> None:
    with pytest.raises(ValueError):
        percentile([], 50)
    with pytest.raises(ValueError):
        percentile([1.0], 101)


def test_percentile_matches_numpy() -> None:
    np = pytest.importorskip("numpy")
    rng = random.Random(0)
    for _ in range(50):
        values = [rng.uniform(-10, 10) for _ in range(rng.randint(1, 20))]
        q = rng.uniform(0, 100)
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)))


GOLD = [("a.txt", 100, 150)]


def test_citation_overlap_same_source() -> None:
    assert citation_precision_recall([("a.txt", 140, 200, "text")], GOLD, ["Parwan"]) == (1.0, 1.0)


def test_citation_other_source_or_adjacent_span_is_wrong() -> None:
    assert citation_precision_recall([("b.txt", 100, 150, "text")], GOLD, ["Parwan"]) == (0.0, 0.0)
    # half-open spans: [150, 160) does not overlap [100, 150)
    assert citation_precision_recall([("a.txt", 150, 160, "text")], GOLD, ["Parwan"]) == (0.0, 0.0)


def test_citation_answer_in_text_counts() -> None:
    cited = [("b.txt", 0, 10, "The release starts at Parwan prison."), ("a.txt", 0, 50, "other")]
    assert citation_precision_recall(cited, GOLD, ["Parwan"]) == (0.5, 1.0)


def test_citation_partial_recall_over_several_spans() -> None:
    gold = [("a.txt", 0, 10), ("b.txt", 0, 10), ("c.txt", 0, 10)]
    cited = [("a.txt", 5, 8, "foo"), ("c.txt", 9, 20, "bar"), ("d.txt", 0, 10, "baz")]
    precision, recall = citation_precision_recall(cited, gold, ["xyz"])
    assert precision == pytest.approx(2 / 3)
    assert recall == pytest.approx(2 / 3)


def test_citation_empty_cases() -> None:
    assert citation_precision_recall([], GOLD, ["Parwan"]) == (0.0, 0.0)
    assert citation_precision_recall([("a.txt", 0, 5, "foo")], [], []) == (0.0, 0.0)
