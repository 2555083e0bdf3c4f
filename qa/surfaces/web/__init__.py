"""The chat server: the page (``page.py``) and its events (``chat.py``), the HTML it shows
(``render.py``, ``cards.py``), sign-in (``auth.py``, ``throttle.py``), limits (``limits.py``) and
the guard in front of Gradio's routes (``guard/``); ``launch.py`` serves it."""
