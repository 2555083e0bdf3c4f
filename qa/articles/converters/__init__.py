"""Converters: one file's bytes in, its articles out (one per file, one per entry of a feed).

Enters: a file name (its suffix picks the converter, ``registry.py``) and the file's bytes.
Leaves: ``Extracted`` records, each the article's canonical plain text (what is indexed, cited and
shown; offsets refer to it) with its title, date (``YYYY-MM-DD``), author and URL, None when unknown.
A file that cannot give an article raises ``ArticleError`` with one line naming the file and why;
one whose text passes ``limit`` characters raises it as soon as the converter has read that much,
never after extracting it all (a compressed Word or PDF file can expand a thousandfold). Converters
other than plain text run in a worker process with memory and CPU limits (``qa/articles/bounded.py``).
The format libraries (trafilatura, pypdf, python-docx, feedparser) are imported on first use.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from qa.errors import ArticleError

# The text a file may give, all its articles together: about what 1 MB of plain text holds.
MAX_TEXT_CHARS = 1_000_000
_ISO = re.compile(r"(\d{4})-(\d{2})-(\d{2})")
_MONTHS = {m: n for n, m in enumerate(("jan feb mar apr may jun jul aug sep oct nov dec").split(), 1)}
_MONTH = r"(?P<m{0}>(?:jan|feb|mar|apr|may|jun|jul|aug|sep|sept|oct|nov|dec)[a-z]*\.?)"
# A dateline as news writes it: "March 11, 2020", "11 March 2020", "Mar. 11 2020", "2020-03-11".
_WRITTEN = re.compile(rf"\b(?:{_MONTH.format(1)}\s+(?P<d1>\d{{1,2}}),?\s+(?P<y1>(?:19|20)\d\d)"
                      rf"|(?P<d2>\d{{1,2}})\s+{_MONTH.format(2)},?\s+(?P<y2>(?:19|20)\d\d)"
                      r"|(?P<y3>(?:19|20)\d\d)-(?P<m3>\d\d)-(?P<d3>\d\d))(?!\d)", re.I)
# Where an article says its own date: in its first lines (dateline, byline), not anywhere in it.
DATELINE_CHARS = 600


@dataclass(frozen=True)
class Extracted:
    """One article's canonical text and metadata, as a converter found them."""

    text: str
    title: str | None = None
    date: str | None = None
    author: str | None = None
    url: str | None = None
    # Set for a feed entry: the entry's number in its feed, so each has its own source name.
    entry: int | None = None
    # The file's own creation date (a PDF's or Word file's), kept only when the article's is
    # unknown: shown as the file's, never read as the article's (a PDF printed today is not news
    # of today).
    file_date: str | None = None


def iso_date(value: object) -> str | None:
    """A date as YYYY-MM-DD from a datetime, a struct_time or text starting with one; else None."""
    if isinstance(value, dt.datetime | dt.date):
        return value.strftime("%Y-%m-%d")
    if hasattr(value, "tm_year"):
        return f"{value.tm_year:04d}-{value.tm_mon:02d}-{value.tm_mday:02d}"  # type: ignore[attr-defined]
    if isinstance(value, str) and (m := _ISO.search(value)):
        try:
            return dt.date(int(m[1]), int(m[2]), int(m[3])).isoformat()
        except ValueError:
            return None
    return None


def text_date(text: str) -> str | None:
    """The first date written near the top of an article's text (YYYY-MM-DD), or None."""
    for found in _WRITTEN.finditer(text[:DATELINE_CHARS]):
        year, month, day = next((found[f"y{n}"], found[f"m{n}"], found[f"d{n}"]) for n in (1, 2, 3)
                                if found[f"y{n}"])
        number = int(month) if month.isdigit() else _MONTHS.get(month[:3].lower())
        try:
            return dt.date(int(year), number or 0, int(day)).isoformat()
        except ValueError:
            continue
    return None


def clean(value: object) -> str | None:
    """Text metadata with whitespace collapsed, or None when it is empty or not text."""
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text or None


def too_long(name: str, limit: int) -> ArticleError:
    """The refusal of a file whose text passes limit characters."""
    return ArticleError(f"{name}: expands to more than {limit:,} characters of text (the limit per file); "
                        "split it into smaller files")
