"""The corpus a cluster build reads: a folder of articles, or JSON Lines / Parquet rows read by Ray Data."""

from __future__ import annotations

import hashlib
import logging
from dataclasses import dataclass
from pathlib import Path

from qa.articles.converters import iso_date
from qa.articles.load import Article, load_articles, make_title, normalize_text
from qa.errors import ArticleError, MissingDependency

log = logging.getLogger(__name__)

ROW_SUFFIXES = {".jsonl": "json", ".json": "json", ".parquet": "parquet"}
REQUIRED = ("id", "text")


def ray_module():  # noqa: ANN201 - the ray module
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
    try:
        dataset = reader(str(path.resolve()))
        rows = dataset.map_batches(prepare_rows, batch_format="pandas").take_all()
    except Exception as exc:  # Ray wraps the reader's errors; the first line names the problem
        message = str(exc).strip().splitlines()[-1] if str(exc).strip() else type(exc).__name__
        raise ArticleError(f"corpus {path} is unreadable: {message[:300]}") from None
    return corpus_from_rows(rows, path)


def prepare_rows(frame):  # noqa: ANN001, ANN201 - pandas DataFrame in and out
    """Check the columns, normalise each text, hash it and make a title where there is none."""
    missing = [c for c in REQUIRED if c not in frame.columns]
    if missing:
        raise ValueError(f"rows lack the column(s) {', '.join(missing)} (need id, title, text[, date, url])")
    out = frame.reindex(columns=["id", "title", "text", "date", "url"])
    out["id"] = out["id"].astype(str)
    out["text"] = [normalize_text(t) if isinstance(t, str) else "" for t in out["text"]]
    out["title"] = [t.strip() if isinstance(t, str) and t.strip() else make_title(x)
                    for t, x in zip(out["title"], out["text"], strict=True)]
    out["sha256"] = [hashlib.sha256(t.encode("utf-8")).hexdigest() for t in out["text"]]
    for column in ("date", "url"):
        out[column] = ["" if v is None or v != v else str(v) for v in out[column]]  # NaN != NaN
    return out


def corpus_from_rows(rows: list[dict], path: Path) -> Corpus:
    """Articles from prepared rows; empty texts skipped, a repeated id refused."""
    articles: list[Article] = []
    seen: set[str] = set()
    for row in rows:
        source = row["id"]
        if source in seen:
            raise ArticleError(f"corpus {path}: id {source!r} appears twice; ids must be unique")
        seen.add(source)
        if not row["text"].strip():
            log.warning("%s: article %s has no text, skipped", path, source)
            continue
        url = row.get("url") or None
        articles.append(Article(source, row["title"], row["text"], row["sha256"], iso_date(row.get("date")),
                                url=url if url and url.startswith(("http://", "https://")) else None))
    if not articles:
        raise ArticleError(f"corpus {path} holds no article with text")
    return Corpus(articles)
