"""Short answers: the span of a sentence that answers a question (a number, name, date, place)."""

from __future__ import annotations

import re
from functools import lru_cache

from .lexical import STOPWORDS, tokenize

CLOSE_CHARS = 25  # a candidate this many characters from the question's terms counts half
NUMBER_WORDS = (
    "one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|"
    "fifty|hundred|thousand|million|billion|dozen|dozens|hundreds|thousands|millions"
)
_NUMBER = re.compile(
    rf"(?:(?:about|some|up to|at least|more than|nearly|around|over)\s+)?"
    rf"(?:[$€£]\s?)?\d[\d,.]*(?:\s?(?:%|percent|million|billion|thousand))?|\b(?:{NUMBER_WORDS})\b",
    re.IGNORECASE,
)
_MONTH = (
    r"(?:Jan(?:uary)?|Feb(?:ruary)?|Mar(?:ch)?|Apr(?:il)?|May|June?|July?|Aug(?:ust)?|"
    r"Sep(?:t(?:ember)?)?|Oct(?:ober)?|Nov(?:ember)?|Dec(?:ember)?)\.?"
)
_DATE = re.compile(
    rf"\b(?:{_MONTH}\s+\d{{1,2}}(?:,\s*\d{{4}})?|\d{{1,2}}\s+{_MONTH}(?:\s+\d{{4}})?|{_MONTH}\s+\d{{4}}"
    r"|(?:Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)"
    r"|(?:last|next|this)\s+(?:week|month|year)|(?:19|20)\d{2})\b"
)
_NAME = re.compile(r"\b(?:al-|el-)?[A-Z][\w’'\-.]*(?:\s+(?:of\s+|de\s+|al-)?[A-Z][\w’'\-.]*)*")
_DURATION = re.compile(r"\b(?:\d+|[a-z]+)[\s-]+(?:days?|weeks?|months?|years?|hours?)\b", re.IGNORECASE)
_MONTH_ONLY = re.compile(rf"\b{_MONTH[:-3]}\b")
_YEAR = re.compile(r"\b(?:1[5-9]|20)\d{2}\b")
# Day and month names are dates, never the name a "which/who" question asks for.
CALENDAR = re.compile(rf"^(?:{_MONTH[:-3]}|Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday)$")
# A lone capitalised word opening a sentence is usually an ordinary word ("Asked", "Literally").
_COMMON_START = re.compile(r"^[A-Z][a-z]+(?:ly|ed|ing|ally)$")
# "Which/what <noun>" questions: the noun says what kind of span answers them.
_PLACE_NOUNS = ("city|province|country|state|town|region|prison|capital|county|district|island|venue|"
                "nation|continent")
_PERSON_NOUNS = ("president|analyst|leader|official|minister|negotiator|spokesman|spokesperson|actor|"
                 "actress|singer|player|senator|governor|judge|ceo|founder|author|rapper|star|athlete|"
                 "coach|celebrity|politician|lawmaker|candidate|musician|director|executive|comedian|"
                 "popstar|pitcher|quarterback|mp|rep|representative|host|billionaire|astronaut|pope|"
                 "entrepreneur|chef|writer|artist|journalist|member|person|man|woman|people|head|royal")
_NAME_NOUNS = ("agency|network|group|company|organization|organisation|newspaper|party|team|show|"
               "film|movie|brand|band|app|airline|firm|bank|university|institution|retailer|"
               "league|series|book|song|album|website|platform|automaker|store|chain|club|"
               "currency|planet|breed|substance|maker|manufacturer|carmaker|drug|vaccine|game|"
               "restaurant|magazine|channel|station|hurricane|storm|species|animal|mission|spacecraft|"
               "painting|dinosaur|landmark|variant|virus|disease|school|college|sport|award|event|insect|"
               "condiment|item|food|product|feature|crop|fruit|bird|fish|plant|drink|condition|illness")
_NOUNS = f"month|{_PLACE_NOUNS}|{_PERSON_NOUNS}|{_NAME_NOUNS}"


def _plural(word: str) -> str:
    """The singular noun without its last letter made optional-plural ("city" -> "cit(?:y|ies)")."""
    return ("(?:" + "|".join(f"{w[:-1]}(?:y|ies)" if w.endswith("y") else f"{w}(?:e?s)?"
                             for w in word.split("|")) + ")")


# The noun must head the wh-phrase: "what did the spokesman say" asks for no spokesman.
_AUX = r"(?!(?:is|are|was|were|do|does|did|has|have|had|will|would|can|could|should|may|might)\b)"
WHICH_NOUN = re.compile(rf"\b(?:which|what)\s+(?:{_AUX}[\w’'-]+\s+){{0,3}}?({_plural(_NOUNS)})\b",
                    re.IGNORECASE)
_WH = re.compile(r"\b(how many|how much|how long|how old|how high|how far|how tall|how big|how fast|"
                 r"how soon|what percentage|when|what date|what day|which day|"
                 r"what year|who|whom|whose|where|which|what)\b", re.IGNORECASE)


# Words that open a capitalised run but are not part of a person's name.
LEADING = frozenset(
    "The A An But In On And As At Mr Mrs Ms Dr Mayor President Prime Minister Analyst Senator "
    "Governor General Chancellor King Queen Prince Judge Justice Secretary Spokesman US U.S UN "
    "Afghan American British Former Deputy Chief Since Although However Meanwhile While When After "
    "Before If Because Then Still Yet Also Even Last This That These Those Some Many Most Every Each".split()
)


@lru_cache(maxsize=1024)
def focus(question: str) -> str:
    """The sentence of a question that asks it: quiz questions open with a sentence of context."""
    parts = [p for p in re.split(r"(?<=[.!?])\s+(?=[\"“‘'A-Z0-9])", question.strip()) if p.strip()]
    for part in reversed(parts):
        if _WH.search(part) or part.rstrip().endswith(("?", ":")):
            return part
    return question


