"""What a question asks for: its kind, the span labels that answer it, and the names it hinges on."""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from qa.text.words import STOPWORDS, tokenize

TYPES_FILE = Path(__file__).with_name("types.json")
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

# The head noun of "which/what X" decides the kind; the learned table refines it per noun.
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
_AUX = frozenset("is are was were do does did has have had will would can could should may might "
                 "must be been being".split())
_COPULA = frozenset("is are was were".split())
_WORD = re.compile(r"[A-Za-z][\w’'-]*|\d[\d,.]*")
_WH = re.compile(r"\b(how many|how much|how long|how old|how far|how tall|how high|how big|how fast|"
                 r"how soon|how|when|who|whom|whose|where|which|what|why)\b", re.IGNORECASE)
_MONEY = re.compile(r"\b(?:cost|pay|paid|raise|worth|price|spen[dt]|fund|money|sell|sold|earn|dollars?)\b")


@dataclass(frozen=True)
class Asked:
    """What a question asks for: its kind, the wh-key of the learned table, and its prior."""

    kind: str
    key: str
    noun: str | None
    terms: frozenset[str]  # the question's content-word stems
    hinges: tuple[str, ...]  # names and numbers the answer depends on, as the question writes them
    verb: str | None = None  # the stem of the verb whose subject is asked for ("who tweeted": tweet)

    @property
    def labels(self) -> frozenset[str]:
        """The span labels that answer this kind (empty: any label)."""
        return KIND_LABELS.get(self.kind, frozenset())

    def prior(self, label: str) -> float:
        """log P(label | question) from the learned table, backed off to the kind."""
        return _types().log_prior(self.key, self.kind, label)


def focus(question: str) -> str:
    """The sentence of a question that asks it: quiz questions open with a sentence of context."""
    parts = [p for p in re.split(r"(?<=[.!?])\s+(?=[\"“‘'A-Z0-9])", question.strip()) if p.strip()]
    for part in reversed(parts):
        if _WH.search(part) or part.rstrip().endswith(("?", ":")):
            return part
    return question


# A follow-up resolved by qa.retrieval.followup carries the earlier turn in a closing bracket:
# its words help find the evidence, but the kind is asked by the question itself.
_CONTEXT = re.compile(r"(?<=[?.!])\s*\(.*\)\s*$", re.DOTALL)
# Words that also join a relative clause ("the leader who ...", "... when attempting"): in mid
# question they ask only when no plainly interrogative word does.
_RELATIVE = frozenset({"who", "whom", "whose", "when", "where", "which", "why", "how"})


@lru_cache(maxsize=2048)
def ask(question: str) -> Asked:
    """Read a question's kind, key and hinge terms with rules over its words (no model: fast)."""
    text = focus(_CONTEXT.sub("", question) or question)
    lower = re.sub(r"\b(what|who|where|how)[’']s\b", r"\1 is", text.lower())
    found = list(_WH.finditer(lower))
    # "Which ...?" is asked by its first word; "The leader who ... for how many years?" and
    # "... an encounter with what sea creature when swimming?" by the last interrogative one.
    asking = [m for m in found if m.group(1) not in _RELATIVE]
    match = (found[0] if found and found[0].start() == 0 else asking[-1] if asking
             else found[-1] if found else None)
    wh = match.group(1) if match else ""
    noun = _head_noun(lower[match.end():]) if wh in {"which", "what"} and match else None
    kind = _kind(wh, noun, lower, lower[match.end():] if match else "")
    key = f"which:{noun}" if noun else (wh or "none")
    verb = _subject_verb(lower[match.end():], noun) if wh in {"who", "which", "what"} and match else None
    return Asked(kind, key, noun, frozenset(tokenize(question)), hinges(question), verb)


def _subject_verb(rest: str, noun: str | None) -> str | None:
    """The verb right after "who" or "which X" when the question asks for its subject."""
    words = _WORD.findall(rest)
    if noun is not None:  # "which agency reported ...": past the noun phrase
        at = next((i for i, w in enumerate(words[:4]) if _singular(w) == noun), None)
        if at is None:
            return None
        words = words[at + 1:]
    if not words or words[0] in _AUX or words[0] in STOPWORDS:
        return None
    stems = tokenize(words[0])
    return stems[0] if stems else None


