"""Source cards: a cited passage with its sentence marked, its article's byline, safe links."""

from __future__ import annotations

from html import escape
from urllib.parse import urlsplit

import qa
from qa.articles.load import Article
from qa.passage import shown_date

# Characters of the article shown around a cited sentence, and at most of the whole article.
CONTEXT_CHARS = 220
FULL_CHARS = 20_000


def esc(text: str) -> str:
    """HTML-escape untrusted text; also neutralise Markdown link syntax for any Markdown renderer."""
    return escape(text, quote=True).replace("[", "&#91;").replace("]", "&#93;")


def link(url: str | None, label: str = "link") -> str:
    """A link that opens in a new tab, for http and https URLs only; "" for anything else."""
    url = (url or "").strip()
    try:
        parts = urlsplit(url)
    except ValueError:
        return ""
    if parts.scheme.lower() not in ("http", "https") or not parts.netloc or any(ch.isspace() for ch in url):
        return ""
    return f'<a href="{escape(url, quote=True)}" target="_blank" rel="noopener noreferrer">{esc(label)}</a>'


def byline(item: qa.Passage | Article) -> str:
    """"Reuters · 11 Mar 2020 · link" from what is known of an article; "" when nothing is."""
    bits = [esc(x) for x in (item.author, shown_date(item.date, item.file_date)) if x]
    bits += [x for x in (link(item.url),) if x]
    return f'<div class="qa-byline">{" · ".join(bits)}</div>' if bits else ""


def _highlight(text: str, start: int, end: int, lo: int, hi: int,
               span: tuple[int, int] | None = None) -> str:
    """text[lo:hi] escaped, with text[start:end] inside <mark> and the short answer's span in bold."""
    if span is not None and start <= span[0] < span[1] <= end:
        inner = (esc(text[start:span[0]]) + '<strong class="qa-span">' + esc(text[span[0]:span[1]])
                 + "</strong>" + esc(text[span[1]:end]))
    else:
        inner = esc(text[start:end])
    return esc(text[lo:start]) + "<mark>" + inner + "</mark>" + esc(text[end:hi])


def _snippet(text: str, start: int, end: int, span: tuple[int, int] | None = None) -> str:
    """The cited sentence highlighted, with some context cut at word boundaries."""
    lo, hi = max(0, start - CONTEXT_CHARS), min(len(text), end + CONTEXT_CHARS)
    if lo > 0:
        lo = text.find(" ", lo, start) + 1 or lo
    if hi < len(text):
        hi = text.rfind(" ", end, hi) if text.rfind(" ", end, hi) > 0 else hi
    body = _highlight(text, start, end, lo, hi, span)
    return ("…" if lo > 0 else "") + body + ("…" if hi < len(text) else "")


def source_html(engine: qa.QA, n: int | None, p: qa.Passage, mark: bool = True,
                 short: qa.Passage | None = None) -> str:
    """One source: title, file name, the passage with the sentence marked, and the whole article."""
    article = engine.index.articles.get(p.source)
    label = f"[{n}] " if n else ""
    head = (f'<div class="qa-src-title">{label}{esc(p.title)}'
            f'<span class="qa-file">{esc(p.source)}</span></div>{byline(p)}')
    if article is None or article.text[p.start:p.end] != p.text:
        return f'<div class="qa-source">{head}<div class="qa-snippet">{esc(p.text)}</div></div>'
    text = article.text
    span = (short.start, short.end) if short is not None and short.source == p.source else None
    snippet = _snippet(text, p.start, p.end, span) if mark else esc(p.text)
    # A huge article is cut to a window around the sentence: every turn re-sends its HTML.
    lo, hi = max(0, p.start - FULL_CHARS), min(len(text), p.end + FULL_CHARS)
    full = (("…" if lo else "") + _highlight(text, p.start, p.end, lo, hi, span)
            + ("…" if hi < len(text) else ""))
    return (f'<div class="qa-source">{head}<div class="qa-snippet">{snippet}</div>'
            f'<details><summary>Read the whole article</summary>'
            f'{byline(article)}<div class="qa-article">{full}</div>'
            "</details></div>")
