"""Which sentence gives a reason: a word of cause or condition that is not the question's own."""

from __future__ import annotations

import pytest

from qa.answering.reasons import gives_reason

QUESTION = "Why did the Taliban reject the Afghan government's offer?"


@pytest.mark.parametrize(("sentence", "reason"), [
    # Words of obligation and demand were reasons once, for two hand-written questions; the rule
    # did nothing on RealTime QA 2025 and is gone (docs/evaluation.md, the rules' ablation).
    ('Shaheen said 5,000 prisoners "should be released" before the talks.', False),
    ("The group refused to budge from a longstanding demand.", False),
    ("The talks were put off due to the dispute over prisoners.", True),
    ("Talks stalled because the lists did not match.", True),
    ("The Taliban rejected the Afghan government's offer on Wednesday.", False),  # the question again
    ("The Taliban met in Doha on Tuesday.", False),
])
def test_a_reason_is_a_word_of_cause_the_question_does_not_say(sentence: str, reason: bool) -> None:
    assert gives_reason(sentence, QUESTION) is reason
