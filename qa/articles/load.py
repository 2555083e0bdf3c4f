"""Articles: files of every supported format read into canonical text with title, date, author and URL."""

from __future__ import annotations

import hashlib
import json
import logging
import re
import secrets
from dataclasses import asdict, dataclass
from pathlib import Path

from qa.articles.bounded import Worker, convert
from qa.articles.converters import Extracted
from qa.articles.converters.plain import decode, normalize_text  # noqa: F401 - re-exported
from qa.articles.converters.registry import EXTRACTED, SUFFIXES, VERSION
from qa.errors import ArticleError

log = logging.getLogger(__name__)

ARTICLE_SUFFIXES = SUFFIXES
MAX_TITLE_CHARS = 90


@dataclass(frozen=True)
class Article:
    """One article: its source name (the id), title, canonical text, content hash and metadata."""

    source: str
    title: str
    text: str
    sha256: str
    date: str | None = None  # YYYY-MM-DD
    author: str | None = None
    url: str | None = None
    file_date: str | None = None  # the file's creation date, when the article's own is unknown


def headline(text: str) -> tuple[int, int] | None:
    """Where the article's headline is: a short first line with no closing full stop or comma,
    with more text after it. It titles the article and is never one of its sentences."""
    lead = len(text) - len(text.lstrip())
    line_end = text.find("\n", lead)
    after = text[line_end:].lstrip() if line_end >= 0 else ""
    if not after or after[0].islower():  # the only line, or a sentence broken across two lines
        return None
    line = text[lead:line_end].strip()
    words = line.lstrip("#").strip()
    if not words or len(words) > MAX_TITLE_CHARS or words.endswith((".", ",")):
        return None
    return lead, lead + len(text[lead:line_end].rstrip())


def make_title(text: str) -> str:
    """The headline when the article opens with one, else a shortened first sentence."""
    first_line = text.strip().split("\n", 1)[0].strip().lstrip("#").strip()
    if (found := headline(text)) is not None:
        return text[found[0]:found[1]].lstrip("#").strip()
    if first_line and len(first_line) <= MAX_TITLE_CHARS and not first_line.endswith((".", ",")):
        return first_line
    sentence = re.split(r"(?<=[.!?])\s", first_line, maxsplit=1)[0]
    if len(sentence) <= MAX_TITLE_CHARS:
        return sentence
    cut = sentence[:MAX_TITLE_CHARS].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


def to_article(name: str, found: Extracted) -> Article | None:
    """The Article for one extracted text (a feed entry is ``feed.xml#3``); None when it is blank."""
    if not found.text.strip():
        return None
    source = f"{name}#{found.entry}" if found.entry is not None else name
    title = found.title or make_title(found.text)
    meta = {"date": found.date, "author": found.author, "url": found.url}
    if found.file_date:
        meta["file_date"] = found.file_date
    # Text alone when there is no metadata, so an index of plain files stays valid.
    hashed = found.text if not any(meta.values()) and not found.title else json.dumps(
        [found.text, found.title, meta], sort_keys=True, ensure_ascii=False)
    digest = hashlib.sha256(hashed.encode("utf-8")).hexdigest()
    return Article(source, title, found.text, digest, **meta)


def articles_from_bytes(name: str, data: bytes, worker: Worker | None = None) -> list[Article]:
    """Every article in a file's bytes (one, or one per feed entry), converted under the limits of
    qa/articles/bounded.py; ArticleError when it gives none or breaks a limit."""
    return [a for found in convert(name, data, worker) if (a := to_article(name, found)) is not None]


def article_from_bytes(name: str, data: bytes) -> Article | None:
    """The first article of a file's bytes; None (with a warning) when it has no text."""
    articles = articles_from_bytes(name, data)
    if not articles:
        log.warning("%s: empty article, skipped", name)
        return None
    return articles[0]


def article_files(seeds_dir: Path) -> list[Path]:
    """Every article file under seeds_dir, sorted, or a clear error if there is none."""
    if not seeds_dir.is_dir():
        raise ArticleError(
            f"articles folder {seeds_dir} does not exist: create it and put articles in it, "
            "or run qa in (or below) a folder that holds seeds/, or set QA_HOME"
        )
    files = sorted(
        p for p in seeds_dir.rglob("*")
        if p.is_file() and p.suffix.lower() in SUFFIXES and not p.name.startswith(".")
    )
    if not files:
        raise ArticleError(f"no articles ({', '.join(SUFFIXES)}) in {seeds_dir}: add some, "
                           "then run `qa build`")
    return files


def folder_state(seeds_dir: Path) -> tuple[tuple[str, int, int], ...]:
    """Each article file's path, size and modification time: cheap to compare, changes on any edit."""
    state = []
    for path in seeds_dir.rglob("*") if seeds_dir.is_dir() else ():
        if path.suffix.lower() in ARTICLE_SUFFIXES:
            try:
                stat = path.stat()
            except OSError:  # removed meanwhile, or a dangling link: the next look sees it
                continue
            state.append((str(path), stat.st_size, stat.st_mtime_ns))
    return tuple(sorted(state))


def _extract(name: str, data: bytes, cache_dir: Path | None, used: set[str], worker: Worker) -> list[Article]:
    """A file's articles, from the stored extraction when this exact file was extracted before."""
    if not data.strip():
        return []
    if cache_dir is None or Path(name).suffix.lower() not in EXTRACTED:
        return articles_from_bytes(name, data, worker)
    key = f"{hashlib.sha256(data).hexdigest()}-{VERSION}.json"
    used.add(key)
    stored = cache_dir / key
    try:
        return [Article(**{**a, "source": name + a["source"]}) for a in json.loads(stored.read_text("utf-8"))]
    except (OSError, ValueError, TypeError, KeyError):
        pass
    articles = articles_from_bytes(name, data, worker)
    cache_dir.mkdir(parents=True, exist_ok=True)
    # Sources are stored relative to the file name, so a renamed file still reuses its extraction.
    rows = [{**asdict(a), "source": a.source[len(name):]} for a in articles]
    tmp = stored.with_name(f".{secrets.token_hex(6)}.tmp")  # two builds may extract the same file at once
    tmp.write_text(json.dumps(rows, ensure_ascii=False), "utf-8")
    tmp.replace(stored)
    return articles


def load_articles(seeds_dir: Path, cache_dir: Path | None = None) -> list[Article]:
    """Read every article under seeds_dir; empty files are skipped with a warning, broken ones raise."""
    # With cache_dir, the text extracted from HTML, PDF, Word and feed files is kept there (named
    # by the file's hash) and reused while the file is unchanged.
    articles: list[Article] = []
    used: set[str] = set()
    with Worker() as worker:  # one conversion worker for the whole folder, started when needed
        for path in article_files(seeds_dir):
            name = path.relative_to(seeds_dir).as_posix()
            found = _extract(name, path.read_bytes(), cache_dir, used, worker)
            if not found:
                log.warning("%s: empty article, skipped", name)
            articles.extend(found)
    if cache_dir is not None and cache_dir.is_dir():
        for stale in cache_dir.glob("*.json"):
            if stale.name not in used:
                stale.unlink(missing_ok=True)
    if not articles:
        raise ArticleError(f"every article in {seeds_dir} is empty: add text, then run `qa build`")
    return articles
