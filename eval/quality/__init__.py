"""The hand-written question set: the harness that asks it through ``QA.answer``, its metrics, the
refusal thresholds fitted on it, and the search of the sentence-scoring weights."""