@lru_cache(maxsize=1024)
def answer_type(question: str) -> str:
    """The kind of span a question asks for: number, date, duration, person, place or other."""
    question = focus(question)
    if re.search(r"\bsince\s*:?\s*$", question, re.IGNORECASE):
        return "date"
    # "Which ...?" is asked by its first word; "The leader who ... for how many years?" by its last.
    found = list(_WH.finditer(question))
    match = found[0] if found and found[0].start() == 0 else (found[-1] if found else None)
    wh = match.group(1).lower() if match else ""
    if wh in {"how many", "how much", "what percentage"} or (
            wh.startswith("how ") and wh not in {"how long", "how soon"}):
        return "number"
    if wh == "how long":
        return "duration"
    if wh == "what year":
        return "year"
    if wh in {"when", "what date", "what day", "which day", "how soon"}:
        return "date"
    if wh in {"who", "whom", "whose"}:
        return "person"
    if wh == "where":
        return "place"
    if wh in {"which", "what"} and (noun := WHICH_NOUN.search(question)):
        word = noun.group(1).lower()
        if word == "month":
            return "month"
        if re.fullmatch(_plural(_PLACE_NOUNS), word):
            return "place"
        return "person" if re.fullmatch(_plural(_PERSON_NOUNS), word) else "name"
    if re.search(r"\b(?:called|named|titled|the name of)\b", question, re.IGNORECASE) and wh != "why":
        return "name"
    if wh == "which" and not re.search(r"\bwhich\s+(?:of\s+)?(?:these|the following)\b", question, re.I):
        # "Which <anything>" asks for an entity, and entities are mostly capitalised names.
        return "name"
    return "other"


@lru_cache(maxsize=1 << 14)
def candidates(sentence: str, kind: str) -> tuple[tuple[int, int], ...]:
    """Spans in sentence that could answer a question of this kind (cached: sentences recur)."""
    patterns = {"number": _NUMBER, "date": _DATE, "duration": _DURATION, "month": _MONTH_ONLY,
                "year": _YEAR}
    pattern = patterns.get(kind, _NAME)
    spans = [(m.start(), m.end()) for m in pattern.finditer(sentence)]
    if kind in {"person", "place", "name", "other"}:
        lead = len(sentence) - len(sentence.lstrip(" \"“‘'"))
        spans = [(a, b) for a, b in spans if sentence[a:b].lower() not in STOPWORDS
                 and not CALENDAR.match(sentence[a:b].rstrip("."))
                 and not (a == lead and _COMMON_START.match(sentence[a:b]))]
    return tuple(spans)


@lru_cache(maxsize=1 << 16)
def _word_terms(word: str) -> tuple[str, ...]:
    """tokenize() of a word or short text, cached: answers tokenize the same words again and again."""
    return tuple(tokenize(word))


@lru_cache(maxsize=1 << 14)
def _term_offsets(sentence: str) -> dict[str, list[int]]:
    """Where each term's word starts, cached: every question re-reads the retrieved sentences."""
    offsets: dict[str, list[int]] = {}
    for m in re.finditer(r"\S+", sentence):
        for term in _word_terms(m.group()):
            offsets.setdefault(term, []).append(m.start())
    return offsets


def spans(question: str, sentence: str, kind: str | None = None) -> list[tuple[str, float]]:
    """Candidate answers in sentence, not already in the question, each with its closeness (0 to 1)."""
    kind = kind or answer_type(question)
    q_terms = set(_word_terms(question))
    focused = focus(question).lower()
    offsets = _term_offsets(sentence)
    anchors = [pos for term in q_terms for pos in offsets.get(term, ())]
    found: list[tuple[str, float]] = []
    for start, end in candidates(sentence, kind):
        text = re.sub(r"[’']s$", "", sentence[start:end].strip(" ,.;:\"“”’'"))  # "Colombia’s"
        span_terms = set(_word_terms(text))
        if not text or (span_terms and span_terms <= q_terms):
            continue
        if kind == "person":
            names = text.split()
            while names and names[0].rstrip(".") in LEADING:
                names = names[1:]
            text = " ".join(names)
            if not text:
                continue
        distance = min((abs(a - start) for a in anchors), default=len(sentence))
        # Multi-word names are likelier answers than a lone capitalised word.
        score = distance - (15 if kind == "person" and " " in text else 0)
        if kind == "number" and not _fits_number(focused, text):
            continue
        if kind == "number" and q_terms.intersection(_word_terms(" ".join(sentence[end:].split()[:2]))):
            # "500 prisoners" answers "how many prisoners": the counted noun follows the number.
            score -= 30
        close = 1.0 / (1.0 + max(score, 0) / CLOSE_CHARS)
        found.append((text, close))
    return found


def _fits_number(question: str, span: str) -> bool:
    """Whether a number span is the kind of number the (lower-cased) question asks for."""
    if re.search(r"percent|%|share|proportion", question):
        return bool(re.search(r"%|percent", span, re.IGNORECASE))
    if re.fullmatch(r"(?:19|20)\d\d", span) and "year" not in question:
        return False  # a bare year is a date, not a count
    money = r"\bhow much\b.*\b(?:cost|pay|paid|raise|worth|price|spen[dt]|fund|money|sell|sold|earn)"
    if re.search(money, question):
        return bool(re.search(r"[$€£]|million|billion|thousand|\bm\b|bn", span, re.IGNORECASE))
    return True


def short_answer(question: str, sentence: str) -> str | None:
    """The candidate span not already in the question that sits closest to its terms."""
    found = spans(question, sentence)
    return max(found, key=lambda f: f[1])[0] if found else None
