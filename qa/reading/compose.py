"""Extractive answers: pick the sentences that answer, cite each one exactly, or decline."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from qa.answer import NOT_COVERED, Answer, contains_span
from qa.passage import Passage
from qa.reading import coverage, recency
from qa.reading.question import ask
from qa.reading.reader import Reader, Reading
from qa.retrieval.followup import resolve
from qa.retrieval.retrieve import Mode, Retriever, clean_question
from qa.text.words import looks_english, tokenize

_KIND_WORDS = {"money": "a sum of money", "percent": "a percentage", "count": "a number"}
NOT_ENGLISH = ("The question does not look like English: the articles and the model are English, "
               "so ask in English.")


@dataclass(frozen=True)
class Weights:
    """How much each piece of evidence counts in a sentence's score."""

    dense: float = 0.6  # cosine of question and sentence vectors
    lexical: float = 0.4  # idf-weighted share of the question's terms in the sentence
    type: float = 0.1  # the sentence holds a span of the kind asked for (a person, a count...)
    proximity: float = 0.1  # the question's terms sit close together in the sentence
    rank: float = 0.0  # the sentence's passage ranks high in retrieval
    context: float = 0.3  # weight of terms that come from earlier turns, not the question


@dataclass(frozen=True)
class _Scored:
    sentence: int
    score: float
    short: str | None = None


