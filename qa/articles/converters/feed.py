"""RSS and Atom feed files: one article per entry; HTML entries go through the web page converter."""

from __future__ import annotations

from qa.articles.converters import MAX_TEXT_CHARS, Extracted, clean, iso_date
from qa.articles.converters.web import html_text
from qa.errors import ArticleError

# A feed may add many articles at once; more entries than this in one file is refused.
MAX_ENTRIES = 200


def _body(entry: dict) -> tuple[str, str]:
    """The entry's fullest text (content, else summary) and its MIME type."""
    for item in entry.get("content") or []:
        if item.get("value", "").strip():
            return item["value"], item.get("type", "text/html")
    detail = entry.get("summary_detail") or {}
    return entry.get("summary", ""), detail.get("type", "text/html")


def _html(name: str, body: str) -> str:
    """An HTML entry's text: the page converter's main text, or (a one-line summary) all its text."""
    inner = body if "<p" in body.lower() else f"<p>{body}</p>"
    page = f"<html><body><article>{inner}</article></body></html>"
    try:
        return html_text(name, page).text
    except ArticleError:
        from lxml import html

        # Too short for trafilatura to call it main text: a summary of a line or two.
        try:
            root = html.fromstring(page)
        except Exception:  # lxml raises several kinds on garbage
            return ""
        for junk in root.xpath("//script|//style"):
            junk.drop_tree()
        return " ".join(root.text_content().split()) + "\n"


def convert(name: str, data: bytes, limit: int = MAX_TEXT_CHARS) -> list[Extracted]:
    """One Extracted per entry that has text; ArticleError when the file is not a feed or has none.

    Entities are never expanded, so the entries' text is never longer than the feed.
    """
    import feedparser  # lazily: only when such a file is read
    parsed = feedparser.parse(data)
    entries = parsed.get("entries") or []
    if not entries:
        why = type(parsed.bozo_exception).__name__ if parsed.get("bozo") else "no entries"
        raise ArticleError(f"{name}: not an RSS or Atom feed with entries ({why})")
    if len(entries) > MAX_ENTRIES:
        raise ArticleError(f"{name}: {len(entries)} entries is over the {MAX_ENTRIES} per feed limit; "
                           "split the feed")
    author_default = clean(parsed.get("feed", {}).get("author"))
    out = []
    for n, entry in enumerate(entries, 1):
        body, kind = _body(entry)
        title = clean(entry.get("title"))
        text = _html(f"{name} entry {n}", body) if "html" in kind else body.strip() + "\n"
        if not any(ch.isalnum() for ch in text):
            continue
        date = iso_date(entry.get("published_parsed") or entry.get("updated_parsed"))
        # RSS writes "desk@example.org (Wire desk)": feedparser's author_detail holds the name alone.
        author = clean((entry.get("author_detail") or {}).get("name")) or clean(entry.get("author")) \
            or author_default
        out.append(Extracted(text, title, date, author, clean(entry.get("link")), entry=n))
    if not out:
        raise ArticleError(f"{name}: no entry of the feed has any text")
    return out
