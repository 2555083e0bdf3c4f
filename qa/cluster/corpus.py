"""The corpus a cluster build reads: a folder of articles, or JSON Lines / Parquet rows read by Ray Data."""

from __future__ import annotations

import hashlib
import json
import logging
from dataclasses import dataclass
from pathlib import Path

from qa.articles.converters import iso_date
from qa.articles.load import Article, load_articles, make_title, normalize_text
from qa.errors import ArticleError, MissingDependency

log = logging.getLogger(__name__)

ROW_SUFFIXES = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}
REQUIRED = ("id", "text")


def ray_module():  # the ray module
    """Import ray, or say how to install the extra that brings it."""
    try:
        import ray
    except ImportError:
        raise MissingDependency("Ray is not installed: run `pip install -e '.[cluster]'`") from None
    return ray


@dataclass
class Corpus:
    """The articles to index (with their date and URL when the rows give them)."""

    articles: list[Article]


def corpus_kind(path: Path) -> str:
    """'folder', 'json' or 'parquet'; a one-line error for anything else."""
    if path.is_dir():
        return "folder"
    if not path.is_file():
        raise ArticleError(f"corpus {path} does not exist: give a folder of .txt/.md articles, "
                           "a .jsonl file or a .parquet file")
    kind = ROW_SUFFIXES.get(path.suffix.lower())
    if kind is None:
        raise ArticleError(f"corpus {path}: expected a folder, a .jsonl or a .parquet file")
    return kind


def read_corpus(path: Path) -> Corpus:
    """Read the corpus: a folder here, rows through Ray Data (on the cluster's workers)."""
    kind = corpus_kind(path)
    if kind == "folder":
        return Corpus(load_articles(path))
    ray = ray_module()
    reader = ray.data.read_json if kind == "json" else ray.data.read_parquet
    context = ray.data.DataContext.get_current()
    ordered, context.execution_options.preserve_order = context.execution_options.preserve_order, True
    # A file that cannot be read is the user's to fix: said in one line below, without Ray's traceback.
    ray_data, level = logging.getLogger("ray.data"), logging.getLogger("ray.data").level
    ray_data.setLevel(logging.CRITICAL)
    try:  # in file order, so that a bad row is named by its number
        dataset = reader(str(path.resolve()))
        rows = dataset.map_batches(prepare_rows, batch_format="pandas").take_all()
    except Exception as exc:  # Ray wraps the reader's errors in its own
        raise ArticleError(f"corpus {path} is unreadable: {read_problem(path, kind, exc)}") from None
    finally:
        context.execution_options.preserve_order = ordered
        ray_data.setLevel(level)
    return corpus_from_rows(rows, path)


def read_problem(path: Path, kind: str, exc: BaseException) -> str:
    """What made the reader fail: the first line of JSON Lines that is not a row, else the error
    Ray wrapped."""
    if kind == "json" and (bad := _bad_line(path)):
        return bad
    # A RayTaskError holds the original error as its cause.
    while (cause := getattr(exc, "cause", None)) is not None and cause is not exc:
        exc = cause
    first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
    return f"{type(exc).__name__}: {first}"[:300]


def _bad_line(path: Path) -> str | None:
    """The first line that is not JSON, not an object, or holds a field that is not text."""
    with path.open(encoding="utf-8", errors="replace") as lines:
        for number, line in enumerate(lines, 1):
            if not line.strip():
                continue
            try:
                row = json.loads(line)
            except json.JSONDecodeError as bad:
                return f"line {number} is not JSON ({bad.args[0].split(':')[0]}, column {bad.colno})"
            if not isinstance(row, dict):
                return f"line {number} is not an object of id, text[, title, date, url]"
            for field in ("text", "title", "date", "url"):
                if row.get(field) is not None and not isinstance(row[field], str):
                    return f"line {number}: {field} is {json.dumps(row[field])[:40]}, not a string"
    return None


def _text(value: object) -> str | None:
    """A cell as text; None when it is empty (None, NaN, pandas' NA: optional fields may be)."""
    import pandas as pd

    if value is None or (pd.api.types.is_scalar(value) and pd.isna(value)):
        return None
    return value if isinstance(value, str) else str(value)


def prepare_rows(frame):  # pandas DataFrame in and out
    """Normalise each row's text, hash it and make a title where there is none; what is wrong with a
    row goes in its "problem" column (raising here, Ray would wrap the cause in its own message)."""
    missing = [c for c in REQUIRED if c not in frame.columns]
    out = frame.reindex(columns=["id", "title", "text", "date", "url"])
    if missing:
        out["problem"] = f"no {' or '.join(missing)} column (rows are id, text[, title, date, url])"
        out["id"] = [_text(v) or "" for v in out["id"]]
        return out
    problems, ids, texts, titles = [], [], [], []
    for raw_id, raw_text, raw_title in zip(out["id"], out["text"], out["title"], strict=True):
        ident, title = _text(raw_id) or "", _text(raw_title)
        text = raw_text if isinstance(raw_text, str) else ""
        problems.append("id is empty" if not ident.strip() else "" if isinstance(raw_text, str)
                        else "text is missing" if _text(raw_text) is None else "text is not a string")
        ids.append(ident)
        texts.append(normalize_text(text))
        titles.append(title.strip() if title and title.strip() else make_title(texts[-1]))
    out["id"], out["text"], out["title"], out["problem"] = ids, texts, titles, problems
    out["sha256"] = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in out["text"]]
    for column in ("date", "url"):
        out[column] = [_text(v) or "" for v in out[column]]
    return out


def corpus_from_rows(rows: list[dict], path: Path) -> Corpus:
    """Articles from prepared rows; empty texts skipped, a repeated id, a bad date or address refused
    with the row's number, id and field."""
    articles: list[Article] = []
    seen: set[str] = set()
    for number, row in enumerate(rows, 1):
        source = row["id"]
        where = f"corpus {path}, row {number}" + (f" (id {source!r})" if source else "")
        if row.get("problem"):
            raise ArticleError(f"{where}: {row['problem']}")
        if source in seen:
            raise ArticleError(f"{where}: the id appears twice; ids must be unique")
        seen.add(source)
        date, url = row.get("date") or None, row.get("url") or None
        if date is not None and iso_date(date) is None:
            raise ArticleError(f"{where}: date {date[:40]!r} is not a date (YYYY-MM-DD; it is optional)")
        if url is not None and not url.startswith(("http://", "https://")):
            raise ArticleError(f"{where}: url {url[:80]!r} is not an http(s) address (it is optional)")
        if not row["text"].strip():
            log.warning("%s: article %s has no text, skipped", path, source)
            continue
        articles.append(Article(source, row["title"], row["text"], row["sha256"], iso_date(date), url=url))
    if not articles:
        raise ArticleError(f"corpus {path} holds no article with text")
    return Corpus(articles)
