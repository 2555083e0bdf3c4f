"""Embedding: texts to unit vectors, on sentence-transformers or its ONNX export.

Enters: lists of texts (and, for pooling, character spans inside them). Leaves: float32
arrays of unit vectors. ``base.py`` is the interface; ``transformer.py`` and ``onnx_runtime.py``
implement it; ``export.py`` makes the ONNX files; ``pooling.py`` averages token vectors over
sentence spans so one pass over a chunk also gives its sentences.
"""
