"""What one question's words ask for: its wh-word, the noun it asks about, what it expects, its verb."""

from __future__ import annotations

import re
from dataclasses import dataclass

from qa import rules
from qa.question.kinds import AUX, WORD, head_noun, kind_of, singular
from qa.text.words import STOPWORDS, tokenize

_WH = re.compile(r"\b(how many|how much|how long|how old|how far|how tall|how high|how big|how fast|"
                 r"how soon|how|when|who|whom|whose|where|which|what|why)\b", re.IGNORECASE)
# A follow-up resolved with context carries the earlier turn in a closing bracket: its words help
# find the evidence, but the question itself says what it asks.
_CONTEXT = re.compile(r"(?<=[?.!])\s*\(.*\)\s*$", re.DOTALL)
# Words that also join a relative clause ("the leader who ...", "... when attempting"): in mid
# question they ask only when no plainly interrogative word does.
_RELATIVE = frozenset({"who", "whom", "whose", "when", "where", "which", "why", "how"})
_CONTRACTION = re.compile(r"\b(what|who|where|how)[’']s\b")
# "What did he tweet?": the answer is what a sentence says, not a phrase in it.
SAID = re.compile(r"^\s*what\b.*\b(?:say|said|tweet|tweeted|tell|told|write|wrote|post|posted|announce|"
                  r"announced|claim|claimed|warn|warned)\b", re.I)


@dataclass(frozen=True)
class Asking:
    """What the words of one question ask: the wh-word, the noun, what it expects, the verb."""

    wh: str
    noun: str | None
    expects: str
    key: str
    verb: str | None


def focus(question: str) -> str:
    """The sentence of a question that asks it: quiz questions open with a sentence of context."""
    if not rules.on("question.focus"):
        return question
    parts = [p for p in re.split(r"(?<=[.!?])\s+(?=[\"“‘'A-Z0-9])", question.strip()) if p.strip()]
    for part in reversed(parts):
        if _WH.search(part) or part.rstrip().endswith(("?", ":")):
            return part
    return question


@rules.cached(2048)
def asking_of(question: str) -> Asking:
    """What one question's words ask for, by rules over its words (no model: fast)."""
    text = focus(_CONTEXT.sub("", question) or question)
    lower = text.lower()
    if rules.on("question.contractions"):
        lower = _CONTRACTION.sub(r"\1 is", lower)
    found = list(_WH.finditer(lower))
    # "Which ...?" is asked by its first word; "The leader who ... for how many years?" and
    # "... an encounter with what sea creature when swimming?" by the last interrogative one.
    asking = [m for m in found if m.group(1) not in _RELATIVE] if rules.on("question.relative_wh") else found
    match = (found[0] if found and found[0].start() == 0 else asking[-1] if asking
             else found[-1] if found else None)
    wh = match.group(1) if match else ""
    rest = lower[match.end():] if match else ""
    noun = head_noun(rest) if wh in {"which", "what"} else None
    expects = kind_of(wh, noun, lower, rest)
    verb = _subject_verb(rest, noun) if wh in {"who", "which", "what"} and rules.on("question.subject_verb") \
        else None
    return Asking(wh, noun, expects, f"which:{noun}" if noun else (wh or "none"), verb)


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


