"""Every measurement of the product, by kind: ``quality/`` (the hand-written set), ``realtimeqa/``
(RealTime QA 2022 and 2025), ``perf/`` (speed, scale, load, faults, clusters), ``fit/`` (the files
the package ships, fitted), ``report/`` (report.md and the figures the docs quote). Run them
with ``python -m eval COMMAND``; ``paths.py`` says where they read and write, ``progress.py``
how they show it."""
