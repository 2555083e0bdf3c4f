"""Text analysis: sentences, chunks and spaCy tags, with character offsets into the article.

Enters: an ``Article``'s text. Leaves: sentence spans (``sentences.py``), ``Chunk``s
(``chunk.py``), entity and noun-chunk ``Span``s (``nlp.py``), and the word stems every
lexical comparison uses (``words.py``).
"""
