"""Whether the evidence covers a question: the names it hinges on, and a span of the kind it asks for."""

from __future__ import annotations

import re
import tomllib
from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from qa import rules
from qa.config import Answering
from qa.question.kinds import STRICT
from qa.question.record import Question
from qa.sentences.evidence import day_of
from qa.sentences.record import Sentence
from qa.text.normalise import undotted
from qa.text.words import WORD, looks_english, tokenize

_KIND_WORDS = {"money": "a sum of money", "percent": "a percentage", "count": "a number"}
PREFIX = 4  # "Afghan" covers "Afghanistan", "Iran" covers "Iranian": a shared stem of this many letters
_ALIASES_FILE = Path(__file__).with_name("aliases.toml")
ALIASES = {name: tuple(tuple(words) for words in lists)
           for name, lists in tomllib.loads(_ALIASES_FILE.read_text("utf-8")).items()}
_SPEECH_WORDS = tomllib.loads(Path(__file__).with_name("speech.toml").read_text("utf-8"))["speech"]
SPEECH = re.compile(r"\b(" + "|".join(re.escape(w[:-1]) + r"\w*" if w.endswith("*") else re.escape(w)
                                      for w in _SPEECH_WORDS) + r")\b", re.I)


@lru_cache(maxsize=1 << 12)
def _words(text: str) -> frozenset[str]:
    """Lower-cased words of a passage, initials without their dots ("U.S." is "us", as a question's
    hinges are); numbers without their thousands commas."""
    words = WORD.findall(undotted(text.lower()))
    return frozenset(w.replace(",", "") if w[0].isdigit() else w for w in words)


def _aliases(hinge: str) -> tuple[tuple[str, ...], ...]:
    """Other names of what the hinge names ("American": "US", "United States")."""
    if not rules.on("coverage.aliases"):
        return ()
    return next((names for name, names in ALIASES.items()
                 if hinge == name or (len(name) >= PREFIX and hinge.startswith(name))), ())


def _has(word: str, words: frozenset[str]) -> bool:
    """The word, or a longer one it begins when it is long enough to be a stem ("america": "americans")."""
    return word in words or (len(word) >= PREFIX and any(w.startswith(word) for w in words))


def _covered(hinge: str, words: frozenset[str]) -> bool:
    hinge = hinge.lower()
    if hinge in words or any(all(_has(a, words) for a in alias) for alias in _aliases(hinge)):
        return True
    if hinge[0].isdigit() or len(hinge) < PREFIX or not rules.on("coverage.name_forms"):
        return False
    return any(w.startswith(hinge) or (len(w) > PREFIX and hinge.startswith(w) and len(hinge) - len(w) <= 5)
               for w in words if w[:2] == hinge[:2])


def missing(question: Question, texts: Iterable[str], dates: Iterable[str | None] = ()) -> list[str]:
    """The names and numbers of the question as typed that none of the texts mention, nor the dates
    (YYYY-MM-DD) of the articles they come from."""
    words = frozenset().union(*(_words(t) for t in [*texts, *dated(dates)]))
    return [h for h in question.named if not _covered(h, words)]


def dated(dates: Iterable[str | None]) -> list[str]:
    """The articles' dates as news writes them ("14 June 2022"): a report seldom writes its own year,
    so "What happened at Yellowstone in June 2022?" is covered by an article of 14 June 2022."""
    if not rules.on("coverage.article_dates"):
        return []
    days = dict.fromkeys(day for day in map(day_of, dates) if day is not None)
    return [f"{day.day} {day:%B %Y}" for day in days]


def lacks_kind(question: Question, sentences: Iterable[Sentence]) -> bool:
    """True when the question asks for a count, sum or share and no sentence holds one."""
    if question.expects not in STRICT or not rules.on("coverage.kind"):
        return False
    return not any(tag[2] in question.labels for s in sentences for tag in s.tags)


def broad_refusal(question: Question, evidence: float | None, missed: Sequence[str], leads: bool,
                  policy: Answering) -> tuple[str, dict[str, str]] | None:
    """Why the articles do not cover a broad question's topic, or None: a broad question is refused
    only when its topic is not in them, never because no sentence names a short answer."""
    if rules.on("coverage.english") and not looks_english(question.asked):
        return "not_english", {}
    if missed and rules.on("coverage.broad_names"):
        # "What did the UN say about the decree?": the topic is what it names, and no article does.
        return "names_missing", {"names": " or ".join(f"“{h}”" for h in missed[:3])}
    if not question.topic and leads:  # "What is this about?": about the articles themselves
        return None
    if evidence is None or evidence < policy.min_evidence:
        return "not_covered", {}
    return None


def refusal(question: Question, evidence: float | None, missed: Sequence[str], lacking: bool,
            policy: Answering) -> tuple[str, dict[str, str]] | None:
    """Why the evidence (None: no sentence) does not answer the question, as a notice code and its
    values, or None; ``missed`` and ``lacking`` are what ``missing`` and ``lacks_kind`` found."""
    if rules.on("coverage.english") and not looks_english(question.asked):
        # The articles, the embedder and the reader are English: a question in another language
        # is told so, whatever it happened to match (names are the same in every language).
        return "not_english", {}
    if evidence is None or evidence < policy.min_evidence:
        return "not_covered", {}
    if lacking:
        return "no_figure", {"what": _KIND_WORDS[question.expects]}
    if missed and evidence < policy.hinge_evidence and rules.on("coverage.names"):
        return "names_missing", {"names": " or ".join(f"“{h}”" for h in missed[:3])}
    return None


def quoted(question: Question, sentences: Iterable[Sentence]) -> bool:
    """Whether a sentence reports what a what-was-said question's speaker said: a word of speech in
    a sentence naming them, or in the sentence after one that does ("..., he added"), and sharing a
    word of what the question asks about, if it asks about anything."""
    speaker = speakers(question)
    if question.kind != "said" or not speaker or not rules.on("coverage.speaker"):
        return True
    names = {undotted(n.lower()) for n in speaker}
    topic = _topic(question) if rules.on("coverage.speaker_topic") else set()
    for s in sentences:
        near = s.text + (" " + s.before.text if s.before is not None else "")
        if SPEECH.search(s.text) and names & _words(near) and _shares(topic, s):
            return True
    return False


def _shares(topic: set[str], sentence: Sentence) -> bool:
    """Whether the sentence, or the one before it, holds a word of what the question asks about
    ("What did Trump say about the prisoner release?" is not answered by his promise); no topic, yes."""
    before = sentence.before.terms if sentence.before is not None else ()
    return not topic or bool(topic & {*sentence.terms, *before})


def _topic(question: Question) -> set[str]:
    """The question's words besides its speaker's names and its words of speech ("the prisoner release";
    "Abdullah" in "What did Khalilzad say about Abdullah?")."""
    names = {t for n in speakers(question) for t in tokenize(n)}
    return {t for t in question.terms - names if not SPEECH.search(t)}


def speakers(question: Question) -> tuple[str, ...]:
    """The names of who the question asks about the words of: those before its word of speech ("What
    did Shaheen say about Abdullah?": Shaheen; "What do analysts say about the Taliban?": none), all
    it names when it has no such word."""
    asked = question.asked
    found = SPEECH.search(asked)
    if not found or not rules.on("coverage.speaker_first"):
        return question.named
    return tuple(n for n in question.named if 0 <= asked.find(n) < found.start())
