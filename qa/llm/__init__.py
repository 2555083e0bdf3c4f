"""The language models: the reader's file, assembled once per machine from pinned PyPI parts, the
runtimes that run a model, and the fair queue in front of it.

``base.py`` is the Runtime protocol; ``llama.py`` runs llama.cpp in process (xllamacpp),
``openai_compat.py`` a model behind an OpenAI-compatible server, ``runtimes.py`` picks one from the
settings; ``queue.py`` takes jobs in turn across users; ``model_file.py`` joins the packaged GGUF.
"""
