"""Articles in: text files (and checked uploads) become ``Article``s with a title, a source name and a hash.

Enters: files in the articles folder, or uploaded bytes. Leaves: ``Article`` (``load.py``);
``uploads.py`` writes accepted uploads into the folder under a lock.
"""
