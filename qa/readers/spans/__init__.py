"""The span reader: every entity and noun chunk of the best sentences, ranked by a logistic model.

``reader.py`` reads, ``candidates.py`` lists the spans of a sentence, ``ranker.py`` scores and
calibrates them (``ranker.json``), ``types.py`` holds the learned label prior (``types.json``).
"""