def _head_noun(rest: str) -> str | None:
    """The noun a which/what phrase is about: "news agency did" -> agency, "is the capital of" -> capital."""
    words = _WORD.findall(rest)
    if words and words[0] in _AUX and words[0] not in _COPULA:
        return None  # "what did the spokesman say": the subject is not what is asked for
    if words and words[0] in _COPULA:  # "what is the capital of France"
        words = words[1:]
        while words and words[0] in {"the", "a", "an", "its", "his", "her", "their", "this", "that"}:
            words = words[1:]
    phrase: list[str] = []
    for word in words[:4]:
        if word in _AUX or (word in STOPWORDS and word not in {"kind", "type"}) or word.endswith("ed"):
            break
        phrase.append(word)
        if _singular(word) in NOUN_KIND:
            break  # "which agency reported ...": the first known noun heads the phrase
    if len(phrase) >= 1 and phrase[-1] in {"kind", "type", "sort"} and len(words) > len(phrase) + 1:
        return _head_noun(" ".join(words[len(phrase) + 1:]))  # "what kind of ceasefire"
    if not phrase:
        return None
    if phrase[-1] == "tank" and len(phrase) > 1 and phrase[-2] == "think":
        return "think-tank"
    return _singular(phrase[-1])


def _singular(word: str) -> str:
    if word.endswith("ies") and len(word) > 4:
        return word[:-3] + "y"
    if word.endswith("s") and not word.endswith("ss") and len(word) > 3 and word[:-1] in NOUN_KIND:
        return word[:-1]
    return word


_UNITS = re.compile(r"^\s*(?:more\s+)?(?:days?|weeks?|months?|years?|hours?|minutes?|decades?)\b")


def _kind(wh: str, noun: str | None, lower: str, rest: str = "") -> str:
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


# Words that open a question or a sentence in capitals without being names.
_NOT_NAMES = frozenset("who whom whose what which when where why how is are was were do does did has have "
                       "had will would can could should in on at for from to by of the a an and or but "
                       "according after before apart besides since during once roughly".split())


def hinges(question: str) -> tuple[str, ...]:
    """The names and numbers in a question: capitalised words (not its first) and digits."""
    out = []
    for i, m in enumerate(_WORD.finditer(question)):
        for part in re.sub(r"[’']s$", "", m.group()).rstrip(".,").split("-"):  # "US-Taliban", "Doha-based"
            if not part:
                continue
            if part[0].isdigit():
                out.append(part.replace(",", ""))
            elif part[0].isupper() and part.lower() not in _NOT_NAMES and (i > 0 or len(part) > 1):
                out.append(part)
    return tuple(dict.fromkeys(out))


class TypeTable:
    """Counts of the label that answered each question key and kind, fitted on RealTime QA back numbers."""

    def __init__(self, keys: dict[str, dict[str, float]], kinds: dict[str, dict[str, float]],
                 labels: list[str], strength: float = 4.0) -> None:
        self.keys, self.kinds, self.labels, self.strength = keys, kinds, labels, strength

    @lru_cache(maxsize=4096)  # noqa: B019 - one table per process, keys repeat
    def log_prior(self, key: str, kind: str, label: str) -> float:
        base = self._smoothed(self.kinds.get(kind, {}), 1.0 / len(self.labels), label, 1.0)
        counts = self.keys.get(key, {})
        return math.log(self._smoothed(counts, base, label, self.strength))

    @staticmethod
    def _smoothed(counts: dict[str, float], base: float, label: str, strength: float) -> float:
        total = sum(counts.values())
        return (counts.get(label, 0.0) + strength * base) / (total + strength)


@lru_cache(maxsize=1)
def _types() -> TypeTable:
    data = json.loads(TYPES_FILE.read_text("utf-8")) if TYPES_FILE.is_file() else {}
    labels = sorted(ENTITY_LABELS | NUMERIC_LABELS | {"NP"})
    return TypeTable(data.get("keys", {}), data.get("kinds", {}), labels)
