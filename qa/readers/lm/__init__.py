"""The language-model reader: excerpts of the best sentences, a small model's phrase, found word for word.

``reader.py`` reads, ``excerpts.py`` chooses what it reads, ``prompt.py`` writes the messages
(``prompt.toml``), ``locate.py`` finds the phrase in a sentence, ``calibration.py`` turns token
log-probabilities into its confidence (``calibration.json``), ``choice.py`` weighs lettered options.
"""
