"""What kind of answer a question asks for, by its form: a short phrase (factoid), or the sentences
of an overview, a summary, a why or a how, a list, a yes or no, a comparison, a definition, what
comes next or what someone said; and its topic, without the words that only ask (forms.toml)."""

from __future__ import annotations

import re
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from qa import rules
from qa.question.asking import SAID
from qa.text.words import tokenize

FORMS_FILE = Path(__file__).with_name("forms.toml")
KINDS = ("factoid", "overview", "summary", "why", "how", "list", "yesno", "compare", "define", "next", "said")
# What each kind of answer is called where it is shown.
KIND_NAMES = {"factoid": "short answer", "overview": "overview", "summary": "summary", "why": "why",
              "how": "how", "list": "list", "yesno": "yes or no", "compare": "comparison",
              "define": "who or what it is", "next": "what comes next", "said": "what was said"}
# Kinds answered by several sentences chosen for coverage, not by a phrase of one sentence.
BROAD = frozenset({"overview", "summary", "list", "compare", "define", "next", "said", "yesno"})
# "Who is Abdullah Abdullah?", "What is the Doha agreement?": a name, or a name and a noun of
# the things news defines (a deal, a law, a body).
_NOUNS = (r"agreement|deal|accord|treaty|pact|decree|law|act|bill|plan|programme|program|council|commission|"
          r"committee|group|movement|party|operation|initiative|process|talks|summit|conference|"
          r"organi[sz]ation|agency|body|force|alliance|system|board|court|tribunal|mission|campaign|office")
_DEFINE = re.compile(r"^(?i:who|what)\s+(?i:is|are|was|were)\s+(?:the\s+|an?\s+)?((?:[A-Z][\w.'’-]*\s*)+"
                     rf"(?:(?:{_NOUNS})s?)?|(?:[\w'’-]+\s+){{0,2}}(?:{_NOUNS})s?)\s*\?*$")
# "Which towns were hit?", "What factors might have contributed?": a plural thing asked for, many answers.
_PLURAL = re.compile(r"^(?:what|which)\s+(?:(?!one|two|three|four|five|six|seven|eight|nine|ten)[a-z-]+\s+)?"
                     r"[a-z-]{3,}[^s\W]s\s+(?:are|were|have|has|had|do|did|will|would|could|can|might|may|must|"
                     r"should|stand|remain|face|lie)\b")
# What "can you …" asks someone to do: a request, not a yes/no question ("Can you still visit the park?").
_ASKS = (r"tell|give|list|explain|summari[sz]e|sum|describe|compare|contrast|name|outline|show|recap|walk|"
         r"break|catch|brief|update|provide|share|define|enumerate|help")
# What opens a request without asking anything: a word of talk ("OK, …", "Briefly, …"; not "Now that
# …"), a courtesy ("Please …", "Could you (please) …", "Can I get …"), and "tell me" before the question
# it wraps ("Could you tell me why the park closed?").
_OPENERS = (r"(?:so|ok|okay|well|now|hey|hi|right|briefly|quickly|basically|in short|in brief|"
            r"in a nutshell)\b(?!\s+that\b),?\s+")
_POLITE = (rf"please,?\s+|(?:can|could|would|will)\s+(?:you|u)\s+(?:please\s+)?(?=(?:{_ASKS})\b)|"
           r"can (?:i|we) (?:get|have|see)\s+")
_WRAPS = r"(?:tell|show) (?:me|us)\s+(?=(?:what|why|how|who|when|where|whether|if)\b)"
_COURTESY = re.compile(rf"^(?:{_OPENERS}|{_POLITE}|{_WRAPS})", re.IGNORECASE)
_CONTRACTED = re.compile(r"\b(what|who|where|how)(?:[’']s|s)\b", re.IGNORECASE)  # "whats": "what is"
_TRAILING = re.compile(r"(?:,?\s+please|\s+for (?:me|us))(?=\s*[?.!]*$)", re.IGNORECASE)  # "…, please?"
# A request for more of the last answer ("Tell me more", "What else?", "Go on"): a word asking for more,
# and no word but the words of chat (thanks, ok, tell, know, details, this story…): nothing it names.
_MORE = re.compile(r"\b(?:more|moar|else|other|further|deeper|everything|rest|go(?:ing)? on|cont\b\.?|"
                   r"keep (?:going|on|it coming|(?:th)?em coming)|continu\w*|carry on|elaborat\w*|expand\w*|"
                   r"fill (?:me|us) in|you (?:left out|skipped|missed)|(?:is )?that(?:'s| is)? (?:all|it))\b|"
                   r"\band\s*[?.!]*$", re.IGNORECASE)