class Answerer:
    """Composes extractive answers from a retriever's passages and precomputed sentence vectors."""

    def __init__(self, retriever: Retriever, min_evidence: float, k: int = 5,
                 max_facts: int = 2, weights: Weights | None = None,
                 max_question_chars: int = 2000, min_short: float = 0.4,
                 hinge_evidence: float = 1.0) -> None:
        self.weights = weights or Weights()
        self.max_question_chars = max_question_chars
        self.retriever = retriever
        self.index = retriever.index
        self.reader = Reader(self.index)
        self.min_evidence = min_evidence
        self.min_short = min_short
        self.hinge_evidence = hinge_evidence
        self.k = k
        self.max_facts = max_facts

    def answer(self, question: str, history: Sequence[object] | None = None,
               mode: Mode = "hybrid", since: str | None = None, until: str | None = None) -> Answer:
        """Answer a question (follow-ups resolved against history), from articles dated since..until."""
        began = time.perf_counter()
        question = clean_question(question, self.max_question_chars)
        query = resolve(question, history)
        hits = self.retriever.select(query, self.k, mode, since, until)
        passages = tuple(self.retriever.passage(i, s) for i, s in hits)
        retrieved = time.perf_counter()
        scored = self._score(question, query, [i for i, _ in hits])
        timings = {"retrieve_ms": (retrieved - began) * 1000}
        evidence = scored[0].score if scored else 0.0
        reading = self.reader.read(ask(query), [(s.sentence, s.score) for s in scored])
        best = reading.best
        refusal = self._refusal(question, query, evidence, passages, scored)
        if refusal is not None:
            timings["answer_ms"] = (time.perf_counter() - retrieved) * 1000
            return Answer(question, NOT_COVERED, False, passages=passages, query=query,
                          evidence=round(evidence, 4), timings=timings, notice=refusal or None,
                          confidence=round(best.confidence, 4) if best else 0.0,
                          no_answer=round(reading.no_answer, 4))
        scored, span = self._lead_with_short(scored, reading)
        facts, span = recency.latest_first(self.index, scored, self._facts(scored), reading, span,
                                           self.min_short, _Scored)
        citations: list[Passage] = []
        parts = []
        for group in facts:
            markers = []
            for item in group:
                citations.append(self._citation(item.sentence, item.score))
                markers.append(f"[{len(citations)}]")
            parts.append(f"{' '.join(self.index.sentence_text(group[0].sentence).split())} "
                         + "".join(markers))
        parts = recency.dated_text(self.index, facts, parts)
        timings["answer_ms"] = (time.perf_counter() - retrieved) * 1000
        return Answer(question, " ".join(parts), True, tuple(citations), span.text if span else None,
                      passages, query, round(evidence, 4), timings, short_span=span,
                      confidence=round(best.confidence, 4) if best else 0.0,
                      no_answer=round(reading.no_answer, 4))

    def scored(self, question: str, mode: Mode = "hybrid") -> list[tuple[int, float]]:
        """(sentence, score) of the retrieved sentences, best first: what the reader reads."""
        query = clean_question(question, self.max_question_chars)
        hits = self.retriever.select(query, self.k, mode)
        return [(s.sentence, s.score) for s in self._score(query, query, [i for i, _ in hits])]

    def read(self, question: str, mode: Mode = "hybrid",
             scored: Sequence[tuple[int, float]] | None = None) -> Reading:
        """The reader's candidates for a question, best first (for multiple choice and eval); from
        its scored sentences when the caller has them already."""
        return self.reader.read(ask(clean_question(question, self.max_question_chars)),
                                self.scored(question, mode) if scored is None else scored)

    def _refusal(self, question: str, query: str, evidence: float, passages: Sequence[Passage],
                 scored: list[_Scored]) -> str | None:
        """Why the evidence does not answer the question ("" when only the score is too low), or None."""
        if not scored or evidence < self.min_evidence:
            # The embedder and the articles are English: another language scores low everywhere.
            return "" if looks_english(question) else NOT_ENGLISH
        asked = ask(query)
        if coverage.lacks_kind(asked, self.index, [s.sentence for s in scored]):
            return f"No retrieved passage states {_KIND_WORDS[asked.kind]}."
        gone = coverage.missing(ask(question), [p.text for p in passages])
        if gone and evidence < self.hinge_evidence:
            names = " or ".join(f"“{h}”" for h in gone[:3])
            return f"No retrieved passage mentions {names}."
        return None

    def _score(self, question: str, query: str, chunk_ids: list[int]) -> list[_Scored]:
        """Every sentence of the retrieved chunks, scored against the question, best first."""
        rank: dict[int, int] = {}
        for r, chunk_id in enumerate(chunk_ids):
            for sid in self.index.chunk_sentences(chunk_id):
                rank.setdefault(sid, r)
        ids = sorted(rank)
        if not ids:
            return []
        w = self.weights
        vectors = self.index.sent_vectors[ids]
        dense = vectors @ self.retriever.embed_query(query)
        if query != question:
            # A follow-up may read best alone or best resolved; take the better reading.
            dense = np.maximum(dense, vectors @ self.retriever.embed_query(question))
        own = tokenize(question)
        own_set = set(own)
        extra = [t for t in tokenize(query) if t not in own_set]
        q_terms = own + extra
        idf = {t: self.index.terms.weight(t) * (w.context if t in extra else 1.0) for t in q_terms}
        total = sum(idf.values()) or 1.0
        labels = ask(query).labels
        scored = []
        for sid, cos in zip(ids, dense, strict=True):
            s_terms, s_set = self.index.sentence_terms(sid)
            lexical = sum(v for t, v in idf.items() if t in s_set) / total
            typed = bool(labels) and any(s[2] in labels for s in self.index.annotations.of(sid))
            score = (w.dense * float(cos) + w.lexical * lexical + (w.type if typed else 0.0)
                     + w.proximity * proximity(q_terms, s_terms) + w.rank / (1 + rank[sid]))
            scored.append(_Scored(sid, score))
        return sorted(scored, key=lambda s: (-s.score, s.sentence))

    def _lead_with_short(self, scored: list[_Scored], reading: Reading
                         ) -> tuple[list[_Scored], Passage | None]:
        """Put first the sentence holding the reader's answer, when the reader is confident of it."""
        best = reading.best
        if best is None or best.confidence < self.min_short:
            return scored, None
        at = next(i for i, s in enumerate(scored) if s.sentence == best.sentence)
        c = best.candidate
        source = self.index.sent_sources[best.sentence]
        span = self.index.passage(source, c.text, c.start, c.end, round(best.confidence, 4))
        lead = _Scored(best.sentence, scored[at].score, c.text)
        return [lead] + scored[:at] + scored[at + 1:], span

    def _facts(self, scored: list[_Scored]) -> list[list[_Scored]]:
        """Group the best sentences into facts: one sentence per fact, cited from each article."""
        best = scored[0]
        facts: list[list[_Scored]] = [[best]]
        vectors = self.index.sent_vectors
        for item in scored[1:12]:
            if item.score < 0.8 * best.score:
                break
            source = self.index.sent_sources[item.sentence]
            for group in facts:
                lead = group[0]
                if lead.short is not None:
                    # A typed fact (a number, name, date) is the same when its span recurs.
                    same = contains_span(self.index.sentence_text(item.sentence), lead.short)
                else:
                    same = float(vectors[item.sentence] @ vectors[lead.sentence]) >= 0.85
                if same:
                    if source not in {self.index.sent_sources[g.sentence] for g in group}:
                        group.append(item)
                    break
            else:
                if (best.short is None and len(facts) < self.max_facts
                        and item.score >= 0.9 * best.score):
                    facts.append([item])
        return facts

    def _citation(self, sentence: int, score: float) -> Passage:
        """The Passage for one cited sentence, with its exact offsets."""
        source = self.index.sent_sources[sentence]
        start, end = (int(x) for x in self.index.sent_spans[sentence])
        return self.index.passage(source, self.index.sentence_text(sentence), start, end, round(score, 4))


def proximity(q_terms: list[str], s_terms: list[str]) -> float:
    """Matched question terms per token of the shortest window holding them all (0 to 1)."""
    wanted = set(q_terms)
    hits = [(i, t) for i, t in enumerate(s_terms) if t in wanted]
    distinct = {t for _, t in hits}
    if len(distinct) < 2:
        return 0.0
    best = len(s_terms)
    last: dict[str, int] = {}
    for i, term in hits:
        last[term] = i
        if len(last) == len(distinct):
            best = min(best, i - min(last.values()) + 1)
    return len(distinct) / best


