"""Typed spans in the index folder (annotations.json): tagged once per article, read per sentence."""

from __future__ import annotations

import bisect
import json
import logging
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, cast

import numpy as np

from qa.text.nlp import Span

if TYPE_CHECKING:
    from qa.articles.load import Article
    from qa.text.nlp import Tagger

log = logging.getLogger(__name__)

FILE = "annotations.json"


class Annotations:
    """Each article's entity spans and noun chunks; ``of(sentence)`` gives one sentence's."""

    def __init__(self, articles: Mapping[str, Sequence[Span]], sent_sources: Sequence[str],
                 sent_spans: np.ndarray) -> None:
        # JSON gives lists; spans are compared and cached as tuples.
        self.articles: dict[str, list[Span]] = {s: [cast(Span, tuple(x)) for x in spans]
                                                for s, spans in articles.items()}
        self._starts = {s: [x[0] for x in spans] for s, spans in self.articles.items()}
        self._sources = sent_sources
        self._spans = sent_spans
        self._cache: dict[int, tuple[Span, ...]] = {}

    def of(self, sentence: int) -> tuple[Span, ...]:
        """The spans inside sentence i (article offsets), in order of their start."""
        found = self._cache.get(sentence)
        if found is None:
            source = self._sources[sentence]
            start, end = (int(x) for x in self._spans[sentence])
            spans, starts = self.articles.get(source, []), self._starts.get(source, [])
            lo, hi = bisect.bisect_left(starts, start), bisect.bisect_left(starts, end)
            found = self._cache[sentence] = tuple(s for s in spans[lo:hi] if s[1] <= end)
        return found

    @classmethod
    def load(cls, folder: Path, sent_sources: Sequence[str], sent_spans: np.ndarray) -> Annotations:
        """Read annotations.json of an index folder."""
        data = json.loads((folder / FILE).read_text("utf-8"))
        labels, roles = data["labels"], data["roles"]
        articles = {s: [(a, b, labels[k], roles[r], a + c, a + d) for a, b, k, r, c, d in spans]
                    for s, spans in data["articles"].items()}
        return cls(articles, sent_sources, sent_spans)


def write_annotations(folder: Path, pipeline: str, articles: Mapping[str, Sequence[Span]]) -> None:
    """Write annotations.json: labels and roles once; each span as [start, end, label, role, clause
    start, clause end], the label and role as numbers and the clause relative to the start."""
    labels = sorted({s[2] for spans in articles.values() for s in spans})
    roles = sorted({s[3] for spans in articles.values() for s in spans})
    number = {label: i for i, label in enumerate(labels)}
    role = {r: i for i, r in enumerate(roles)}
    data = {"pipeline": pipeline, "labels": labels, "roles": roles,
            "articles": {s: [[a, b, number[k], role[r], c - a, d - a] for a, b, k, r, c, d in spans]
                         for s, spans in sorted(articles.items())}}
    (folder / FILE).write_text(json.dumps(data, ensure_ascii=False, separators=(",", ":")), "utf-8")


def annotate(articles: Sequence[Article], reused: Mapping[str, Sequence[Span]], tagger: Tagger,
             sentences: Mapping[str, Sequence[tuple[int, int]]], progress: bool = False
             ) -> dict[str, list[Span]]:
    """Spans for every article: copied for the reused ones, tagged for the rest."""
    fresh = [a for a in articles if a.source not in reused]
    out = {a.source: list(reused[a.source]) for a in articles if a.source in reused}
    if fresh:
        log.info("tagging %d articles with %s", len(fresh), tagger.name)
        tagged = tagger.tag([a.text for a in fresh], [sentences[a.source] for a in fresh], progress=progress)
        out.update({a.source: spans for a, spans in zip(fresh, tagged, strict=True)})
    return out
