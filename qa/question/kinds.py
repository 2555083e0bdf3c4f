"""Kinds of question: the wh-word or "which X" noun that decides one, and the span labels that answer it."""

from __future__ import annotations

import re

from qa.text.words import STOPWORDS

ENTITY_LABELS = frozenset("PERSON NORP FAC ORG GPE LOC PRODUCT EVENT WORK_OF_ART LAW LANGUAGE".split())
NUMERIC_LABELS = frozenset("DATE TIME PERCENT MONEY QUANTITY ORDINAL CARDINAL".split())
# The labels each kind of question is answered by; "thing" and "other" take any span.
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
# "What did he tweet?": the answer is what a sentence says, not a phrase in it.
ASKS_WHAT_WAS_SAID = re.compile(r"^\s*what\b.*\b(?:say|said|tweet|tweeted|tell|told|write|wrote|post|posted|"
                                r"announce|announced|claim|claimed|warn|warned)\b", re.I)

# The head noun of "which/what X" decides the kind; the span reader's learned table refines it per noun.
_NOUN_KINDS = {
    "person": "president analyst leader official minister negotiator spokesman spokesperson actor "
              "actress singer player senator governor judge ceo founder author rapper star athlete "
              "coach celebrity politician lawmaker candidate musician director executive comedian "
              "pitcher quarterback representative host billionaire astronaut pope entrepreneur chef "
              "writer artist journalist person man woman people king queen prince princess general "
              "commander scientist doctor lawyer envoy mayor chancellor premier dictator victim suspect",
    "org": "agency network group company organization organisation newspaper party team firm bank "
           "university institution retailer league airline automaker carmaker manufacturer maker "
           "militia body commission committee council court think-tank tank club band union "
           "government ministry department channel station magazine publication outlet school "
           "college charity nonprofit brand chain store startup insurer union alliance",
    "place": "city country state town region capital county district island nation continent "
             "province territory village neighborhood neighbourhood area location place port border "
             "river lake sea ocean mountain",
    "facility": "prison airport stadium hospital building venue bridge base jail camp embassy "
                "hotel arena museum palace plant factory",
    "date": "date day month year time week decade season",
    "percent": "percentage percent share proportion rate",
    "money": "price cost amount fee salary budget fine sum",
    "count": "number",
}
NOUN_KIND = {noun: kind for kind, nouns in _NOUN_KINDS.items() for noun in nouns.split()}
AUX = frozenset("is are was were do does did has have had will would can could should may might "
                "must be been being".split())
_COPULA = frozenset("is are was were".split())
WORD = re.compile(r"[A-Za-z][\w’'-]*|\d[\d,.]*")
_UNITS = re.compile(r"^\s*(?:more\s+)?(?:days?|weeks?|months?|years?|hours?|minutes?|decades?)\b")
_MONEY = re.compile(r"\b(?:cost|pay|paid|raise|worth|price|spen[dt]|fund|money|sell|sold|earn|dollars?)\b")


def kind_of(wh: str, noun: str | None, lower: str, rest: str = "") -> str:
    """The kind a wh-word asks for, given the noun it asks about and the words after it."""
    if wh == "how many":
        return "duration" if _UNITS.match(rest) else "count"  # "how many days" asks for a span of time
    if wh == "how much":
        return "money" if _MONEY.search(lower) else "quantity"
    if wh == "how long":
        return "duration"
    if wh.startswith("how ") and wh != "how soon":
        return "quantity"
    if wh in {"when", "how soon"}:
        return "date"
    if wh in {"who", "whom", "whose"}:
        return "person"
    if wh == "where":
        return "place"
    if wh == "why":
        return "reason"
    if wh == "how":
        return "manner"  # "how did he react": answered by what the sentence says, not a name
    if noun is not None:
        return NOUN_KIND.get(noun, "thing")
    if re.search(r"\b(?:called|named|titled|the name of)\b", lower):
        return "entity"
    return "thing" if wh in {"which", "what"} else "other"


def head_noun(rest: str) -> str | None:
    """The noun a which/what phrase is about: "news agency did" -> agency, "is the capital of" -> capital."""
    words = WORD.findall(rest)
    if words and words[0] in AUX and words[0] not in _COPULA:
        return None  # "what did the spokesman say": the subject is not what is asked for
    if words and words[0] in _COPULA:  # "what is the capital of France"
        words = words[1:]
        while words and words[0] in {"the", "a", "an", "its", "his", "her", "their", "this", "that"}:
            words = words[1:]
    phrase: list[str] = []
    for word in words[:4]:
        if word in AUX or (word in STOPWORDS and word not in {"kind", "type"}) or word.endswith("ed"):
            break
        phrase.append(word)
        if singular(word) in NOUN_KIND:
            break  # "which agency reported ...": the first known noun heads the phrase
    if len(phrase) >= 1 and phrase[-1] in {"kind", "type", "sort"} and len(words) > len(phrase) + 1:
        return head_noun(" ".join(words[len(phrase) + 1:]))  # "what kind of ceasefire"
    if not phrase:
        return None
    if phrase[-1] == "tank" and len(phrase) > 1 and phrase[-2] == "think":
        return "think-tank"
    return singular(phrase[-1])


def singular(word: str) -> str:
    """A known noun's singular ("agencies" -> "agency"); other words as they are."""
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3 and word[:-1] in NOUN_KIND:
        return word[:-1]
    return word
