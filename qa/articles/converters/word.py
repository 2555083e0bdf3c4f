"""Word files (.docx): python-docx's paragraphs and the document's core properties."""

from __future__ import annotations

import io

from qa.articles.converters import Extracted, clean, iso_date
from qa.errors import ArticleError


def convert(name: str, data: bytes) -> list[Extracted]:
    """The document's paragraphs (one per line, blank lines dropped), title, author and date."""
    import docx  # lazily: only when such a file is read
    try:
        document = docx.Document(io.BytesIO(data))
        paragraphs = [" ".join(p.text.split()) for p in document.paragraphs]
        props = document.core_properties
        title, author, created = props.title, props.author, props.created
    except Exception as exc:  # noqa: BLE001 - a damaged zip or XML raises many kinds
        raise ArticleError(f"{name}: not a readable Word file ({type(exc).__name__})") from exc
    text = "\n\n".join(p for p in paragraphs if p)
    if not any(ch.isalnum() for ch in text):
        raise ArticleError(f"{name}: the document has no text")
    return [Extracted(text + "\n", clean(title), iso_date(created), clean(author))]
