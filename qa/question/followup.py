"""Follow-up questions: rewrite a question that leans on earlier turns into a standalone one."""

from __future__ import annotations

import re
from collections.abc import Sequence

from qa import rules
from qa.errors import BadInput
from qa.passage import Passage
from qa.question.asking import asking_of
from qa.question.forms import more
from qa.text.normalise import plain
from qa.text.words import tokenize

_PERSON = re.compile(r"\b(he|she|him|her|his|hers)\b", re.IGNORECASE)
_OTHER = re.compile(r"\b(it|its|they|them|their|this|that|these|those|there|then)\b", re.IGNORECASE)
# Two or more capitalised words in a row, not opening the question: "Suhail Shaheen", "Ashraf Ghani".
_FULL_NAME = re.compile(r"(?<=[a-z,] )[A-Z][\w’'-]+(?: (?:al-|bin |de |van )?[A-Z][\w’'-]+)+")
PERSON_TURNS = 3  # how far back a "he" or "she" may point
_ELLIPTIC = re.compile(r"^\s*(and|what about|how about|also|so|but)\b", re.IGNORECASE)


def turns(history: Sequence[object] | None) -> list[tuple[str, object]]:
    """History as (question, answer) pairs: an item is a pair, or an earlier question alone (text)."""
    out: list[tuple[str, object]] = []
    for item in history or ():
        if isinstance(item, str):
            out.append((item, None))
        elif isinstance(item, tuple | list) and len(item) == 2 and isinstance(item[0], str):
            out.append((item[0], item[1]))
        else:
            raise BadInput("history items must be earlier questions (text) or (question, answer) pairs, "
                             f"not {type(item).__name__}")
    return out


def _turn(item: tuple[str, object]) -> tuple[str, str, str | None]:
    """(question, resolved question, short answer) of one history item."""
    question, answer = item
    if isinstance(answer, str) or answer is None:
        return str(question), str(question), None
    query = getattr(answer, "query", "") or str(question)
    short = getattr(answer, "short", None) if getattr(answer, "answered", True) else None
    return str(question), query, short


def points_at_someone(question: str) -> bool:
    """True when a question points back at a person (he, she, his, her)."""
    return bool(_PERSON.search(question))


def needs_context(question: str) -> bool:
    """True when a question points back at earlier turns (a pronoun, or an elliptic opener)."""
    return bool(
        _PERSON.search(question)
        or _OTHER.search(question)
        or _ELLIPTIC.search(question)
        or len(tokenize(question)) <= 1
    )


def resolve(question: str, history: Sequence[object] | None) -> str:
    """The question made standalone using the last turn; unchanged when it needs no context."""
    history = turns(history)
    if not history or not needs_context(question):
        return question
    _prev_question, prev_query, prev_short = _turn(history[-1])
    # A personal pronoun means the person the conversation was last about.
    if rules.on("followup.person") and _PERSON.search(question) and (person := _person(history)):
        return _PERSON.sub(lambda m: _possessive(m.group(1), person), question, count=1)
    new_terms = set(tokenize(question))
    context = " ".join(t for t in re.findall(r"\S+", prev_query) if not set(tokenize(t)) <= new_terms
                       or not tokenize(t))
    if prev_short:
        context = f"{context} {prev_short}"
    return f"{question} ({context.strip()})"


def _person(history: list[tuple[str, object]]) -> str | None:
    """The person the last turns were about: the answer to a who-question, else a full name a turn
    asked about ("What did Suhail Shaheen say?"), the latest first, over the last PERSON_TURNS."""
    for item in reversed(history[-PERSON_TURNS:]):
        question, query, short = _turn(item)
        if short and short[:1].isupper() and _asks_for_person(question):
            return short
        if names := _FULL_NAME.findall(query):
            return re.sub(r"[’']s$", "", names[-1])
    return None


def _asks_for_person(question: str) -> bool:
    return asking_of(question).expects == "person"


def _possessive(pronoun: str, name: str) -> str:
    """The name in the pronoun's grammatical role ("his" -> "Shaheen's")."""
    return f"{name}'s" if pronoun.lower() in {"his", "hers"} else name


def earlier_citation(question: str, history: Sequence[object] | None) -> Passage | None:
    """The sentence the last answer led with, for a follow-up to read again."""
    if not history or not needs_context(question) or not rules.on("followup.recall"):
        return None
    last = history[-1]
    answer = last[1] if isinstance(last, tuple | list) and len(last) == 2 else None
    cited = getattr(answer, "citations", None) if getattr(answer, "answered", False) else None
    return cited[0] if cited and isinstance(cited[0], Passage) else None


def earlier_turn(question: str, history: Sequence[object] | None) -> tuple[str, str] | None:
    """The last turn as (question, its short answer or first sentence), for a follow-up to read."""
    if not history or not needs_context(question):
        return None
    last = history[-1]
    if not isinstance(last, tuple | list) or len(last) != 2:
        return None
    previous, answer = last
    if not getattr(answer, "answered", False):
        return None
    said = getattr(answer, "short", None) or (getattr(answer, "citations", None) or [None])[0]
    said = said.text if isinstance(said, Passage) else said
    return (str(previous), " ".join(str(said).split())[:300]) if said else None


Continued = tuple[str, list[object], frozenset[str]]  # a question, its earlier turns, what was shown since


def continued(history: Sequence[object] | None) -> Continued | None:
    """What a request for more ("Tell me more", "What else?") continues: the last question that was
    not one, its own earlier turns, and the sentences shown since it was asked (None: nothing to go on)."""
    items, seen = turns(history), set()
    for at in range(len(items) - 1, -1, -1):
        asked, answer = items[at]
        seen |= {plain(c.text) for c in getattr(answer, "citations", None) or () if isinstance(c, Passage)}
        if not more(asked):
            return asked, list(history or ())[:at], frozenset(seen)
    return None
