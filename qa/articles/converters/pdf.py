"""PDF files: pypdf's text of every page; title, author and date from the document information."""

from __future__ import annotations

import io
import logging
from collections.abc import Mapping
from typing import Any

from qa.articles.converters import MAX_TEXT_CHARS, Extracted, clean, iso_date, text_date, too_long
from qa.errors import ArticleError

# pypdf logs a warning for every odd object in a damaged file; the refusal says it once.
logging.getLogger("pypdf").setLevel(logging.ERROR)


# A line at least this share of the page's line width, not ending a sentence, wraps onto the next.
WRAP = 0.8
_END = tuple('.!?:;"”’)')


def reflow(page: str) -> str:
    """A page's lines rejoined into paragraphs (a blank line between): PDF text breaks every line."""
    lines = [" ".join(line.split()) for line in page.splitlines()]
    lines = [line for line in lines if line]
    if not lines:
        return ""
    lengths = sorted(len(line) for line in lines)
    width = lengths[int(0.9 * (len(lengths) - 1))]
    out = lines[0]
    for prev, line in zip(lines, lines[1:], strict=False):
        wraps = len(prev) >= WRAP * width and not prev.endswith(_END)
        if wraps and prev.endswith("-") and prev[-2:-1].isalpha() and line[:1].islower():
            out = out[:-1] + line  # a word broken by a hyphen at the line end
        else:
            out += (" " if wraps else "\n\n") + line
    return out


def _join(pages: list[str]) -> str:
    """The pages' paragraphs, a blank line between each."""
    return "\n\n".join(text for page in pages if (text := reflow(page)))


class _Enough(Exception):
    """Raised from inside pypdf's text extraction once the page has given more than it may."""


def _page_text(page, room: int) -> str:  # a pypdf PageObject
    """One page's text, stopping pypdf as soon as it has produced more than room characters."""
    produced = 0

    def count(text: str, *_: object) -> None:
        nonlocal produced
        produced += len(text)
        if produced > room:
            raise _Enough

    return page.extract_text(visitor_text=count) or ""


def convert(name: str, data: bytes, limit: int = MAX_TEXT_CHARS) -> list[Extracted]:
    """The PDF's text and document information, or ArticleError when it is encrypted or has no text layer."""
    import pypdf  # lazily: only when such a file is read
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ArticleError(f"{name}: the PDF is encrypted; save an unprotected copy and add that")
        pages: list[str] = []
        for page in reader.pages:
            pages.append(_page_text(page, limit - sum(map(len, pages))))
        info: Mapping[str, Any] = reader.metadata or {}
    except ArticleError:
        raise
    except _Enough:
        raise too_long(name, limit) from None
    except pypdf.errors.LimitReachedError as exc:
        # pypdf's own guards: a stream that decompresses past 75 MB, or a page of millions of operators.
        raise ArticleError(f"{name}: the PDF expands past what its reader allows ({exc}); "
                           "it may be a compressed bomb, or save a smaller copy") from None
    except Exception as exc:  # pypdf raises many kinds on a damaged file
        raise ArticleError(f"{name}: not a readable PDF ({type(exc).__name__})") from exc
    text = _join(pages)
    if not any(ch.isalnum() for ch in text):
        raise ArticleError(f"{name}: the PDF has no text layer (scanned images only?); "
                           "add a PDF with selectable text")
    title = clean(info.get("/Title"))
    created = None
    for key in ("/CreationDate", "/ModDate"):
        raw = info.get(key)
        if raw and created is None:
            created = iso_date(f"{raw[2:6]}-{raw[6:8]}-{raw[8:10]}" if str(raw).startswith("D:") else raw)
    # The document information's date is when the file was made (printed, exported): the article's
    # own is the one its text gives.
    date = text_date(text)
    return [Extracted(text + "\n", title, date, clean(info.get("/Author")),
                      file_date=None if date else created)]
