"""Which converter reads which file, by suffix."""

from __future__ import annotations

from collections.abc import Callable
from importlib import import_module

from qa.articles.converters import Extracted
from qa.errors import ArticleError

# Suffix -> converter module; each module has convert(name, data, limit) -> list[Extracted].
CONVERTERS = {
    ".txt": "plain", ".md": "plain",
    ".html": "web", ".htm": "web",
    ".pdf": "pdf",
    ".docx": "word",
    ".xml": "feed", ".rss": "feed", ".atom": "feed",
}
SUFFIXES = tuple(CONVERTERS)
# Files whose text is stored next to the index so that a rebuild does not extract them again.
EXTRACTED = frozenset(s for s, m in CONVERTERS.items() if m != "plain")
# Bumped when a converter's output changes, so stored extractions are made again.
VERSION = 2


def module_for(name: str) -> str:
    """The converter module's name for a file name, or ArticleError naming the formats that are read."""
    suffix = "." + name.rsplit(".", 1)[-1].lower() if "." in name else ""
    module = CONVERTERS.get(suffix)
    if module is None:
        raise ArticleError(f"{name}: unknown format {suffix or '(no suffix)'}; "
                           f"articles can be {', '.join(SUFFIXES)}")
    return module


def converter(name: str) -> Callable[[str, bytes, int], list[Extracted]]:
    """The convert function for a file name, or ArticleError naming the formats that are read."""
    return import_module(f"qa.articles.converters.{module_for(name)}").convert
