"""Retrieval: a question (and the chat history) to scored chunks of the index.

Enters: a question string and an ``Index``. Leaves: ranked chunk ids with scores, as
``Passage``s (``retrieve.py``); ``followup.py`` rewrites a follow-up with its history's topic.
"""
