"""Every notice an answer can carry, in one place: a code for programs (``Answer.notice_code``) and
the words a reader sees (``Answer.notice``). The words say what happened and what the reader can do,
never how the product works inside; the log keeps the details."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Notice:
    """One notice: its code, and its text (``{names}``, ``{what}``, ``{seconds}`` filled in when shown)."""

    code: str
    text: str
    refusal: bool = False  # it explains why the question was not answered


NOTICES = {n.code: n for n in (
    # Refusals.
    Notice("not_covered", "Nothing in the articles comes close enough to this question. Try other words, "
           "or ask about something the articles report.", True),
    Notice("not_english", "Please ask in English: the articles and the reader are in English.", True),
    Notice("no_figure", "The articles touch on this, but none of them gives {what}.", True),
    Notice("names_missing", "No article mentions {names}.", True),
    Notice("not_said", "The articles mention {names}, but none of them reports what {names} said.", True),
    Notice("no_answer", "The articles touch on this topic, but none of their sentences answers the "
           "question.", True),
    Notice("no_more", "The articles say nothing more about this than the answers above. Ask about "
           "another part of the story.", True),
    # Answers without a short answer.
    Notice("no_phrase", "The articles mention this, but no sentence names a short answer; here is what "
           "they say."),
    Notice("unsure", "The articles mention this, but the short answer is uncertain, so it is not "
           "shown; here is what they say."),
    Notice("by_sentences", "The sentences below answer this; it has no answer in a few words."),
    Notice("stopped", "You stopped waiting: here are the sentences found so far, without a short answer."),
    # The language model could not read in time, or at all: a quicker reader answered.
    Notice("model_busy", "Many questions are waiting for the reading model, so a quicker reader picked "
           "the short answer; ask again in a minute for the model's reading."),
    Notice("model_slow", "The reading model took longer than {seconds} s, so a quicker reader picked the "
           "short answer; ask again for the model's reading."),
    Notice("model_missing", "The reading model is not installed on this server, so a quicker reader picked "
           "the short answer; whoever runs it can install the model with `make setup`."),
    Notice("model_failed", "The reading model failed on this question, so a quicker reader picked the short "
           "answer."),
    # A written answer (--llm) that could not be shown.
    Notice("writer_failed", "The writing model did not answer, so the answer is made of the articles' "
           "own sentences."),
    Notice("writer_unverified", "None of the written answer's sentences could be checked against the "
           "articles, so the answer is made of their own sentences."),
)}


# The notices saying a quicker reader stood in for the language model, and the words all of them share.
FALLBACK_CODES = frozenset({"model_busy", "model_slow", "model_missing", "model_failed"})
FALLBACK = "a quicker reader picked the short answer"


def say(code: str, **values: object) -> str:
    """The words of a notice, its blanks filled."""
    return NOTICES[code].text.format(**values)
