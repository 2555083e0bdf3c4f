"""RealTime QA's questions joined with their search-result articles, read in place, and the
published baselines they are compared with."""

from __future__ import annotations

import gzip
import json
from pathlib import Path

from eval.paths import benchmark_dir

BASELINES = {"2022": {"RAG + search results": {"mc_accuracy": 0.543, "em": 0.248, "f1": 0.320},
                      "GPT-3 + search results": {"mc_accuracy": 0.723, "em": 0.335, "f1": 0.462}},
             # Published for 2026 weeks with the same kind of search results (the 2025 README).
             "2025": {"frontier models, 2026 weeks (low)": {"mc_accuracy": 0.65, "em": 0.28, "f1": 0.39,
                                                             "nota_mc_accuracy": 0.59},
                      "frontier models, 2026 weeks (high)": {"mc_accuracy": 0.75, "em": 0.36, "f1": 0.48,
                                                              "nota_mc_accuracy": 0.67}}}
ANSWER_BEARING_CEILING = {"2022": 0.613, "2025": 0.476}
YEARS = tuple(BASELINES)


def rtqa_dir(year: str = "2022") -> Path:
    """The benchmark folder: $QA_RTQA_DIR (2022), else ../shared/benchmarks/realtimeqa-YEAR."""
    return benchmark_dir(f"realtimeqa-{year}")


def _read(path: Path) -> list[dict]:
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def day(raw: str | None) -> str | None:
    """A benchmark date ("2022/06/16", "2022-06-16 ...") as YYYY-MM-DD, None when there is none."""
    text = (raw or "").strip().replace("/", "-")[:10]
    return text if len(text) == 10 and text[4] == "-" and text[7] == "-" and text[:4].isdigit() else None


def article_file(doc: dict) -> str:
    """A search result as the product reads an article: front matter (title, date, link) and its text."""
    fields = {"title": " ".join((doc.get("title") or "").split()), "date": day(doc.get("publish_date")),
              "url": (doc.get("url") or "").strip()}
    head = "".join(f"{k}: {v}\n" for k, v in fields.items() if v)
    return f"---\n{head}---\n\n{doc['text']}" if head else doc["text"]


def load(folder: Path | None = None, limit: int | None = None) -> list[dict]:
    """Questions joined with their search-result articles (read in place, never copied), and the
    "none of the above" variant's choices where the folder has a nota/ of it."""
    folder = folder or rtqa_dir()
    results = {r["question_id"]: r["search_result"] for r in _read(folder / "search_results.jsonl.gz")}
    nota = ({q["question_id"].removesuffix("_nota"): q for q in _read(folder / "nota" / "questions.jsonl.gz")}
            if (folder / "nota" / "questions.jsonl.gz").is_file() else {})
    rows = []
    for q in _read(folder / "questions.jsonl.gz")[:limit]:
        gold = q["choices"][int(q["answer"][0])]
        docs = [a for a in results.get(q["question_id"], []) if (a.get("text") or "").strip()]
        variant = nota.get(q["question_id"])
        rows.append({**q, "gold": gold, "articles": [a["text"] for a in docs], "docs": docs,
                     "day": day(q.get("question_date")),
                     "nota": ({"choices": variant["choices"], "right": int(variant["answer"][0])}
                              if variant else None),
                     "scored": not q["question_sentence"].strip().rstrip(":?.").lower().endswith("except")})
    return rows
