"""Uploaded articles: who may upload, safe names, text checks, and writing without a trace on failure."""

from __future__ import annotations

import contextlib
import errno
import logging
import os
import re
import secrets
import threading
import unicodedata
from collections.abc import Callable
from pathlib import Path
from typing import Protocol, TypeVar

from qa.articles.load import ARTICLE_SUFFIXES, Article, articles_from_bytes
from qa.config import Config
from qa.errors import ArticleError
from qa.files import file_lock

log = logging.getLogger(__name__)

MAX_UPLOAD_BYTES = 1_000_000
MAX_NAME_CHARS = 100
# Staged uploads end in this suffix, which load_articles never reads as an article.
STAGED = ".upload"
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]+")
_NO_SPACE = {errno.ENOSPC, errno.EFBIG, errno.EDQUOT}


def uploaders(config: Config) -> frozenset[str]:
    """The signed-in users QA_UPLOADERS lets upload."""
    return frozenset(u.strip() for u in config.team.uploaders.split(",") if u.strip())


def may_upload(config: Config, username: str | None) -> bool:
    """True when uploads are on for everyone (QA_UPLOADS=1) or this signed-in user is an uploader."""
    return config.team.uploads or (username is not None and username in uploaders(config))


def safe_name(name: str) -> str:
    """The upload's base name reduced to letters, digits, '_', '-' and '.', with its known suffix."""
    # Accents are dropped (Zürich -> Zurich) before other non-ASCII letters become '_'.
    plain = "".join(ch for ch in unicodedata.normalize("NFKD", str(name)) if unicodedata.category(ch) != "Mn")
    base = plain.replace("\\", "/").rsplit("/", 1)[-1]
    stem, dot, suffix = base.rpartition(".")
    shown = base[:60] or "(no name)"
    if not dot or f".{suffix.lower()}" not in ARTICLE_SUFFIXES:
        raise ArticleError(f"{shown}: unknown format; articles can be {', '.join(ARTICLE_SUFFIXES)}")
    # Only ASCII letters, digits, '_', '-', '.': safe on every file system and in a URL.
    stem = _UNSAFE.sub("_", stem).strip("._-")[:MAX_NAME_CHARS]
    if not stem:
        raise ArticleError(f"{shown}: the name has no ASCII letters or digits; "
                           "rename the file, e.g. report.txt")
    return f"{stem}.{suffix.lower()}"


