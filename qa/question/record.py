"""The analysed question: one record, made once per answer and read by every later stage."""

from __future__ import annotations

from dataclasses import dataclass

from qa.passage import Passage
from qa.question.forms import request
from qa.question.kinds import KIND_LABELS

# Kinds whose whole question is searched for, not a topic: a short phrase, a why, a how, what was said.
NARROW = frozenset({"factoid", "why", "how", "said"})

# The last turn of a conversation, for a follow-up: (its question, its short answer or first sentence).
Earlier = tuple[str, str]


@dataclass(frozen=True)
class Question:
    """What a question asks and how it is answered, analysed once from its words and the conversation."""

    asked: str  # as the user typed it (cleaned)
    query: str  # standalone: a follow-up resolved against the conversation; what retrieval searches for
    text: str  # what a reader reads: the resolved follow-up when its pronoun was replaced, else as asked
    # How it is answered (qa/question/forms.py): "factoid", a short phrase; "why", "how", "said", the
    # sentence the reader finds it in; "overview", "summary", "list", "compare", "define", "next",
    # sentences chosen for coverage; "yesno", a verdict and the sentences it stands on.
    kind: str
    expects: str  # the kind of span that answers: person, org, place, date, count, ... thing, other
    key: str  # the wh-key of the span reader's learned table ("which:agency", "how many")
    noun: str | None  # the noun a which/what phrase asks about
    wh: str  # the asking word ("how many", "which", "" when none)
    terms: frozenset[str]  # the content-word stems of the query (an earlier turn's words included)
    hinges: tuple[str, ...]  # names and numbers of ``text``, as it writes them
    named: tuple[str, ...] = ()  # names and numbers of the question as typed: what a refusal checks
    verb: str | None = None  # the stem of the verb whose subject is asked for ("who tweeted": tweet)
    dates: tuple[str, ...] = ()  # years and dates the question names ("2019", "March 11")
    earlier: Earlier | None = None  # a follow-up's last turn, which the reader reads too
    recalled: Passage | None = None  # the sentence the last answer led with, read first by a follow-up
    # What it is about, without the words that only ask ("Summarize the Taliban's reaction": "the
    # Taliban's reaction"); "" when nothing is left ("What is this news about?").
    topic: str = ""
    # The sentences (as ``plain`` writes them) the answers to this question have shown, for a request
    # for more of them ("Tell me more"): its answer passes over them.
    seen: frozenset[str] = frozenset()
    typed: str = ""  # a request for more as typed ("Tell me more."): ``asked`` is the question it continues

    @property
    def as_typed(self) -> str:
        """What the user typed: the answer's question."""
        return self.typed or self.asked

    @property
    def labels(self) -> frozenset[str]:
        """The span labels that answer it (empty: any label)."""
        return KIND_LABELS.get(self.expects, frozenset())

    @property
    def alone(self) -> str:
        """The question as typed, without a request's courtesies ("OK, what did he say?": "What did he
        say?"): what a follow-up reads alone, before it is resolved."""
        return request(self.asked)

    @property
    def searched(self) -> str:
        """What retrieval searches for and sentences are scored against: a broad question's topic
        ("Summarize the Taliban's reaction": "the Taliban's reaction"), else the standalone question."""
        return self.topic if self.topic and self.kind not in NARROW else self.query

    @property
    def by_sentence(self) -> bool:
        """True when the cited sentences are the answer, not a short phrase."""
        return self.kind != "factoid"
