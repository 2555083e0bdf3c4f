"""PDF files: pypdf's text of every page; title, author and date from the document information."""

from __future__ import annotations

import io
import logging
import re

from qa.articles.converters import Extracted, clean, iso_date
from qa.errors import ArticleError

# pypdf logs a warning for every odd object in a damaged file; the refusal says it once.
logging.getLogger("pypdf").setLevel(logging.ERROR)


def _join(pages: list[str]) -> str:
    """Pages joined by a blank line, lines stripped, words broken by a hyphen at a line end rejoined."""
    text = "\n\n".join(p.strip() for p in pages if p.strip())
    text = re.sub(r"(\w)-\n(\w)", r"\1\2", text)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text)


def convert(name: str, data: bytes) -> list[Extracted]:
    """The PDF's text and document information, or ArticleError when it is encrypted or has no text layer."""
    import pypdf  # lazily: only when such a file is read
    try:
        reader = pypdf.PdfReader(io.BytesIO(data))
        if reader.is_encrypted:
            raise ArticleError(f"{name}: the PDF is encrypted; save an unprotected copy and add that")
        pages = [page.extract_text() or "" for page in reader.pages]
        info = reader.metadata or {}
    except ArticleError:
        raise
    except Exception as exc:  # noqa: BLE001 - pypdf raises many kinds on a damaged file
        raise ArticleError(f"{name}: not a readable PDF ({type(exc).__name__})") from exc
    text = _join(pages)
    if not any(ch.isalnum() for ch in text):
        raise ArticleError(f"{name}: the PDF has no text layer (scanned images only?); "
                           "add a PDF with selectable text")
    title = clean(info.get("/Title"))
    date = None
    for key in ("/CreationDate", "/ModDate"):
        raw = info.get(key)
        if raw and date is None:
            date = iso_date(f"{raw[2:6]}-{raw[6:8]}-{raw[8:10]}" if str(raw).startswith("D:") else raw)
    return [Extracted(text + "\n", title, date, clean(info.get("/Author")))]
