"""The question sets an ablation answers: the hand-written set over eval/articles/, and RealTime QA
2025's first questions over their own search results; each engine made once, reading through the
replayed runtime."""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from typing import Protocol

from eval.paths import CACHE, eval_articles
from eval.progress import Steps
from eval.quality import harness
from eval.quality import metrics as m
from eval.realtimeqa import cache, data
from eval.realtimeqa.engines import question_engine
from qa import QA, Config
from qa.llm.base import Runtime
from qa.text.nlp import Tagger

# As the benchmark runners answer: the product's own thresholds, only a longer wait for the model.
OVERRIDES = {"read_timeout": 3600.0, "reader": "lm"}
HANDWRITTEN = ("em", "contains", "citation_precision", "refusal_recall", "false_refusal_rate")


class QuestionSet(Protocol):
    """A set of questions answered again for each rule turned off."""

    name: str

    def figures(self) -> dict[str, float]:
        """The set's figures as the product answers it now."""
        ...


@dataclass
class Handwritten:
    """The hand-written questions (eval/questions.jsonl) over eval/articles/, conversations and all."""

    engine: QA
    questions: list[dict]
    name: str = "handwritten"

    def figures(self) -> dict[str, float]:
        summary = harness.summarize(harness.ask_all(self.engine, self.questions, "hybrid"))
        return {k: round(summary[k], 4) for k in HANDWRITTEN}


@dataclass
class RealTime:
    """RealTime QA questions, each over its own search results, asked on its own day."""

    engines: dict[str, QA]
    questions: list[dict]
    name: str = "2025"
    skipped: list[str] = field(default_factory=list)

    def figures(self) -> dict[str, float]:
        scored = [q for q in self.questions if q["scored"]]
        em = f1 = 0.0
        for q in scored:
            engine = self.engines.get(q["question_id"])
            answer = engine.answer(q["question_sentence"], today=q.get("day")) if engine else None
            shown = (answer.short or "") if answer else ""
            em += m.exact_match(shown, [q["gold"]])
            f1 += m.token_f1(shown, [q["gold"]])
        return {"em": round(em / max(1, len(scored)), 4), "f1": round(f1 / max(1, len(scored)), 4)}


def chosen(names: list[str], limit: int, runtime: Runtime) -> list[QuestionSet]:
    """The sets asked for, their engines built (RealTime QA's indexes once, kept between runs)."""
    plan = {**({"the hand-written set's index": 30.0} if "handwritten" in names else {}),
            **({"RealTime QA 2025's indexes": 6.0 * limit} if "2025" in names else {})}
    steps = Steps("ablate", plan)
    out: list[QuestionSet] = []
    if "handwritten" in names:
        steps.step("the hand-written set's index")
        out.append(Handwritten(_handwritten_engine(runtime), harness.load_questions()))
    if "2025" in names:
        steps.step("RealTime QA 2025's indexes")
        out.append(_realtime("2025", limit, runtime))
    steps.finish()
    return out


def _handwritten_engine(runtime: Runtime) -> QA:
    """The product's engine over a copy of eval/articles/ (kept in the cache, like its index)."""
    root = CACHE / "ablate" / "handwritten"
    shutil.rmtree(root / "seeds", ignore_errors=True)
    shutil.copytree(eval_articles(), root / "seeds", ignore=shutil.ignore_patterns("SHA256SUMS"))
    engine = QA(Config.from_env(seeds_dir=root / "seeds", index_dir=root / "index", **OVERRIDES),
                runtime=runtime)
    engine.build()
    return engine


def _realtime(year: str, limit: int, runtime: Runtime) -> RealTime:
    questions = data.load(data.rtqa_dir(year), limit=limit)
    embedder = cache.CachingEmbedder(cache.build_embedder(), cache.DEFAULT_CACHE)
    tagger = cache.CachingTagger(Tagger(Config.from_env().indexing.nlp), cache.DEFAULT_CACHE)
    engines = {q["question_id"]: question_engine(year, q, embedder, tagger, runtime=runtime, **OVERRIDES)
               for q in questions if q["articles"]}
    return RealTime(engines, questions, year)
