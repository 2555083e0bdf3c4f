"""The sentence stage: the retrieved passages' sentences as self-contained records, scored once, in
the order an answer cites them and the order a reader reads them."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace

from qa import rules
from qa.index.load import Index
from qa.passage import Passage
from qa.question.record import Question
from qa.sentences import evidence
from qa.sentences.record import Sentence
from qa.sentences.scoring import Embed, scores
from qa.text.normalise import shown_in

# Chunk ids with their retrieval scores, best first.
Hits = Sequence[tuple[int, float]]
LEAD_ARTICLES = 8  # a question naming no topic is about the newest this many articles


@dataclass(frozen=True)
class Evidence:
    """What an answer is made from: the passages, their sentences in citing and reading order."""

    passages: tuple[Passage, ...]  # the k best passages (a refusal shows the closest of them)
    pool: tuple[Passage, ...]  # every passage whose sentences a reader may read
    cited: tuple[Sentence, ...]  # the k best passages' sentences, best score first: what an answer cites
    read: tuple[Sentence, ...]  # the pool's sentences in the order a reader reads them
    # The first sentences of the articles (the pool's, or the newest ones when a question names no
    # topic): what news puts first, for an overview.
    leads: tuple[Sentence, ...] = ()

    @property
    def best(self) -> float:
        """The best sentence's score: the evidence an answer stands on (0 without any)."""
        return self.cited[0].score if self.cited else 0.0

    def past(self, seen: frozenset[str]) -> Evidence:
        """The evidence without the sentences already shown (``plain`` texts), for a request for more."""
        def unseen(sentences: tuple[Sentence, ...]) -> tuple[Sentence, ...]:
            return tuple(s for s in sentences if not shown_in(s.text, seen))
        return replace(self, cited=unseen(self.cited), read=unseen(self.read), leads=unseen(self.leads))


class Gatherer:
    """Makes sentence records from one index: its sentences' text, tags, vectors and neighbours."""

    def __init__(self, index: Index, passage: Callable[[int, float], Passage]) -> None:
        self.index = index
        self.passage = passage  # a chunk as a Passage (the retriever's)

    def record(self, sid: int, neighbours: bool = True) -> Sentence:
        """Sentence ``sid`` of the index as a record (with the sentences around it)."""
        index = self.index
        source = index.sent_sources[sid]
        start, end = (int(x) for x in index.sent_spans[sid])
        terms = tuple(index.sentence_terms(sid)[0])
        weights = index.terms
        side = [self.record(n, neighbours=False) if neighbours and 0 <= n < len(index.sent_sources)
                and index.sent_sources[n] == source else None for n in (sid - 1, sid + 1)]
        return Sentence(sid, index.passage(source, index.sentence_text(sid), start, end, 0.0), terms,
                        index.annotations.of(sid), index.sent_vectors[sid],
                        {t: weights.weight(t) / weights.default for t in set(terms)},
                        before=side[0], after=side[1])

    def leads(self, sources: Sequence[str], per_article: int, question: Question,
              embed: Embed) -> list[Sentence]:
        """The first sentences of these articles (or, with none given, of the newest ones), scored
        against the question."""
        index = self.index
        if not sources:
            dated = sorted(index.articles.values(), key=lambda a: (a.date or "", a.source), reverse=True)
            sources = [a.source for a in dated[:LEAD_ARTICLES]]
        found = [self.record(sid) for source in dict.fromkeys(sources)
                 for sid in index.article_sentences(source)[:per_article]]
        scored = scores(found, embed, index.terms.weight, question)
        return [replace(s, score=float(v)) for s, v in zip(found, scored, strict=True)]

    def locate(self, cited: Passage) -> Sentence | None:
        """The record of the sentence a passage cites exactly, or None."""
        sid = self.index.sentence_at(cited.source, cited.start, cited.end)
        return None if sid is None else self.record(sid)

    def gather(self, question: Question, pool: Hits, k: int, embed: Embed,
               today: str | None = None) -> Evidence:
        """The pool's sentences scored, cited from the first k passages and read in the fitted order."""
        ranks: dict[int, int] = {}
        top: set[int] = set()
        for r, (chunk_id, _) in enumerate(pool):
            for sid in self.index.chunk_sentences(chunk_id):
                ranks.setdefault(sid, r)
                if r < k:
                    top.add(sid)
        found = [self.record(sid) for sid in sorted(ranks)]
        weight = self.index.terms.weight
        scored = [replace(s, score=float(v), top=s.id in top)
                  for s, v in zip(found, scores(found, embed, weight, question), strict=True)]
        scored.sort(key=lambda s: (-s.score, s.id))
        x = evidence.features(scored, [ranks[s.id] for s in scored], question,
                              evidence.query_of(question, embed, weight, today))
        order: list[float] = evidence.default_model().rank(x).tolist() if scored else []
        ranked = [replace(s, order=float(o), features=dict(zip(evidence.FEATURES, row, strict=True)))
                  for s, o, row in zip(scored, order, x.tolist(), strict=True)]
        cited = tuple(s for s in ranked if s.top)
        read = sorted(ranked, key=lambda s: -s.order)  # stable: ties keep the score order
        if cited and rules.on("sentences.lead_read_first"):
            # The model reads the answer's best-scored sentence first, whatever the fitted ranking
            # says: it is what the answer cites first, and on our own articles the ranking fitted on
            # RealTime QA's long search results passed over short quoted answers.
            read = evidence.lead_first(read, cited[:1])
        return Evidence(tuple(self.passage(i, s) for i, s in pool[:k]),
                        tuple(self.passage(i, s) for i, s in pool), cited, tuple(read))
