"""Loaded at start-up by every Python process the tests start (their PYTHONPATH names this folder):
where PYTEST_QA_REPLIES names the run's folder of replies, the real model's replies are kept there
and a prompt already read in this run, by any process, is answered from it (see replayed.py)."""

import os

if os.environ.get("PYTEST_QA_REPLIES"):
    import replayed

    replayed.install(os.environ["PYTEST_QA_REPLIES"])
