"""Choosing sentences for a broad answer: never a headline, byline, caption or link line; relevant,
central to the story and not repeating each other (maximal marginal relevance); one of each copy."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np

from qa import rules
from qa.question.followup import points_at_someone
from qa.question.record import Question
from qa.sentences.record import Sentence
from qa.text.normalise import plain
from qa.text.words import tokenize

_LINES = tomllib.loads(Path(__file__).with_name("boilerplate.toml").read_text("utf-8"))
BOILERPLATE = re.compile("|".join(f"(?:{p})" for p in _LINES["patterns"]), re.IGNORECASE)
WORDS = 120  # a broad answer stops adding sentences past this many words
MIN_WORDS = 6  # fewer words than this is a headline, a caption or a fragment, not a sentence
QUOTES = '"“”'  # marks of a quotation (not the apostrophe: "Trump’s")
COPY = 0.92  # cosine from which two sentences are copies of one another (syndicated wire copy)


def shown(sentence: Sentence) -> bool:
    """Whether a sentence may stand in a broad answer: a sentence of the story, not its furniture."""
    if not rules.on("answering.boilerplate"):
        return True
    text = " ".join(sentence.text.split())
    words = text.split()
    if len(words) < MIN_WORDS or BOILERPLATE.search(text):
        return False
    if asks(text) and rules.on("answering.own_questions"):
        return False
    # Headlines and captions seldom end as sentences do; news sentences always do.
    return text.rstrip("\"”’')]").endswith((".", "!", "?", ":")) and any(w.islower() for w in words)


def asks(text: str) -> bool:
    """Whether a sentence is the article's own question, not a quotation: a subhead ("What parts of
    the park are damaged?") or a rhetorical one, which states nothing an answer can stand on."""
    return text.rstrip().endswith("?") and not any(q in text for q in QUOTES)


def centrality(sentences: Sequence[Sentence]) -> np.ndarray:
    """Each sentence's mean cosine to the others: what the story is most about scores highest."""
    if len(sentences) < 2:
        return np.ones(len(sentences))
    vectors = np.stack([s.vector for s in sentences])
    sims = vectors @ vectors.T
    np.fill_diagonal(sims, 0.0)
    return sims.sum(axis=1) / (len(sentences) - 1)


def mmr(candidates: Sequence[Sentence], relevance: Callable[[Sentence], float], n: int,
        diversity: float = 0.3) -> list[Sentence]:
    """Up to n sentences, each the most relevant less its likeness to those already chosen; copies of a
    chosen sentence never."""
    chosen: list[Sentence] = []
    pool = list(candidates)
    while pool and len(chosen) < n:
        def value(s: Sentence) -> float:
            like = max((s.similarity(c) for c in chosen), default=0.0)
            return (1 - diversity) * relevance(s) - diversity * like

        best = max(pool, key=value)
        pool.remove(best)
        if not any(copies(best, c) for c in chosen):
            chosen.append(best)
    return chosen


def more(pool: Sequence[Sentence], already: Sequence[Sentence], most: int, question: Question,
         first: Sequence[Sentence] = ()) -> list[Sentence]:
    """Up to ``most`` sentences to show after those already chosen: ``first``, then the pool's
    best-scored on the question's topic; story sentences, none a copy of another, while the answer
    stays within its words."""
    have, added = list(already), list[Sentence]()
    total = words(have)
    ranked = [s for s in sorted(pool, key=lambda s: (-s.score, s.id)) if on_topic(s, question)]
    for s in [*first, *ranked]:
        if len(added) >= most:
            break
        if not shown(s) or any(copies(s, h) for h in have):
            continue
        size = len(s.text.split())
        if total + size > WORDS:  # too long for what is left of the answer's words
            if passes_over():
                continue
            break
        total += size
        added.append(s)
        have.append(s)
    return added


def passes_over() -> bool:
    """Whether a sentence too long for what is left of an answer's words is passed over for a shorter
    one after it (else the answer ends there, often well short of its words)."""
    return rules.on("answering.fill_budget")


def follows(sentence: Sentence) -> list[Sentence]:
    """The sentence after this one in its article, where a quotation or a reason often goes on."""
    return [sentence.after] if sentence.after is not None and rules.on("answering.follow_on") else []


def on_topic(sentence: Sentence, question: Question) -> bool:
    """Whether a sentence shares a content word with the question and names what it names, if it names
    anything: the pool's best scores alone also bring in sentences about someone else."""
    if not rules.on("answering.fill_on_topic"):
        return True
    names = [n.lower() for n in question.hinges if not n.isdigit()]  # a follow-up's, resolved
    if not names and points_at_someone(question.text):  # "he", resolved to no one: the pool's best may
        return False  # be about another man
    text = sentence.text.lower()
    shares = not question.terms or bool(question.terms & set(sentence.terms))
    return shares and (not names or any(n in text for n in names))


def covers(sentences: Sequence[Sentence], question: Question) -> bool:
    """Whether the sentences name, between them, everything the question names, one naming some of it
    sharing another of its words: what a yes or a no can stand on ("Did Idaho's governor declare a
    disaster?" is not answered by Montana's governor beside a park in Idaho)."""
    if not rules.on("answering.verdict_on_topic"):
        return True
    names = [n.lower() for n in question.hinges if not n.isdigit()]
    texts = [s.text.lower() for s in sentences]
    others = question.terms - {t for n in names for t in tokenize(n)}
    # Between them, not each in one: "Did the US envoy Zalmay Khalilzad react positively to Ghani's
    # decree?" is answered by "US negotiator Zalmay Khalilzad welcomed the decree", which names no Ghani.
    return all(any(n in t for t in texts) for n in names) and any(
        others & set(s.terms) and (not names or any(n in t for n in names))
        for s, t in zip(sentences, texts, strict=True))


def copies(a: Sentence, b: Sentence) -> bool:
    """Whether two sentences say the same words (an article's copy of another's)."""
    return plain(a.text) == plain(b.text) or a.similarity(b) >= COPY


def newest_first(sentences: Sequence[Sentence]) -> list[Sentence]:
    """Sentences by their article's date, newest first (undated last), then by place in the article."""
    return sorted(sentences, key=lambda s: (-_ordinal(s.date), s.source, s.start))


def _ordinal(date: str | None) -> int:
    return int(date.replace("-", "")[:8]) if date and date[:4].isdigit() else 0


def words(sentences: Sequence[Sentence]) -> int:
    """How many words the sentences hold."""
    return sum(len(s.text.split()) for s in sentences)


def names_in(sentence: Sentence, labels: frozenset[str], question: Question) -> list[str]:
    """The names of these kinds a sentence gives ("Gardiner", "Cooke City"), not those the question
    gives itself: what the items of a list of people, places or bodies name."""
    if not labels or not rules.on("answering.list_names"):
        return []
    asked = {n.lower() for n in question.hinges}
    found = (" ".join(sentence.text[start - sentence.start:stop - sentence.start].split())
             for start, stop, label, *_ in sentence.tags if label in labels)
    return [n for n in found if n and n.lower() not in asked]

