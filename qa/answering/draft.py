"""Drafting an answer: the question analysed once, its passages retrieved (by its topic, for a broad
question), their sentences gathered and scored, and whether the articles cover it at all."""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from qa.answering import coverage
from qa.answering.compose import Draft
from qa.config import Config
from qa.question.analyse import analyse
from qa.question.forms import BROAD
from qa.retrieval.retrieve import Mode, Retriever, clean_question
from qa.sentences.gather import Gatherer

# The first sentences of each article an overview, a summary, a list or what-next may take.
LEADS = {"overview": 3, "summary": 2, "list": 1, "next": 1}


class Drafter:
    """Makes drafts from one retriever's passages and one index's sentence records."""

    def __init__(self, retriever: Retriever, gatherer: Gatherer, config: Config) -> None:
        self.retriever = retriever
        self.gatherer = gatherer
        self.config = config

    def draft(self, question: str, history: Sequence[object] | None, mode: Mode, since: str | None,
              until: str | None, today: str | None = None) -> Draft:
        """The question analysed, its passages retrieved, their sentences gathered and scored."""
        began = time.perf_counter()
        c = self.config.retrieval
        q = analyse(clean_question(question, c.max_question_chars), history)
        # A broad question is retrieved by what it is about: "Summarize the Taliban's reaction" by
        # "the Taliban's reaction", not by "summarize".
        pool = self.retriever.select(q.searched, max(c.k, c.read_k), mode, since, until)
        retrieved = time.perf_counter()
        evidence = self.gatherer.gather(q, pool, c.k, self.retriever.embed_query, today)
        if (per := LEADS.get(q.kind)) is not None:
            sources = [p.source for p in evidence.pool] if q.topic else []
            leads = self.gatherer.leads(sources, per, q, self.retriever.embed_query)
            evidence = replace(evidence, leads=tuple(leads))
        if q.seen:  # a request for more: what the last answers showed is not shown again
            evidence = evidence.past(q.seen)
        # A broad question's names are looked for in its whole pool, a quiz question's in its passages.
        passages = evidence.pool if q.kind in BROAD and evidence.pool else evidence.passages
        missing = tuple(coverage.missing(q, [p.text for p in passages], [p.date for p in passages]))
        lacks = coverage.lacks_kind(q, evidence.cited)
        timings = {"retrieve_ms": (retrieved - began) * 1000,
                   "answer_ms": (time.perf_counter() - retrieved) * 1000}
        return Draft(q, evidence, missing, lacks, timings)

    def refusal(self, draft: Draft) -> tuple[str, dict[str, str]] | None:
        """Why the evidence does not answer the question (a notice code and its values), or None."""
        why = self._refusal(draft)
        # A request for more that finds nothing new says so, not that the articles miss the question.
        return ("no_more", {}) if why is not None and draft.question.seen else why

    def _refusal(self, draft: Draft) -> tuple[str, dict[str, str]] | None:
        evidence, q = draft.evidence, draft.question
        if q.kind in BROAD:
            why = coverage.broad_refusal(q, evidence.best if evidence.cited else None, draft.missing,
                                         bool(evidence.leads), self.config.answering)
            if why is None and not coverage.quoted(q, (*evidence.cited, *evidence.read)):
                return "not_said", {"names": "“" + " ".join(q.named) + "”"}
            return why
        return coverage.refusal(q, evidence.best if evidence.cited else None, draft.missing, draft.lacks_kind,
                                self.config.answering)
