"""Optional generation: a local LLM rewrites the answer, and every generated sentence is verified.

Enters: an extractive ``Answer`` and its passages. Leaves: an ``Answer`` whose sentences
each cite a passage that supports them (``verify.py``), streamed (``generate.py``).
"""
