"""Cited answer text: the best sentences grouped into facts, each cited exactly, the short
answer's sentence first."""

from __future__ import annotations

import re

from qa.answer import contains_span
from qa.answering.policy import AnswerPolicy
from qa.answering.scoring import Scored
from qa.index.load import Index
from qa.passage import Passage
from qa.readers.base import Reading


def citation(index: Index, sentence: int, score: float = 0.0) -> Passage:
    """The Passage for one cited sentence, with its exact offsets."""
    source = index.sent_sources[sentence]
    start, end = (int(x) for x in index.sent_spans[sentence])
    return index.passage(source, index.sentence_text(sentence), start, end, round(score, 4))


def lead_with_short(index: Index, scored: list[Scored], reading: Reading, min_short: float,
                    lead_anyway: bool = False) -> tuple[list[Scored], Passage | None]:
    """Put first the sentence holding the reader's answer when the reader is confident of it (or,
    with ``lead_anyway``, when it found one at all: the sentence is the answer, its phrase shown
    only when confident)."""
    best = reading.best
    sure = best is not None and best.confidence >= min_short
    if best is None or not (sure or lead_anyway):
        return scored, None
    at = next((i for i, s in enumerate(scored) if s.sentence == best.sentence), None)
    c = best.candidate
    source = index.sent_sources[best.sentence]
    span = index.passage(source, c.text, c.start, c.end, round(best.confidence, 4)) if sure else None
    # The language model may find it in the sentence it was given as context before a scored one.
    lead = Scored(best.sentence, scored[at].score if at is not None else scored[0].score,
                  c.text if sure else None)
    rest = scored if at is None else scored[:at] + scored[at + 1:]
    return [lead, *rest], span


def group_facts(index: Index, scored: list[Scored], policy: AnswerPolicy) -> list[list[Scored]]:
    """Group the best sentences into facts: one sentence per fact, cited from each article."""
    best = scored[0]
    facts: list[list[Scored]] = [[best]]
    vectors = index.sent_vectors
    # A sentence two articles print word for word is cited once.
    said = {_plain(index.sentence_text(best.sentence))}
    for item in scored[1:policy.fact_window]:
        if item.score < policy.near * best.score:
            break
        if (text := _plain(index.sentence_text(item.sentence))) in said:
            continue
        said.add(text)
        source = index.sent_sources[item.sentence]
        for group in facts:
            lead = group[0]
            if lead.short is not None:
                # A typed fact (a number, name, date) is the same when its span recurs.
                same = contains_span(index.sentence_text(item.sentence), lead.short)
            else:
                same = float(vectors[item.sentence] @ vectors[lead.sentence]) >= policy.same_fact
            if same:
                if source not in {index.sent_sources[g.sentence] for g in group}:
                    group.append(item)
                break
        else:
            if (best.short is None and len(facts) < policy.max_facts
                    and item.score >= policy.second_fact * best.score):
                facts.append([item])
    return facts


def cited_text(index: Index, facts: list[list[Scored]]) -> tuple[list[str], list[Passage]]:
    """Each fact's lead sentence with its [n] markers, and the citations the markers point at."""
    citations: list[Passage] = []
    parts = []
    for group in facts:
        markers = []
        for item in group:
            citations.append(citation(index, item.sentence, item.score))
            markers.append(f"[{len(citations)}]")
        parts.append(f"{' '.join(index.sentence_text(group[0].sentence).split())} " + "".join(markers))
    return parts, citations


def _plain(text: str) -> str:
    """A sentence's words, lower case: two sentences that read the same compare equal."""
    return " ".join(text.lower().split())


def cited_sentences(facts: list[list[Scored]]) -> set[int]:
    """Every sentence the facts cite."""
    return {item.sentence for group in facts for item in group}


# Words by which news gives a cause or a condition: "5,000 prisoners should be released … before
# the intra-Afghan talks", "refusing to budge from a longstanding demand".
REASON_CUES = re.compile(r"\b(because|since|due to|as a result|in order to|so that|should|must|unless|until|"
                         r"demand\w*|condition\w*|refus\w*|reject\w*|insist\w*|accus\w*|in exchange)\b", re.I)


def gives_reason(text: str, asked: str) -> bool:
    """True when the sentence has a word of cause or condition that is not the question's own
    ("rejected" in a sentence about "why did they reject…" restates the question)."""
    return _gives_reason(text, _stems(asked))


def _stems(asked: str) -> set[str]:
    return {w[:5] for w in re.findall(r"\w+", asked.lower()) if len(w) > 3}


def _gives_reason(text: str, own: set[str]) -> bool:
    return any(m.group(0).lower()[:5] not in own for m in REASON_CUES.finditer(text))


def with_reason(index: Index, facts: list[list[Scored]], given: tuple[int, ...],
                scored: list[Scored], question: str) -> list[list[Scored]]:
    """The facts, and after them the best-scored sentence the reader read that gives a cause or a
    condition, when none of the facts does: a why-question the model declined still cites a reason."""
    own = _stems(question)  # once per answer, not once per sentence
    cited = cited_sentences(facts)
    if any(_gives_reason(index.sentence_text(sid), own) for sid in cited):
        return facts
    said = {_plain(index.sentence_text(sid)) for sid in cited}
    score = {s.sentence: s.score for s in scored}
    reasons = [sid for sid in given if sid not in cited and _plain(index.sentence_text(sid)) not in said
               and _gives_reason(index.sentence_text(sid), own)]
    if not reasons:
        return facts
    best = max(reasons, key=lambda sid: score.get(sid, 0.0))
    return [*facts, [Scored(best, score.get(best, 0.0))]]
