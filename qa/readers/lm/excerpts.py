"""What the language model reads: the best sentences, each with the sentences around it, as excerpts."""

from __future__ import annotations

from dataclasses import dataclass

from qa import rules
from qa.passage import human_date
from qa.question.record import Question
from qa.readers.base import Sentences
from qa.sentences.record import Sentence

MAX_SENTENCE = 600  # characters of one sentence shown to the model


@dataclass(frozen=True)
class Excerpts:
    """The excerpts a model reads: each a run of consecutive sentences of one article."""

    groups: tuple[tuple[Sentence, ...], ...]  # the sentences of each excerpt, in article order
    text: str  # "(date) sentence sentence" paragraphs, a blank line apart

    @property
    def sentences(self) -> list[Sentence]:
        """Every sentence read, excerpt by excerpt."""
        return [s for group in self.groups for s in group]


def dated_for(question: Question) -> bool:
    """Whether the excerpts read for this question are headed by their articles' dates: not when it
    asks for a date, since the model then copies the heading ("11 Mar 2020" for "on which day did
    the drawdown begin?"), which no sentence says, instead of the day a sentence gives ("Monday")."""
    return question.expects != "date" or not rules.on("reading.no_dates_for_dates")


def _cost(sentence: Sentence) -> int:
    return min(len(sentence.text), MAX_SENTENCE)


def _window(sentence: Sentence) -> list[Sentence]:
    """The sentence with those around it in its article, for context."""
    if not rules.on("reading.neighbours"):
        return [sentence]
    return sentence.window()


def _choose(scored: Sentences, sentences: int, budget: int) -> dict[int, Sentence]:
    """The best ``sentences`` sentences and their windows, within ``budget`` characters."""
    chosen: dict[int, Sentence] = {}
    used = picked = 0
    for sentence in scored:
        if picked >= sentences:
            break
        window = [s for s in _window(sentence) if s.id not in chosen]
        cost = sum(_cost(s) for s in window)
        if chosen and used + cost > budget:
            # Without its neighbours, when they do not fit.
            window = [sentence] if sentence.id not in chosen else []
            cost = sum(_cost(s) for s in window)
            if used + cost > budget:
                continue
        chosen.update((s.id, s) for s in window)
        used, picked = used + cost, picked + 1
    return chosen


def excerpts(scored: Sentences, sentences: int, budget: int, dated: bool = True) -> Excerpts:
    """The best ``sentences`` sentences, each with the sentences around it for context, within
    ``budget`` characters; consecutive ones of an article read as one excerpt, best first, headed
    by its article's date when ``dated``. The excerpts are not numbered: the small model answered
    "on what day…?" or "how many…?" with an excerpt's number ("1", "2") instead of the sentence's
    "Monday" or "five"."""
    chosen = _choose(scored, sentences, budget)
    rank = {s.id: r for r, s in enumerate(scored)}
    groups: list[list[Sentence]] = []
    for s in sorted(chosen.values(), key=lambda s: (s.source, s.start)):
        last = groups[-1][-1] if groups else None
        if last is not None and last.id == s.id - 1 and last.source == s.source:
            groups[-1].append(s)
        else:
            groups.append([s])
    groups.sort(key=lambda g: min(rank.get(s.id, len(rank)) for s in g))
    paragraphs = []
    for group in groups:
        date = human_date(group[0].date) if dated else ""
        body = " ".join(" ".join(s.text[:MAX_SENTENCE].split()) for s in group)
        paragraphs.append((f"({date}) " if date else "") + body)
    return Excerpts(tuple(tuple(g) for g in groups), "\n\n".join(paragraphs))
