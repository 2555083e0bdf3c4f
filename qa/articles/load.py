"""Articles: read plain-text or Markdown files into normalised, hashed text."""

from __future__ import annotations

import hashlib
import logging
import re
from dataclasses import dataclass
from pathlib import Path

from qa.errors import ArticleError

log = logging.getLogger(__name__)

ARTICLE_SUFFIXES = (".txt", ".md")
MAX_TITLE_CHARS = 90


@dataclass(frozen=True)
class Article:
    """One article: its file name (the id), title, normalised text and content hash."""

    source: str
    title: str
    text: str
    sha256: str


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


def make_title(text: str) -> str:
    """The first line when it is a short headline, else a shortened first sentence."""
    first_line = text.strip().split("\n", 1)[0].strip().lstrip("#").strip()
    if first_line and len(first_line) <= MAX_TITLE_CHARS and not first_line.endswith((".", ",")):
        return first_line
    sentence = re.split(r"(?<=[.!?])\s", first_line, maxsplit=1)[0]
    if len(sentence) <= MAX_TITLE_CHARS:
        return sentence
    cut = sentence[:MAX_TITLE_CHARS].rsplit(" ", 1)[0]
    return cut.rstrip(",;:") + "…"


def article_from_bytes(name: str, data: bytes) -> Article | None:
    """Build an Article from a file's bytes; None (with a warning) when it has no text."""
    text = normalize_text(decode(data, name))
    if not text.strip():
        log.warning("%s: empty article, skipped", name)
        return None
    digest = hashlib.sha256(text.encode("utf-8")).hexdigest()
    return Article(source=name, title=make_title(text), text=text, sha256=digest)


def article_files(seeds_dir: Path) -> list[Path]:
    """Every .txt and .md file under seeds_dir, sorted, or a clear error if there is none."""
    if not seeds_dir.is_dir():
        raise ArticleError(
            f"articles folder {seeds_dir} does not exist: create it and put .txt or .md files in it, "
            "or run qa in (or below) a folder that holds seeds/, or set QA_HOME"
        )
    files = sorted(
        p for p in seeds_dir.rglob("*") if p.is_file() and p.suffix.lower() in ARTICLE_SUFFIXES
    )
    if not files:
        raise ArticleError(f"no .txt or .md articles in {seeds_dir}: add some, then run `qa build`")
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


def load_articles(seeds_dir: Path) -> list[Article]:
    """Read every article under seeds_dir; empty files are skipped with a warning."""
    articles = []
    for path in article_files(seeds_dir):
        name = path.relative_to(seeds_dir).as_posix()
        article = article_from_bytes(name, path.read_bytes())
        if article is not None:
            articles.append(article)
    if not articles:
        raise ArticleError(f"every article in {seeds_dir} is empty: add text, then run `qa build`")
    return articles
