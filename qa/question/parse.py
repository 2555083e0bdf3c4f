"""What a question asks for: its kind, the span labels that answer it, and the names it hinges on."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache

from qa.question.kinds import (
    ASKS_WHAT_WAS_SAID,
    AUX,
    KIND_LABELS,
    SENTENCE_KINDS,
    WORD,
    head_noun,
    kind_of,
    singular,
)
from qa.text.words import STOPWORDS, tokenize, undotted

_WH = re.compile(r"\b(how many|how much|how long|how old|how far|how tall|how high|how big|how fast|"
                 r"how soon|how|when|who|whom|whose|where|which|what|why)\b", re.IGNORECASE)
# A follow-up resolved by qa.retrieval.followup carries the earlier turn in a closing bracket:
# its words help find the evidence, but the kind is asked by the question itself.
_CONTEXT = re.compile(r"(?<=[?.!])\s*\(.*\)\s*$", re.DOTALL)
# Words that also join a relative clause ("the leader who ...", "... when attempting"): in mid
# question they ask only when no plainly interrogative word does.
_RELATIVE = frozenset({"who", "whom", "whose", "when", "where", "which", "why", "how"})
# Words that open a question or a sentence in capitals without being names.
_NOT_NAMES = frozenset("who whom whose what which when where why how is are was were do does did has have "
                       "had will would can could should in on at for from to by of the a an and or but "
                       "according after before apart besides since during once roughly".split())


@dataclass(frozen=True)
class Asked:
    """What a question asks for: its kind, the wh-key of the learned table, its terms and names."""

    text: str  # the question a reader reads: a follow-up standalone once its pronoun is resolved
    kind: str
    key: str
    noun: str | None
    terms: frozenset[str]  # the content-word stems of the query (an earlier turn's words included)
    hinges: tuple[str, ...]  # names and numbers of ``text``, as it writes them
    verb: str | None = None  # the stem of the verb whose subject is asked for ("who tweeted": tweet)
    # The names and numbers of the question as the user typed it: what a refusal checks the passages for.
    named: tuple[str, ...] = ()
    # It asks what someone said, tweeted or wrote: the cited sentences answer it, not a phrase.
    quotes: bool = False

    @property
    def labels(self) -> frozenset[str]:
        """The span labels that answer this kind (empty: any label)."""
        return KIND_LABELS.get(self.kind, frozenset())

    @property
    def by_sentence(self) -> bool:
        """True when the cited sentences are the answer (why, how, what was said), not a short phrase."""
        return self.kind in SENTENCE_KINDS or self.quotes


def focus(question: str) -> str:
    """The sentence of a question that asks it: quiz questions open with a sentence of context."""
    parts = [p for p in re.split(r"(?<=[.!?])\s+(?=[\"“‘'A-Z0-9])", question.strip()) if p.strip()]
    for part in reversed(parts):
        if _WH.search(part) or part.rstrip().endswith(("?", ":")):
            return part
    return question


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
    noun = head_noun(lower[match.end():]) if wh in {"which", "what"} and match else None
    kind = kind_of(wh, noun, lower, lower[match.end():] if match else "")
    key = f"which:{noun}" if noun else (wh or "none")
    verb = _subject_verb(lower[match.end():], noun) if wh in {"who", "which", "what"} and match else None
    names = hinges(question)
    return Asked(question, kind, key, noun, frozenset(tokenize(question)), names, verb, names,
                 bool(ASKS_WHAT_WAS_SAID.match(question)))


def parse(question: str, query: str) -> Asked:
    """The question once for a whole answer: its kind and terms from the standalone query, the
    text a reader reads, and the names the user's own words hold."""
    asked = ask(query)
    # A follow-up whose pronoun was resolved reads as the standalone question it became ("Which
    # agency did Suhail Shaheen speak to?"); one resolved by context (a bracket) reads as asked.
    text = query if not query.startswith(question) else question
    return Asked(text, asked.kind, asked.key, asked.noun, asked.terms, hinges(text), asked.verb,
                 hinges(question), bool(ASKS_WHAT_WAS_SAID.match(question)))


def _subject_verb(rest: str, noun: str | None) -> str | None:
    """The verb right after "who" or "which X" when the question asks for its subject."""
    words = WORD.findall(rest)
    if noun is not None:  # "which agency reported ...": past the noun phrase
        at = next((i for i, w in enumerate(words[:4]) if singular(w) == noun), None)
        if at is None:
            return None
        words = words[at + 1:]
    if not words or words[0] in AUX or words[0] in STOPWORDS:
        return None
    stems = tokenize(words[0])
    return stems[0] if stems else None


@lru_cache(maxsize=2048)
def hinges(question: str) -> tuple[str, ...]:
    """The names and numbers in a question: capitalised words (not its first) and digits; "U.S."
    is one name, "US"."""
    out = []
    question = undotted(question)
    for i, m in enumerate(WORD.finditer(question)):
        for part in re.sub(r"[’']s$", "", m.group()).rstrip(".,").split("-"):  # "US-Taliban", "Doha-based"
            if not part:
                continue
            if part[0].isdigit():
                out.append(part.replace(",", ""))
            elif part[0].isupper() and part.lower() not in _NOT_NAMES and (i > 0 or len(part) > 1):
                out.append(part)
    return tuple(dict.fromkeys(out))
