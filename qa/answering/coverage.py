"""Whether the evidence covers a question: the names it hinges on, and a span of the kind it asks for."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache

from qa.answering.policy import AnswerPolicy
from qa.index.load import Index
from qa.question.kinds import STRICT
from qa.question.parse import Asked
from qa.text.words import WORD, looks_english, undotted

_KIND_WORDS = {"money": "a sum of money", "percent": "a percentage", "count": "a number"}
NOT_ENGLISH = ("The question does not look like English: the articles and the model are English, "
               "so ask in English.")
PREFIX = 4  # "Afghan" covers "Afghanistan", "Iran" covers "Iranian": a shared stem of this many letters
# The name news gives one country by more than its initials: any of these words together cover it.
ALIASES = {"us": (("united", "states"), ("america",)), "america": (("us",), ("united", "states")),
           "uk": (("britain",), ("british",)), "un": (("united", "nations"),), "eu": (("european", "union"),)}


@lru_cache(maxsize=1 << 12)
def _words(text: str) -> frozenset[str]:
    """Lower-cased words of a passage, initials without their dots ("U.S." is "us", as a question's
    hinges are); numbers without their thousands commas."""
    words = WORD.findall(undotted(text.lower()))
    return frozenset(w.replace(",", "") if w[0].isdigit() else w for w in words)


def _aliases(hinge: str) -> tuple[tuple[str, ...], ...]:
    """Other names of what the hinge names ("American": "US", "United States")."""
    return next((names for name, names in ALIASES.items()
                 if hinge == name or (len(name) >= PREFIX and hinge.startswith(name))), ())


def _has(word: str, words: frozenset[str]) -> bool:
    """The word, or a longer one it begins when it is long enough to be a stem ("america": "americans")."""
    return word in words or (len(word) >= PREFIX and any(w.startswith(word) for w in words))


def _covered(hinge: str, words: frozenset[str]) -> bool:
    hinge = hinge.lower()
    if hinge in words or any(all(_has(a, words) for a in alias) for alias in _aliases(hinge)):
        return True
    if hinge[0].isdigit() or len(hinge) < PREFIX:
        return False
    return any(w.startswith(hinge) or (len(w) > PREFIX and hinge.startswith(w) and len(hinge) - len(w) <= 5)
               for w in words if w[:2] == hinge[:2])


def missing(asked: Asked, texts: Iterable[str]) -> list[str]:
    """The names and numbers of the question as typed that none of the texts mention."""
    words = frozenset().union(*(_words(t) for t in texts))
    return [h for h in asked.named if not _covered(h, words)]


def lacks_kind(asked: Asked, index: Index, sentences: Iterable[int]) -> bool:
    """True when the question asks for a count, sum or share and no sentence holds one."""
    if asked.kind not in STRICT:
        return False
    return not any(span[2] in asked.labels for sid in sentences for span in index.annotations.of(sid))


def refusal(asked: Asked, question: str, evidence: float | None, missed: Sequence[str], lacking: bool,
            policy: AnswerPolicy) -> str | None:
    """Why the evidence (None: no sentence) does not answer the question ("" when only its score is
    too low), or None; ``missed`` and ``lacking`` are what ``missing`` and ``lacks_kind`` found."""
    if not looks_english(question):
        # The articles, the embedder and the reader are English: a question in another language
        # is told so, whatever it happened to match (names are the same in every language).
        return NOT_ENGLISH
    if evidence is None or evidence < policy.min_evidence:
        return ""
    if lacking:
        return f"No retrieved passage states {_KIND_WORDS[asked.kind]}."
    if missed and evidence < policy.hinge_evidence:
        names = " or ".join(f"“{h}”" for h in missed[:3])
        return f"No retrieved passage mentions {names}."
    return None