# A yes/no question about someone or something of the story ("Will it continue?", "Did they go on?")
# asks about the story, not for more of the answer; "Can you go on?", "Is there more?" do.
_ASKS_ABOUT = re.compile(r"^(?:will|would|did|does|do|is|are|was|were|has|have|had|can|could|should)\s+"
                         r"(?:it|they|he|she|we|them|his|her|their|its)\b", re.IGNORECASE)
_CHAT = ("thanks thank you thx ty ok okay hmm hm huh wow oh ah interesting great cool nice sure yeah yes "
         "alright right fine got it go going keep coming come continue carry elaborate expand dig deep "
         "deeper fill add tell say share give show know hear like love want mind listen listening detail "
         "details info information story stories article articles report reports news bit little please "
         "pls plz something anything everything nothing else more moar further point em I'm I'd don't "
         "sorry possible if u ur rest other others cont left skipped missed")
_WHY = re.compile(r"^(?:why\b|for what reason\b|what (?:is|was|are|were) the (?:reasons?|causes?|motives?)\b|"
                  r"what (?:caused|led to|prompted|drove)\b)")


@dataclass(frozen=True)
class Form:
    """A kind's patterns, and the patterns of its scaffolding (not its topic)."""

    kind: str
    patterns: tuple[re.Pattern[str], ...]
    prefixes: tuple[re.Pattern[str], ...]


def _forms() -> list[Form]:
    data = tomllib.loads(FORMS_FILE.read_text("utf-8"))
    return [Form(kind, tuple(map(re.compile, f["patterns"])), tuple(map(re.compile, f.get("prefix", ()))))
            for kind, f in data.items()]


FORMS = _forms()


def request(text: str) -> str:
    """The question a request wraps, without its courtesies ("OK, could you please list the demands for
    me?": "List the demands?"); the text itself when it has none."""
    if not rules.on("question.requests"):
        return text
    rest = _TRAILING.sub("", text.strip())
    while (m := _COURTESY.match(rest)) and m.end() < len(rest):
        rest = rest[m.end():]
    if rest == text.strip():
        return text
    return rest[:1].upper() + rest[1:]


def more(text: str) -> bool:
    """Whether a question only asks for more of the last answer ("Tell me more.", "What else?")."""
    if not rules.on("question.more") or _ASKS_ABOUT.match(request(text).strip()):
        return False
    return _MORE.search(text) is not None and set(tokenize(text)) <= _chat()


@cache
def _chat() -> frozenset[str]:
    """The stems of the words of chat, which name nothing a question could be about."""
    return frozenset(tokenize(_CHAT))


def _expanded(text: str) -> str:
    """The text with "what's" as "what is" (and, typed without its apostrophe, "whats")."""
    return _CONTRACTED.sub(r"\1 is", text) if rules.on("question.requests") else text


def kind_of(text: str, expects: str) -> str:
    """The kind of a question's asking sentence (as written), given what its wh-word expects."""
    lower = _expanded(re.sub(r"\b(what|who|where|how)[’']s\b", r"\1 is", text.strip().lower()))
    if rules.on("question.broad_kinds"):
        for form in FORMS:
            if form.kind == "said" and not rules.on("question.said"):
                continue
            if any(p.search(lower) for p in form.patterns):
                return form.kind
        if _DEFINE.match(text.strip()):
            return "define"
        if _PLURAL.match(lower):
            return "list"
    elif rules.on("question.said") and SAID.match(lower):
        return "said"
    if expects == "reason" or _WHY.match(lower):
        return "why"
    return "how" if expects == "manner" else "factoid"


def topic_of(text: str, kind: str) -> str:
    """The question without the words that only ask ("Summarize the Taliban's reaction" -> "the
    Taliban's reaction"); "" when nothing is left ("What is this news about?")."""
    rest = _expanded(text.strip())  # "What's the latest on …": "What is the latest on …"
    if kind == "define" and (m := _DEFINE.match(rest)):
        return rest[m.start(1):].strip(" ?.!:")
    for form in FORMS:
        if form.kind == kind:
            for prefix in form.prefixes:
                if m := prefix.match(rest.lower()):
                    rest = rest[m.end():]  # lower() keeps the length: cut the text as written
    return rest.strip(" ?.!:")
