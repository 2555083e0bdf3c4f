"""Articles in: files of every supported format (and checked uploads) become ``Article``s.

Enters: files in the articles folder, or uploaded bytes. ``converters/`` turns each format into
canonical text with title, date, author and URL; ``load.py`` makes ``Article``s (with a hash) and
keeps extractions next to the index; ``uploads.py`` writes accepted uploads into the folder under a lock.
"""
