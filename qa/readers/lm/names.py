"""People's names in a sentence: the whole name a phrase the model wrote is part of."""

from __future__ import annotations

from qa.sentences.record import Sentence
from qa.text.normalise import without_possessive
from qa.text.words import WORD


def people(sentence: Sentence) -> list[tuple[int, int]]:
    """The people the tagger found in a sentence, in sentence offsets."""
    offset = sentence.start
    return [(t[0] - offset, t[1] - offset) for t in sentence.tags if t[2] == "PERSON"]


def whole_name(sentence: Sentence, a: int, b: int) -> tuple[int, int] | None:
    """The person's name (sentence offsets) that sentence.text[a:b] is part of, or None."""
    text = sentence.text
    whole = next(((s, e) for s, e in people(sentence) if s <= a and b <= e), None)
    if whole is None:
        return None
    start, end = whole
    # The tagger's name may take the possessive along ("Vladimir Putin's"), and the small tagger
    # calls "bar al-Qaeda" a person: only capitalised words are added to a name.
    end = max(b, start + len(without_possessive(text[start:end])))
    added = WORD.findall(text[start:a] + " " + text[b:end])
    return (start, end) if all(w[0].isupper() for w in added) else None