def check_upload(name: str, data: bytes) -> list[Article]:
    """The articles an upload would add, or ArticleError with the one-line reason it is refused."""
    if len(data) > MAX_UPLOAD_BYTES:
        raise ArticleError(f"{name}: {len(data):,} bytes is over the 1 MB limit")
    if not data.strip():
        raise ArticleError(f"{name}: the file is empty; add some text")
    plain = name.lower().endswith((".txt", ".md"))
    if plain and b"\x00" in data:
        raise ArticleError(f"{name}: not a text file (it holds NUL bytes); upload plain UTF-8 text")
    articles = articles_from_bytes(name, data)  # ArticleError when the converter cannot read it
    if not articles:
        raise ArticleError(f"{name}: the file is empty; add some text")
    for article in articles if plain else ():
        # Text files hold next to no control characters; binary data decoded as UTF-8 holds many.
        controls = sum(1 for ch in article.text if unicodedata.category(ch) == "Cc" and ch not in "\n\t\f\v")
        if controls > max(2, len(article.text) // 100):
            raise ArticleError(f"{name}: not a text file ({controls} control characters); "
                               "upload plain UTF-8 text")
    if not any(ch.isalnum() for a in articles for ch in a.text):
        raise ArticleError(f"{name}: the file has no words; add some text")
    return articles


def room_for(folder: Path, filename: str, new: list[Article], limit: int,
             load: Callable[[], list[Article]]) -> list[Article]:
    """The articles in folder (load()), or ArticleError when the new ones would pass the limit."""
    articles = load() if folder.is_dir() and any(
        p.suffix.lower() in ARTICLE_SUFFIXES for p in folder.rglob("*")) else []
    if len(articles) + len(new) > limit:
        raise ArticleError(f"{filename}: {len(articles)} + {len(new)} articles is over the limit of "
                           f"{limit} (QA_MAX_ARTICLES); remove some or raise it")
    return articles


def refuse_existing(target: Path) -> None:
    """Refuse a name taken by a file, folder or symlink (even a dangling one)."""
    if os.path.lexists(target):
        kind = "a symlink" if target.is_symlink() else "an article"
        raise ArticleError(f"{target.name}: {kind} with this name already exists; rename the file")


class FolderLock:
    """The articles folder held still, across threads and processes: an upload holds it from its
    checks until its file is published, a build from reading the folder until its index is written.

    Re-entrant within a thread (a build inside an upload takes it again); other threads wait.
    """

    def __init__(self, index_dir: Path) -> None:
        self.path = index_dir / ".uploads.lock"
        self._guard = threading.RLock()
        self._depth = 0
        self._held: contextlib.AbstractContextManager[None] | None = None

    def __enter__(self) -> None:
        self._guard.acquire()
        if self._depth == 0:
            try:
                held = file_lock(self.path)
                held.__enter__()
            except BaseException:
                self._guard.release()
                raise
            self._held = held
        self._depth += 1

    def __exit__(self, *exc: object) -> None:
        self._depth -= 1
        try:
            if self._depth == 0 and self._held is not None:
                held, self._held = self._held, None
                held.__exit__(None, None, None)
        finally:
            self._guard.release()


def stage(folder: Path, data: bytes) -> Path:
    """Write data to a new hidden file in folder (never through a symlink), synced to disk."""
    path = folder / f".{secrets.token_hex(8)}{STAGED}"
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        try:
            with os.fdopen(fd, "wb", closefd=False) as fh:
                fh.write(data)
            os.fsync(fd)
        finally:
            os.close(fd)
    except OSError as exc:
        path.unlink(missing_ok=True)
        if exc.errno in _NO_SPACE:
            raise ArticleError(f"no space left in {folder} to save the article; free some disk space, "
                               "then upload it again") from None
        raise ArticleError(f"cannot write to {folder} ({exc.strerror}); check its permissions") from None
    return path


def publish(staged: Path, target: Path) -> None:
    """Give the staged file its article name in one step; refuse if the name was taken meanwhile."""
    try:
        os.link(staged, target)  # fails if target exists, and never follows a symlink there
    except FileExistsError:
        raise ArticleError(f"{target.name}: an article with this name already exists; "
                           "rename the file") from None
    finally:
        staged.unlink(missing_ok=True)
    fd = os.open(target.parent, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def clean_staged(folder: Path) -> None:
    """Remove staged files an interrupted upload left behind."""
    if folder.is_dir():
        for path in folder.glob(f".*{STAGED}"):
            path.unlink(missing_ok=True)


class Built(Protocol):
    """What a build reports: here, how many chunks it embedded."""

    @property
    def embedded_chunks(self) -> int:
        """Chunks the build embedded."""
        ...


B = TypeVar("B", bound=Built)


def add_file(lock: FolderLock, folder: Path, limit: int, name: str, data: bytes,
             load: Callable[[], list[Article]], build: Callable[[list[Article], Callable[[], None]], B],
             progress: Callable[[float, str], None] | None = None) -> B:
    """Index an uploaded file's articles with ``build``, then publish it under its safe name in folder."""
    # The index is built with the upload before the file appears in the folder, so a crash mid-build
    # leaves both as they were; the file is published the moment the index is on disk, not after
    # it is loaded, so only a crash while it is linked in can split them. Uploads take turns.
    filename = safe_name(name)
    new = check_upload(filename, data)
    target = folder / filename
    with lock:
        clean_staged(folder)
        refuse_existing(target)
        articles = room_for(folder, filename, new, limit, load)
        staged = stage(folder, data)
        if progress is not None:
            progress(0.2, f"indexing {len(new)} new article(s)")
        try:
            report = build([*articles, *new], lambda: publish(staged, target))
        finally:
            staged.unlink(missing_ok=True)  # already gone once published
        log.info("%s added (%d bytes, %d articles, %d chunks embedded)", filename, len(data), len(new),
                 report.embedded_chunks)
        return report
