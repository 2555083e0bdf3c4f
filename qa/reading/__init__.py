"""Reading: typed spans of the retrieved sentences ranked into a short answer, or a refusal.

In: the question and the answerer's scored sentences, with the entity spans and noun chunks the
build tagged (annotations.json). Out: the short answer's exact span and its calibrated
probability, the no-answer probability, and whether the evidence covers the question at all.
"""
