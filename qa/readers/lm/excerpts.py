"""What the language model reads: the best sentences, each with the sentences around it, as excerpts."""

from __future__ import annotations

from dataclasses import dataclass

from qa.index.load import Index
from qa.passage import human_date
from qa.question.parse import Asked
from qa.readers.base import Sentences

MAX_SENTENCE = 600  # characters of one sentence shown to the model
# Each chosen sentence is read with this many sentences of its article on either side, budget allowing.
WINDOW = 1


@dataclass(frozen=True)
class Excerpts:
    """The excerpts a model reads: each a run of consecutive sentences of one article."""

    groups: tuple[tuple[int, ...], ...]  # sentence ids of each excerpt, in article order
    text: str  # "(date) sentence sentence" paragraphs, a blank line apart

    @property
    def sentences(self) -> list[int]:
        """Every sentence read, excerpt by excerpt."""
        return [sid for group in self.groups for sid in group]


def dated_for(asked: Asked) -> bool:
    """Whether the excerpts read for this question are headed by their articles' dates: not when it
    asks for a date, since the model then copies the heading ("11 Mar 2020" for "on which day did
    the drawdown begin?"), which no sentence says, instead of the day a sentence gives ("Monday")."""
    return asked.kind != "date"


def _cost(index: Index, sid: int) -> int:
    return min(len(index.sentence_text(sid)), MAX_SENTENCE)


def excerpts(index: Index, scored: Sentences, sentences: int, budget: int, dated: bool = True) -> Excerpts:
    """The best ``sentences`` sentences, each with the sentences around it for context, within
    ``budget`` characters; consecutive ones of an article read as one excerpt, best first, headed
    by its article's date when ``dated``. The excerpts are not numbered: the small model answered
    "on what day…?" or "how many…?" with an excerpt's number ("1", "2") instead of the sentence's
    "Monday" or "five"."""
    chosen: set[int] = set()
    used = picked = 0
    for sid, _ in scored:
        if picked >= sentences:
            break
        source = index.sent_sources[sid]
        window = [n for n in range(sid - WINDOW, sid + WINDOW + 1)
                  if 0 <= n < len(index.sent_sources) and index.sent_sources[n] == source and n not in chosen]
        cost = sum(_cost(index, n) for n in window)
        if chosen and used + cost > budget:
            # Without its neighbours, when they do not fit.
            window = [sid] if sid not in chosen else []
            cost = sum(_cost(index, n) for n in window)
            if used + cost > budget:
                continue
        chosen.update(window)
        used, picked = used + cost, picked + 1
    rank = {sid: r for r, (sid, _) in enumerate(scored)}
    groups: list[list[int]] = []
    for sid in sorted(chosen, key=lambda s: (index.sent_sources[s], int(index.sent_spans[s][0]))):
        last = groups[-1][-1] if groups else None
        if last == sid - 1 and index.sent_sources[last] == index.sent_sources[sid]:
            groups[-1].append(sid)
        else:
            groups.append([sid])
    groups.sort(key=lambda g: min(rank.get(s, len(rank)) for s in g))
    paragraphs = []
    for group in groups:
        date = human_date(index.articles[index.sent_sources[group[0]]].date) if dated else ""
        body = " ".join(" ".join(index.sentence_text(s)[:MAX_SENTENCE].split()) for s in group)
        paragraphs.append((f"({date}) " if date else "") + body)
    return Excerpts(tuple(tuple(g) for g in groups), "\n\n".join(paragraphs))
