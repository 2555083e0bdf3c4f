"""The index folder: dense vectors, BM25, annotations and meta.json, built incrementally, loaded checked.

Enters: ``Article``s and an ``Embedder`` (``build.py``, ``vectors.py``, ``write.py``).
Leaves: an ``Index`` (``load.py``) holding chunks, sentences, their vectors, a FAISS index
(``dense.py``), BM25 and term weights (``lexical.py``) and spaCy spans (``annotations.py``).
"""
