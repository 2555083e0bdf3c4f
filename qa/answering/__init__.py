"""Answering: which sentences answer, cited exactly, led by the reader's short answer, or a refusal.

Enters: the question, the retriever's passages and the readers. Leaves: an ``Answer``
(``compose.py``). ``scoring.py`` ranks the sentences, ``coverage.py`` decides refusals,
``cite.py`` groups and cites the facts, ``recency.py`` orders dated answers, and ``policy.py``
holds every threshold.
"""
