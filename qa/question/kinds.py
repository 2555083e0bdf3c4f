"""What a question expects: the wh-word or "which X" noun that decides it, and the labels that answer it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

from qa import rules
from qa.text.words import STOPWORDS

ENTITY_LABELS = frozenset("PERSON NORP FAC ORG GPE LOC PRODUCT EVENT WORK_OF_ART LAW LANGUAGE".split())
NUMERIC_LABELS = frozenset("DATE TIME PERCENT MONEY QUANTITY ORDINAL CARDINAL".split())
# The labels that answer what each kind of question expects; "thing" and "other" take any span.
KIND_LABELS: dict[str, frozenset[str]] = {
    "person": frozenset({"PERSON"}),
    "org": frozenset({"ORG", "NORP"}),
    "place": frozenset({"GPE", "LOC", "FAC"}),
    "facility": frozenset({"FAC", "ORG", "GPE", "LOC"}),
    "date": frozenset({"DATE", "TIME"}),
    "duration": frozenset({"DATE", "TIME"}),
    "count": frozenset({"CARDINAL", "QUANTITY"}),
    "money": frozenset({"MONEY"}),
    "percent": frozenset({"PERCENT"}),
    "quantity": frozenset({"QUANTITY", "CARDINAL", "MONEY", "PERCENT"}),
    "entity": ENTITY_LABELS,
}
# Kinds whose answer must be a span of that kind: evidence without one does not answer.
STRICT = frozenset({"money", "percent", "count"})
# "Why" and "how did" are answered by a sentence, not a span.
SENTENCE_KINDS = frozenset({"reason", "manner"})

NOUNS_FILE = Path(__file__).with_name("head_nouns.toml")
NOUN_KIND = {noun: kind for kind, nouns in tomllib.loads(NOUNS_FILE.read_text("utf-8")).items()
             for noun in nouns.split()}
AUX = frozenset("is are was were do does did has have had will would can could should may might "
                "must be been being".split())
_COPULA = frozenset("is are was were".split())
_DETERMINERS = frozenset({"the", "a", "an", "its", "his", "her", "their", "this", "that"})
WORD = re.compile(r"[A-Za-z][\w’'-]*|\d[\d,.]*")
_UNITS = re.compile(r"^\s*(?:more\s+)?(?:days?|weeks?|months?|years?|hours?|minutes?|decades?)\b")
_MONEY = re.compile(r"\b(?:cost|pay|paid|raise|worth|price|spen[dt]|fund|money|sell|sold|earn|dollars?)\b")
_NAMED = re.compile(r"\b(?:called|named|titled|the name of)\b")


def kind_of(wh: str, noun: str | None, lower: str, rest: str = "") -> str:
    """What a wh-word asks for, given the noun it asks about and the words after it."""
    if wh == "how many":
        # "how many days" asks for a span of time
        return "duration" if rules.on("question.units") and _UNITS.match(rest) else "count"
    if wh == "how much":
        return "money" if rules.on("question.money_words") and _MONEY.search(lower) else "quantity"
    if wh == "how long":
        return "duration"
    if wh.startswith("how ") and wh != "how soon":
        return "quantity"
    simple = {"when": "date", "how soon": "date", "who": "person", "whom": "person", "whose": "person",
              "where": "place", "why": "reason", "how": "manner"}
    if wh in simple:
        return simple[wh]  # "how did he react": answered by what a sentence says, not a name
    if noun is not None:
        return NOUN_KIND.get(noun, "thing") if rules.on("question.head_nouns") else "thing"
    if rules.on("question.named_entity") and _NAMED.search(lower):
        return "entity"
    return "thing" if wh in {"which", "what"} else "other"


def head_noun(rest: str) -> str | None:
    """The noun a which/what phrase is about: "news agency did" -> agency, "is the capital of" -> capital."""
    words = WORD.findall(rest)
    if words and words[0] in AUX and words[0] not in _COPULA:
        return None  # "what did the spokesman say": the subject is not what is asked for
    if words and words[0] in _COPULA:  # "what is the capital of France"
        words = words[1:]
        while words and words[0] in _DETERMINERS:
            words = words[1:]
    phrase: list[str] = []
    for word in words[:4]:
        if word in AUX or (word in STOPWORDS and word not in {"kind", "type"}) or word.endswith("ed"):
            break
        phrase.append(word)
        if singular(word) in NOUN_KIND:
            break  # "which agency reported ...": the first known noun heads the phrase
    if (rules.on("question.kind_of") and phrase and phrase[-1] in {"kind", "type", "sort"}
            and len(words) > len(phrase) + 1):
        return head_noun(" ".join(words[len(phrase) + 1:]))  # "what kind of ceasefire"
    if not phrase:
        return None
    return singular(phrase[-1])


def singular(word: str) -> str:
    """A known noun's singular ("agencies" -> "agency"); other words as they are."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3 and word[:-1] in NOUN_KIND:
        return word[:-1]
    return word
