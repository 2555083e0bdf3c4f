"""The cluster stage: build and serve the index on a Ray cluster (the optional `cluster` extra).

In: a corpus (a folder of articles, or JSON Lines / Parquet rows ``id, title, text[, date, url]``),
the settings, and a Ray address. Out: the same index folder as ``qa build`` writes (plus its
chunk vectors in checksummed shards, named in meta.json), and an HTTP service (POST /ask,
POST /search, GET /health) run by Ray Serve replicas over that folder. Nothing here imports
Ray at module level: ``import qa`` and ``qa --help`` never load it.
"""
