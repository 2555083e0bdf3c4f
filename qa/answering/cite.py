"""Cited answer text: the best sentences grouped into facts, each cited exactly, the short answer's
sentence first."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from qa import rules
from qa.config import Answering
from qa.passage import Passage
from qa.readers.base import Reading
from qa.sentences.record import Sentence
from qa.text.normalise import contains_span, plain


@dataclass(frozen=True)
class Pick:
    """A sentence an answer may cite, its score, and the short answer it leads with once chosen."""

    sentence: Sentence
    score: float
    short: str | None = None


Fact = list[Pick]  # one fact: the sentence that states it first, then the same fact in other articles


def picks(sentences: Sequence[Sentence]) -> list[Pick]:
    """Sentences as picks, with their own scores."""
    return [Pick(s, s.score) for s in sentences]


def lead_with_short(scored: list[Pick], reading: Reading, lead_anyway: bool = False
                    ) -> tuple[list[Pick], Passage | None]:
    """Put first the sentence holding the reader's answer when the reader is confident of it (or,
    with ``lead_anyway``, when it found one at all: the sentence is the answer, its phrase shown
    only when confident)."""
    best = reading.best
    sure = reading.sure
    if best is None or not scored or not (sure or lead_anyway):
        return scored, None
    at = next((i for i, p in enumerate(scored) if p.sentence.id == best.sentence.id), None)
    c = best.candidate
    span = best.sentence.span(c.start, c.end, best.confidence) if sure else None
    # The language model may find it in the sentence it read as context around a scored one.
    score = scored[at].score if at is not None else scored[0].score
    lead = Pick(best.sentence, score, c.text if sure else None)
    rest = scored if at is None else scored[:at] + scored[at + 1:]
    return [lead, *rest], span


def _same_fact(item: Pick, lead: Pick, policy: Answering) -> bool:
    """Whether a sentence states the lead's fact: a typed fact (a number, a name, a date) is the same
    when its span recurs; any other when the two sentences say nearly the same."""
    if lead.short is not None and rules.on("answering.same_short"):
        return contains_span(item.sentence.text, lead.short)
    return item.sentence.similarity(lead.sentence) >= policy.same_fact


def group_facts(scored: list[Pick], policy: Answering) -> list[Fact]:
    """Group the best sentences into facts: one sentence per fact, cited from each article."""
    best = scored[0]
    facts: list[Fact] = [[best]]
    # A sentence two articles print word for word is cited once.
    said = {plain(best.sentence.text)}
    for item in scored[1:policy.fact_window]:
        if item.score < policy.near * best.score:
            break
        if (text := plain(item.sentence.text)) in said and rules.on("answering.word_for_word_once"):
            continue
        said.add(text)
        for group in facts:
            if _same_fact(item, group[0], policy):
                if item.sentence.source not in {g.sentence.source for g in group}:
                    group.append(item)
                break
        else:
            if (best.short is None and len(facts) < policy.max_facts
                    and item.score >= policy.second_fact * best.score):
                facts.append([item])
    return facts


def cited_text(facts: list[Fact]) -> tuple[list[str], list[Passage]]:
    """Each fact's lead sentence with its [n] markers, and the citations the markers point at."""
    citations: list[Passage] = []
    parts = []
    for group in facts:
        markers = []
        for item in group:
            citations.append(item.sentence.cited(item.score))
            markers.append(f"[{len(citations)}]")
        parts.append(f"{' '.join(group[0].sentence.text.split())} " + "".join(markers))
    return parts, citations


def cited_sentences(facts: list[Fact]) -> set[int]:
    """The ids of every sentence the facts cite."""
    return {item.sentence.id for group in facts for item in group}
