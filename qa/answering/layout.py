"""A broad answer laid out: its parts (sentences, list items, each side's position), every sentence
cited with the article sentence it is, and its copies in other articles cited beside it."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from qa import rules
from qa.answer import Answer, Part
from qa.answering.compose import Draft, Shown, trace_of
from qa.answering.select import copies
from qa.notices import say
from qa.passage import Passage
from qa.readers.base import Reading
from qa.sentences.record import Sentence
from qa.text.normalise import plain

VERDICTS = {"yes": "Yes.", "no": "No.", "unclear": "The articles do not say clearly."}


@dataclass(frozen=True)
class Piece:
    """A part of a broad answer before it is cited: its sentences, and what it is."""

    sentences: tuple[Sentence, ...]
    item: bool = False
    label: str | None = None


def cite(pieces: Sequence[Piece], others: Sequence[Sentence]) -> tuple[list[Part], list[Passage]]:
    """The parts with their [n] markers, each sentence's copies among ``others`` (another article's
    wording of it) cited beside it; a copy word for word is cited once."""
    citations: list[Passage] = []
    parts = []
    others = list({o.id: o for o in others}.values())
    for piece in pieces:
        texts = []
        for s in piece.sentences:
            same = [s, *(o for o in others if o.id != s.id and o.source != s.source and copies(s, o)
                         and not _word_for_word(o, s))]
            markers = []
            for c in same[:3]:
                citations.append(c.cited())
                markers.append(f"[{len(citations)}]")
            texts.append(f"{' '.join(s.text.split())} {''.join(markers)}")
        parts.append(Part(" ".join(texts), piece.item, piece.label))
    return parts, citations


def _word_for_word(a: Sentence, b: Sentence) -> bool:
    """Whether two sentences print the same words (cited once)."""
    return rules.on("answering.word_for_word_once") and plain(a.text) == plain(b.text)


def text_of(parts: Sequence[Part], verdict: str | None = None) -> str:
    """The answer's text: a verdict first, list items a line each, each side's position labelled."""
    head = [VERDICTS[verdict]] if verdict else []
    if all(not p.item and not p.label for p in parts):
        return " ".join([*head, *(p.text for p in parts)])
    lines = [f"- {p.text}" if p.item else f"{p.label}: {p.text}" if p.label else p.text for p in parts]
    return "\n".join([*head, *lines])


def broad_answer(draft: Draft, pieces: Sequence[Piece], reading: Reading, shown: Shown,
                 verdict: str | None = None, short: str | None = None) -> Answer:
    """The Answer of a broad question from its pieces (a verdict and a short answer when it has them)."""
    others = [*draft.evidence.read, *draft.evidence.leads]
    parts, citations = cite(pieces, others)
    q = draft.question
    plainly = all(not p.item and not p.label for p in parts)
    return Answer(q.as_typed, text_of(parts, verdict), True, tuple(citations), short, draft.evidence.passages,
                  q.query, round(draft.evidence.best, 4), dict(draft.timings),
                  notice=say(shown.notice, **shown.values) if shown.notice else None,
                  reader=reading.reader, model=reading.model, provisional=shown.provisional,
                  ahead=shown.ahead,
                  notice_code=shown.notice, kind=q.kind, parts=() if plainly else tuple(parts),
                  verdict=verdict, trace=trace_of(draft, shown.primary or reading))
