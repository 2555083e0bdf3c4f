"""Question analysis: what a question asks for and how it is answered, by rules over its words, once."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import replace
from pathlib import Path

from qa import rules
from qa.question import followup, forms
from qa.question.asking import asking_of, focus
from qa.question.kinds import WORD
from qa.question.record import Question
from qa.text.normalise import shown_in, undotted, without_possessive
from qa.text.words import tokenize

# Words that open a question or a clause in capitals without being names (not_names.txt).
NOT_NAMES = frozenset(Path(__file__).with_name("not_names.txt").read_text("utf-8").split())
_MONTH = r"(?:Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Sept|Oct|Nov|Dec)[a-z]*"
STORY = "What are these articles about?"  # what a request for more asks with nothing before it
DECIDED = frozenset({"factoid", "yesno"})  # kinds whose answer decides: more of them is a summary
_DATES = re.compile(rf"\b(?:1[89]\d\d|20\d\d)\b|\b{_MONTH}\.? \d{{1,2}}\b|\b\d{{1,2}} {_MONTH}\b")


def analyse(question: str, history: Sequence[object] | None = None) -> Question:
    """The question once for a whole answer: a follow-up made standalone, what it asks for (from the
    standalone form), the text a reader reads, and the names the user's own words hold."""
    if forms.more(question):  # "Tell me more": the last question again, past what its answers showed
        then = followup.continued(history)
        if then is None:
            return replace(analyse(STORY), typed=question)
        earlier, before, seen = then
        q = analyse(earlier, before)
        recalled = q.recalled if q.recalled and not shown_in(q.recalled.text, seen) else None
        q = replace(q, seen=seen, recalled=recalled, typed=question)
        # More of a short answer or a verdict is more of what the articles say on it, not a second
        # one read from the sentences left ("500", then "100", to "How many every fortnight?"; "Yes",
        # then "No", to "Did the US welcome the decree?").
        return replace(q, kind="summary", topic=q.query) if q.kind in DECIDED and seen else q
    query = followup.resolve(question, history)  # as typed: "So …?" may mark a follow-up
    # A follow-up whose pronoun was resolved reads as the standalone question it became ("Which
    # agency did Suhail Shaheen speak to?"); one resolved by context (a bracket) reads as asked.
    text = query if not query.startswith(question) else question
    # A request asks what it wraps: "OK, could you list the demands?" asks "List the demands?".
    query, text = forms.request(query), forms.request(text)
    asking = asking_of(query)
    asks = forms.request(focus(text))  # its asking sentence's courtesies too ("Thanks. Could you …?")
    kind = forms.kind_of(asks, asking.expects)
    return Question(question, query, text, kind, asking.expects, asking.key, asking.noun, asking.wh,
                    frozenset(tokenize(query)), hinges(text), hinges(forms.request(question)), asking.verb,
                    tuple(_DATES.findall(question)), followup.earlier_turn(question, history),
                    followup.earlier_citation(question, history), forms.topic_of(asks, kind))


@rules.cached(2048)
def hinges(question: str) -> tuple[str, ...]:
    """The names and numbers in a question: capitalised words that are no function word, and digits;
    "U.S." is one name, "US"."""
    out = []
    question = undotted(question)
    for i, m in enumerate(WORD.finditer(question)):
        for part in without_possessive(m.group()).rstrip(".,").split("-"):  # "US-Taliban", "Doha-based"
            if not part:
                continue
            if part[0].isdigit():
                out.append(part.replace(",", ""))
            elif part[0].isupper() and _may_name(part, i):
                out.append(part)
    return tuple(dict.fromkeys(out))


def _may_name(word: str, at: int) -> bool:
    """Whether a capitalised word at this place in a question can be a name."""
    if rules.on("question.not_names") and word.lower() in NOT_NAMES:
        return False
    if at == 0 and rules.on("question.first_word"):
        # Every question's first word is capitalised: a name there only when written in capitals ("US").
        return word.isupper() and len(word) > 1
    return at > 0 or len(word) > 1
