"""Saved web pages: trafilatura keeps the main text (no menus, ads or footers) and the page's metadata."""

from __future__ import annotations

from qa.articles.converters import MAX_TEXT_CHARS, Extracted, clean, iso_date
from qa.errors import ArticleError

MIN_WORDS = 8


def html_text(name: str, html: str | bytes) -> Extracted:
    """The main text and metadata of one HTML document, or ArticleError when it has no main text."""
    import trafilatura  # lazily: only when such a file is read
    if not (html.strip() if isinstance(html, str) else html.strip()):
        raise ArticleError(f"{name}: the page is empty")
    try:
        doc = trafilatura.bare_extraction(html, with_metadata=True, include_comments=False,
                                          include_tables=True, favor_precision=True, output_format="python")
    except Exception as exc:  # lxml and trafilatura raise many kinds on broken pages
        raise ArticleError(f"{name}: the page could not be read ({type(exc).__name__})") from exc
    fields = doc if isinstance(doc, dict) else (doc.as_dict() if doc is not None else {})
    # One paragraph per line in trafilatura's text; a blank line between keeps a headline its own sentence.
    text = "\n\n".join(line.strip() for line in (fields.get("text") or "").splitlines() if line.strip())
    # trafilatura falls back to whatever text there is, a menu's "Home" included: too few words is none.
    if len(text.split()) < MIN_WORDS:
        raise ArticleError(f"{name}: no main text found in the page (only menus, links or scripts?)")
    # A page without a byline is credited to its site ("Reuters").
    author = clean(fields.get("author")) or clean(fields.get("sitename"))
    return Extracted(text + "\n", clean(fields.get("title")), iso_date(fields.get("date")),
                     author.replace(";", ",") if author else None, clean(fields.get("url")))


def convert(name: str, data: bytes, limit: int = MAX_TEXT_CHARS) -> list[Extracted]:
    """The article of a saved page (.html, .htm); its text is never longer than the page."""
    return [html_text(name, data)]
