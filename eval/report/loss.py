"""Where each answer is lost, from a benchmark's records: not in the articles, not retrieved,
retrieved but not read, read but misread, read right but not shown, or shown right."""

from __future__ import annotations

from collections import Counter

from eval.quality import metrics as m

BUCKETS = ("not in the articles", "not retrieved", "retrieved, not read", "read, misread",
           "read right, not shown", "shown right")


def bucket(in_articles: bool, in_pool: bool, given: bool, read_right: bool, shown_right: bool) -> str:
    """The first stage that lost the answer (or "shown right")."""
    if shown_right:
        return BUCKETS[5]
    if not in_articles:
        return BUCKETS[0]
    if not in_pool:
        return BUCKETS[1]
    if not given:
        return BUCKETS[2]
    if not read_right:
        return BUCKETS[3]
    return BUCKETS[4]


def rtqa_bucket(r: dict) -> str:
    """A RealTime QA record's bucket."""
    golds = [r["gold"]]
    return bucket(bool(r.get("gold_in_articles", True)), bool(r.get("gold_in_pool")),
                  bool(r.get("gold_given")), bool(r.get("short")) and bool(m.exact_match(r["short"], golds)),
                  bool(r.get("shown")) and bool(m.exact_match(r["shown"], golds)))


def table(buckets: list[str]) -> dict:
    """Each bucket's share, and recall at the reading budget against its ceiling."""
    n = max(1, len(buckets))
    counts = Counter(buckets)
    shares = {b: round(counts[b] / n, 3) for b in BUCKETS}
    lost_before_reading = counts[BUCKETS[0]] + counts[BUCKETS[1]] + counts[BUCKETS[2]]
    return {"questions": len(buckets), "buckets": shares,
            "ceiling": round(1 - counts[BUCKETS[0]] / n, 3),
            "recall_at_budget": round(1 - lost_before_reading / n, 3)}


def text(name: str, summary: dict) -> str:
    """The loss table as Markdown."""
    rows = "".join(f"| {b} | {share:.3f} |\n" for b, share in summary["buckets"].items())
    return (f"**{name}** ({summary['questions']} questions): the answer is in what the reader reads "
            f"for {summary['recall_at_budget']:.3f} of them (ceiling, in the articles at all: "
            f"{summary['ceiling']:.3f}).\n\n| where the answer is lost | share |\n|---|---|\n{rows}")
