"""Extractive answers: pick the sentences that answer, cite each one exactly, or decline."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field, replace

import numpy as np

from .consensus import pick_short
from .followup import resolve
from .lexical import tokenize
from .passage import Passage
from .retrieve import Mode, Retriever, clean_question
from .short import answer_type, short_answer

NOT_COVERED = "The articles don't cover this."
# Sentences within this much of the best one vote on the short answer (eval/rtqa.py measured
# 0.15: wider lets loosely related sentences outvote the best one on the hand-written set).
SHORT_MARGIN = 0.15


@dataclass(frozen=True)
class Weights:
    """How much each piece of evidence counts in a sentence's score."""

    dense: float = 0.6  # cosine of question and sentence vectors
    lexical: float = 0.4  # idf-weighted share of the question's terms in the sentence
    type: float = 0.1  # the sentence holds the kind of span asked for (number, date, name)
    proximity: float = 0.1  # the question's terms sit close together in the sentence
    rank: float = 0.0  # the sentence's passage ranks high in retrieval
    support: float = 0.05  # per other article giving the same short answer
    context: float = 0.3  # weight of terms that come from earlier turns, not the question


@dataclass(frozen=True)
class Answer:
    """An answer whose ``[n]`` markers point at ``citations[n-1]``, exact cited sentences."""

    question: str
    text: str
    answered: bool
    citations: tuple[Passage, ...] = ()
    short: str | None = None
    passages: tuple[Passage, ...] = ()
    query: str = ""
    evidence: float = 0.0
    timings: dict[str, float] = field(default_factory=dict)
    # Which method wrote the text ("extractive" or "llm"; not "path", which gradio_client
    # takes for a file to download), generated sentences that failed
    # verification, and why a requested generative answer fell back (see qa/generate.py).
    method: str = "extractive"
    dropped: tuple[str, ...] = ()
    notice: str | None = None

    def to_dict(self) -> dict[str, object]:
        """A JSON-ready dict, citations and passages included."""
        return asdict(self)


@dataclass(frozen=True)
class _Scored:
    sentence: int
    score: float
    short: str | None


class Answerer:
    """Composes extractive answers from a retriever's passages and precomputed sentence vectors."""

    def __init__(self, retriever: Retriever, min_evidence: float, k: int = 5,
                 max_facts: int = 2, weights: Weights | None = None,
                 max_question_chars: int = 2000, short_pool: int = 10) -> None:
        self.short_pool = short_pool
        self.weights = weights or Weights()
        self.max_question_chars = max_question_chars
        self.retriever = retriever
        self.index = retriever.index
        self.min_evidence = min_evidence
        self.k = k
        self.max_facts = max_facts

    def answer(self, question: str, history: Sequence[object] | None = None,
               mode: Mode = "hybrid") -> Answer:
        """Answer a question, resolving follow-ups against history [(question, answer), ...]."""
        began = time.perf_counter()
        question = clean_question(question, self.max_question_chars)
        query = resolve(question, history)
        hits = self.retriever.select(query, self.k, mode)
        passages = tuple(self.retriever.passage(i, s) for i, s in hits)
        retrieved = time.perf_counter()
        scored = self._score(question, query, [i for i, _ in hits])
        timings = {"retrieve_ms": (retrieved - began) * 1000}
        if not scored or scored[0].score < self.min_evidence:
            timings["answer_ms"] = (time.perf_counter() - retrieved) * 1000
            best = scored[0].score if scored else 0.0
            return Answer(question, NOT_COVERED, False, passages=passages, query=query,
                          evidence=round(best, 4), timings=timings)
        evidence = scored[0].score
        scored = self._lead_with_short(query, scored)
        facts = self._facts(scored)
        citations: list[Passage] = []
        parts = []
        for group in facts:
            markers = []
            for item in group:
                citations.append(self._citation(item.sentence, item.score))
                markers.append(f"[{len(citations)}]")
            parts.append(f"{' '.join(self.index.sentence_text(group[0].sentence).split())} "
                         + "".join(markers))
        timings["answer_ms"] = (time.perf_counter() - retrieved) * 1000
        return Answer(question, " ".join(parts), True, tuple(citations), facts[0][0].short,
                      passages, query, round(evidence, 4), timings)

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
        typed = answer_type(query) != "other"
        scored = []
        for sid, cos in zip(ids, dense, strict=True):
            text = self.index.sentence_text(sid)
            s_terms, s_set = self.index.sentence_terms(sid)
            lexical = sum(v for t, v in idf.items() if t in s_set) / total
            short = short_answer(query, text) if typed else None
            score = (w.dense * float(cos) + w.lexical * lexical + (w.type if short else 0.0)
                     + w.proximity * proximity(q_terms, s_terms) + w.rank / (1 + rank[sid]))
            scored.append(_Scored(sid, score, short))
        ordered = sorted(scored, key=lambda s: (-s.score, s.sentence))
        return _vote(ordered, self.index.sent_sources, w.support)

    def _lead_with_short(self, query: str, scored: list[_Scored]) -> list[_Scored]:
        """Put first the sentence that best states the short answer the top sentences agree on."""
        pool = [(self.index.sentence_text(s.sentence), s.score, self.index.sent_sources[s.sentence])
                for s in scored[: self.short_pool] if s.score >= scored[0].score - SHORT_MARGIN]
        picked = pick_short(query, pool)
        if picked is None:
            return scored
        short, i = picked
        return [replace(scored[i], short=short)] + scored[:i] + scored[i + 1 :]

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
        return Passage(source, self.index.articles[source].title,
                       self.index.sentence_text(sentence), start, end, round(score, 4))



def _vote(scored: list[_Scored], sources: list[str], weight: float) -> list[_Scored]:
    """Let sentences from other articles that give the same short answer back it up.

    A name, number or date that several articles state is likelier to be the answer
    than one that a single, slightly closer sentence states.
    """
    support: dict[str, dict[str, float]] = {}
    for item in scored:
        if item.short:
            per_source = support.setdefault(item.short.lower(), {})
            source = sources[item.sentence]
            per_source[source] = max(per_source.get(source, 0.0), item.score)
    if len(support) < 2:
        return scored
    boosted = []
    for item in scored:
        if item.short:
            others = [v for s, v in support[item.short.lower()].items() if s != sources[item.sentence]]
            item = _Scored(item.sentence, item.score + weight * sum(others), item.short)
        boosted.append(item)
    return sorted(boosted, key=lambda s: (-s.score, s.sentence))


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


def contains_span(text: str, span: str) -> bool:
    """True when span's words occur in text as a run (case and punctuation ignored)."""
    words = re.findall(r"\w+", span.lower())
    return bool(words) and re.search(r"\b" + r"\W+".join(map(re.escape, words)) + r"\b",
                                     text.lower()) is not None
