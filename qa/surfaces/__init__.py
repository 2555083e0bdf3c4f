"""What users touch: the ``qa`` command line and the chat's sign-in and rate limits.

Enters: commands, HTTP requests. Leaves: answers as text, JSON or HTML. The chat page
itself is built in ``chat.py``; ``app.py`` at the top of the repository launches it.
"""
