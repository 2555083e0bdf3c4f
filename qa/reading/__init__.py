"""Reading and answering: which sentences answer, which span is the short answer, or a refusal.

Enters: retrieved chunks and the question. Leaves: an ``Answer`` (``compose.py``) whose
sentences are cited ``Passage``s. ``question.py`` parses what the question asks for,
``candidates.py`` lists spans, ``reader.py`` scores them, ``coverage.py`` decides refusals.
"""
