"""One index per RealTime QA question, over its own search results, kept between runs."""

from __future__ import annotations

from pathlib import Path

from eval.paths import CACHE
from eval.realtimeqa.data import article_file
from qa import QA, Config, Embedder
from qa.llm.base import Runtime
from qa.text.nlp import Tagger

INDEXES = CACHE / "rtqa"  # quotes the benchmark: git-ignored, like the rest of the cache


def question_engine(year: str, q: dict, embedder: Embedder, tagger: Tagger | None = None,
                    root: Path = INDEXES, runtime: Runtime | None = None, **config: object) -> QA:
    """The product's engine over this question's articles (as dated, titled files), built once:
    a later run finds the index up to date and only loads it."""
    folder = root / year / q["question_id"]
    seeds = folder / "seeds"
    seeds.mkdir(parents=True, exist_ok=True)
    wanted = {f"{i:02d}.txt": article_file(doc) for i, doc in enumerate(q["docs"])}
    for stale in {p.name for p in seeds.iterdir()} - set(wanted):
        (seeds / stale).unlink()
    for name, text in wanted.items():
        path = seeds / name
        if not path.is_file() or path.read_text("utf-8") != text:
            path.write_text(text, encoding="utf-8")
    engine = QA(Config.from_env(seeds_dir=seeds, index_dir=folder / "index", **config), embedder=embedder,
                tagger=tagger, runtime=runtime)
    engine.build()
    return engine
