"""What the language model reads first: the fitted ranking of the reading pool (qa/sentences/evidence.py)
and its fit (eval/fit/evidence.py), on a fake index, and the shipped fit the product reads."""

from __future__ import annotations

import json

import numpy as np
import pytest
from reading import read_by_model

from eval.fit import evidence as fit
from qa import QA, Config
from qa.question import analyse
from qa.sentences.evidence import EVIDENCE_FILE, FEATURES, EvidenceModel, default_model, lead_first

RANK, TYPED = FEATURES.index("passage_rank"), FEATURES.index("typed_new")


def test_the_shipped_ranking_is_fitted_for_the_pool_the_product_reads() -> None:
    shipped = json.loads(EVIDENCE_FILE.read_text("utf-8"))
    assert shipped["features"] == list(FEATURES) and shipped["read_k"] == Config().retrieval.read_k
    model = default_model()
    assert len(model.weights) == len(FEATURES)  # not the unfitted ranking (the sentence score alone)
    x = np.eye(len(FEATURES))
    assert not np.array_equal(model.rank(x), x[:, 0])


def _pool(engine: QA, gold_sid: int, rank_of: dict[int, int], typed: int) -> dict:
    """A question's pool over the fake index: the unfitted score prefers sentence 0; ``typed`` is
    the sentence holding a span of the kind asked for."""
    index = engine.index
    ids = sorted(rank_of)
    x = np.zeros((len(ids), len(FEATURES)))
    for row, sid in enumerate(ids):
        x[row, 0] = 1.0 if sid == 0 else 0.5
        x[row, RANK] = 1 / (1 + rank_of[sid])
        x[row, TYPED] = float(sid == typed)
    gold = index.sentence_text(gold_sid)
    records = [engine.answerer.gatherer.record(sid) for sid in ids]
    return {"id": str(gold_sid), "gold": gold, "ids": records, "x": x, "in_articles": True,
            "y": np.array([sid == gold_sid for sid in ids]),
            "rank": np.array([rank_of[sid] for sid in ids])}


@pytest.fixture
def index(fake_qa: QA) -> QA:
    fake_qa.build()
    return fake_qa


def test_recall_counts_only_the_first_k_passages(index) -> None:
    # The answer's sentence (5) comes from the 8th passage: a pool of 5 passages cannot read it.
    pool = [_pool(index, 5, {0: 0, 3: 2, 5: 7}, typed=5)]
    scores = [pool[0]["x"][:, TYPED]]
    assert fit.recall(pool, scores, 1, 1000, k=5) == 0.0
    assert fit.recall(pool, scores, 1, 1000, k=10) == 1.0


def test_the_fit_learns_what_the_unfitted_score_misses(index) -> None:
    # In every question the sentence of the kind asked for holds the answer; the sentence score
    # prefers another. Out of fold, the fitted ranking reads it first, the unfitted one never.
    golds = (2, 4, 5, 7, 2, 4, 5, 7, 4, 5)  # none beside sentence 0, read with it as its context
    pool = [_pool(index, gold, {0: 0, 3: 1, 6: 2, gold: 3}, typed=gold) for gold in golds]
    unfitted = [EvidenceModel().rank(p["x"]) for p in pool]
    assert fit.recall(pool, unfitted, 1, 1000) == 0.0
    assert fit.recall(pool, fit.out_of_fold(pool, 10), 1, 1000) == 1.0
    figures = fit.report(pool, Config.of(read_k=10, reader_sentences=4, reader_budget=1100))
    assert figures["by_pool"]["10"]["pool_holds_answer"] == 1.0
    assert figures["by_pool"]["5"]["4 sentences, 1100 characters"]["fitted_oof"] == 1.0
    shipped = figures["by_pool"]["10"]["4 sentences, 1100 characters"]
    assert figures["recall_fitted_oof"] == shipped["fitted_oof"] == 1.0


def test_the_answers_own_best_sentence_is_read_first(fake_qa: QA) -> None:
    fake_qa.build()
    answerer = fake_qa.answerer
    question = analyse("When will the harbour bridge reopen?")
    pool = answerer.retriever.select(question.query, 10)
    evidence = answerer.gatherer.gather(question, pool, 5, answerer.retriever.embed_query)
    # A model that reads the sentences least like the question first.
    unlike = EvidenceModel(tuple(-1.0 if f == "score" else 0.0 for f in FEATURES))
    x = np.array([[s.features[f] for f in FEATURES] for s in evidence.read])
    ranked = [evidence.read[i] for i in np.argsort(-unlike.rank(x), kind="stable")]
    best = evidence.cited[0]
    assert ranked[0].id != best.id and best in ranked  # the bridge's own sentence is read last
    led = lead_first(ranked, [best])
    assert led == [best, *(s for s in ranked if s.id != best.id)]  # the rest keep the model's order
    # What the product reads: its best-scored sentence first, whatever the fitted order says.
    assert evidence.read[0].id == best.id


@pytest.mark.slow
def test_the_fitted_ranking_reads_the_sentence_that_answers(real_qa: QA) -> None:
    # The written-commitment sentence is in the wider pool (QA_READ_K) only, and the unfitted
    # ranking of that pool passes it over for sentences about the prisoners' release; the fitted
    # one gives it to the model (the loss table's "not retrieved" before the pool was widened).
    answer = real_qa.answer("What must the freed Taliban inmates promise before walking out?")
    read_by_model(answer)
    assert any("written commitment not to return" in c.text for c in answer.trace.given)
    assert not any("written commitment" in p.text for p in answer.passages)  # not in the cited five
