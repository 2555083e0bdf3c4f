"""Extractive answers: pick the sentences that answer, cite each one exactly, or decline."""

from __future__ import annotations

import re
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field

from .followup import resolve
from .lexical import tokenize
from .passage import Passage
from .retrieve import Mode, Retriever, clean_question
from .short import answer_type, short_answer

NOT_COVERED = "The articles don't cover this."
# Weights of the sentence score: semantic similarity, share of question terms, answer type,
# and how close together the question's terms sit in the sentence.
W_DENSE, W_LEXICAL, W_TYPE, W_PROXIMITY = 0.6, 0.4, 0.1, 0.1
# Weight of each other article's sentence that gives the same short answer.
W_SUPPORT = 0.05


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
                 max_facts: int = 2) -> None:
        self.retriever = retriever
        self.index = retriever.index
        self.min_evidence = min_evidence
        self.k = k
        self.max_facts = max_facts

    def answer(self, question: str, history: Sequence[object] | None = None,
               mode: Mode = "hybrid") -> Answer:
        """Answer a question, resolving follow-ups against history [(question, answer), ...]."""
        began = time.perf_counter()
        question = clean_question(question)
        query = resolve(question, history)
        hits = self.retriever.select(query, self.k, mode)
        passages = tuple(self.retriever.passage(i, s) for i, s in hits)
        retrieved = time.perf_counter()
        scored = self._score(query, [i for i, _ in hits])
        timings = {"retrieve_ms": (retrieved - began) * 1000}
        if not scored or scored[0].score < self.min_evidence:
            timings["answer_ms"] = (time.perf_counter() - retrieved) * 1000
            best = scored[0].score if scored else 0.0
            return Answer(question, NOT_COVERED, False, passages=passages, query=query,
                          evidence=round(best, 4), timings=timings)
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
                      passages, query, round(scored[0].score, 4), timings)

    def _score(self, query: str, chunk_ids: list[int]) -> list[_Scored]:
        """Every sentence of the retrieved chunks, scored against the question, best first."""
        ids = sorted({s for c in chunk_ids for s in self.index.chunk_sentences(c)})
        if not ids:
            return []
        dense = self.index.sent_vectors[ids] @ self.retriever.embed_query(query)
        q_terms = tokenize(query)
        typed = answer_type(query) != "other"
        scored = []
        for sid, cos in zip(ids, dense, strict=True):
            text = self.index.sentence_text(sid)
            s_terms, s_set = self.index.sentence_terms(sid)
            lexical = self.index.terms.coverage(q_terms, s_set)
            short = short_answer(query, text) if typed else None
            score = (W_DENSE * float(cos) + W_LEXICAL * lexical + (W_TYPE if short else 0.0)
                     + W_PROXIMITY * proximity(q_terms, s_terms))
            scored.append(_Scored(sid, score, short))
        return _vote(sorted(scored, key=lambda s: (-s.score, s.sentence)), self.index.sent_sources)

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




def _vote(scored: list[_Scored], sources: list[str]) -> list[_Scored]:
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
            item = _Scored(item.sentence, item.score + W_SUPPORT * sum(others), item.short)
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
