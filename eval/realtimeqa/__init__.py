"""RealTime QA 2022 and 2025: each question answered over its own search results through
``QA.answer`` and ``QA.choose``, its record logged, the records summarised."""
