"""Every threshold an answer is decided by, named once: a frozen policy built from the settings."""

from __future__ import annotations

from dataclasses import dataclass

from qa.config import Config, ReaderName


@dataclass(frozen=True)
class AnswerPolicy:
    """When to refuse, when to show the short answer, and how the cited sentences are grouped."""

    # The settings' thresholds take Config's defaults, named there once; from rival_short on they
    # are the policy's own.
    # Passages an answer cites from (QA_K), passages the reader's sentences are ranked from
    # (QA_READ_K), and the longest question read (QA_MAX_QUESTION_CHARS).
    k: int = Config.k
    read_k: int = Config.read_k
    max_question_chars: int = Config.max_question_chars
    # Below this evidence score: "The articles don't cover this." (QA_MIN_EVIDENCE, eval's calibrate).
    min_evidence: float = Config.min_evidence
    # A question naming something no retrieved passage mentions is refused below this evidence
    # score (QA_HINGE_EVIDENCE, eval's calibrate).
    hinge_evidence: float = Config.hinge_evidence
    # The short answer is shown from this calibrated confidence of the reader in it (QA_MIN_SHORT).
    min_short: float = Config.min_short
    # The same for the language model's phrase, on its own calibration (QA_READER_MIN_SHORT).
    reader_min_short: float = Config.reader_min_short
    # The language model's no-answer score from which it refuses (QA_READER_DECLINE, eval's fit-lm).
    decline: float = Config.reader_decline
    # A dated rival's span is shown as its short answer from this probability of the span reader:
    # its raw probability, not a calibrated doubt, since between dated articles a different value
    # is explained by the dates.
    rival_short: float = 0.4
    # Facts are grouped from the best this many sentences; a sentence scoring under ``near`` times
    # the best one answers nothing (for grouping and for dated rivals alike).
    fact_window: int = 12
    near: float = 0.8
    # Two sentences state the same fact from this cosine of their vectors; a second fact is told
    # from ``second_fact`` times the best score, and at most ``max_facts`` are.
    same_fact: float = 0.85
    second_fact: float = 0.9
    max_facts: int = 2
    # Without a typed short answer, a dated rival must say nearly the same thing as the lead (cosine).
    similar_rival: float = 0.7

    def shows_from(self, reader: ReaderName) -> float:
        """The confidence from which this reader's short answer is shown."""
        return self.reader_min_short if reader == ReaderName.LM else self.min_short

    @classmethod
    def from_config(cls, config: Config) -> AnswerPolicy:
        """The policy with the thresholds the settings hold."""
        return cls(k=config.k, read_k=config.read_k, max_question_chars=config.max_question_chars,
                   min_evidence=config.min_evidence,
                   hinge_evidence=config.hinge_evidence, min_short=config.min_short,
                   reader_min_short=config.reader_min_short,
                   decline=config.reader_decline)
