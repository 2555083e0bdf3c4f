"""Plain text and Markdown: the text as written, with an optional front matter block read off."""

from __future__ import annotations

import re

from qa.articles.converters import MAX_TEXT_CHARS, Extracted, clean, iso_date, too_long
from qa.errors import ArticleError

KEYS = ("title", "date", "author", "url")
_FENCE = re.compile(r"---[ \t]*\n(.*?\n)---[ \t]*\n", re.S)
_LINE = re.compile(r"([A-Za-z]+)[ \t]*:[ \t]*(.*)")


def normalize_text(raw: str) -> str:
    """Drop a BOM and unify line endings; offsets everywhere refer to this text."""
    text = raw.removeprefix("\ufeff")
    return text.replace("\r\n", "\n").replace("\r", "\n")


def decode(data: bytes, name: str) -> str:
    """Decode UTF-8 (with or without BOM), or raise ArticleError naming the file."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ArticleError(
            f"{name}: not valid UTF-8 (byte {exc.start}); re-save the file as UTF-8 text"
        ) from exc


def front_matter(text: str) -> tuple[dict[str, str], str]:
    """The front matter's fields and the text after it (no front matter: {} and the text)."""
    # A block is either fenced by ``---`` lines, or leading ``key: value`` lines (keys among
    # title, date, author, url only) ended by a blank line; anything else is article text.
    fenced = _FENCE.match(text)
    if fenced:
        lines, rest = fenced[1].splitlines(), text[fenced.end():]
    else:
        head, blank, rest = text.partition("\n\n")
        lines = head.splitlines() if blank else []
        if not lines or not all((m := _LINE.fullmatch(ln)) and m[1].lower() in KEYS for ln in lines):
            return {}, text
    fields = {}
    for line in lines:
        m = _LINE.fullmatch(line.strip())
        if m and m[1].lower() in KEYS and m[2].strip():
            fields[m[1].lower()] = m[2].strip().strip("\"'")
    if not fields and not fenced:
        return {}, text
    return fields, rest.lstrip("\n")


def convert(name: str, data: bytes, limit: int = MAX_TEXT_CHARS) -> list[Extracted]:
    """The file's text, with the front matter (if any) read into title, date, author and URL."""
    if len(data) > 4 * limit:  # even four-byte characters only: more than limit of them
        raise too_long(name, limit)
    fields, text = front_matter(normalize_text(decode(data, name)))
    if len(text) > limit:
        raise too_long(name, limit)
    return [Extracted(text, clean(fields.get("title")), iso_date(fields.get("date")),
                      clean(fields.get("author")), clean(fields.get("url")))]
