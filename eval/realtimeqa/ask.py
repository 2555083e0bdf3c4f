"""One RealTime QA question through the product: its articles indexed once (dated and titled, as
files the product reads), the open question answered by ``QA.answer`` on the question's own day,
the choices weighed by ``QA.choose``, and the record of what each said and the user saw."""

from __future__ import annotations

import logging
import shutil
import tempfile
from pathlib import Path

import numpy as np

from eval.paths import eval_articles
from eval.quality import metrics as m
from eval.realtimeqa.engines import INDEXES, question_engine
from qa import QA, Answer, Choice, Config, Embedder, ReaderName
from qa.question import analyse
from qa.text.nlp import Tagger
from qa.text.normalise import key as normalise

log = logging.getLogger(__name__)
# The product's own thresholds and refusals: the record is what a user would see. Only the wait is
# longer: the benchmark measures reading, not a busy machine.
OVERRIDES = {"read_timeout": 3600.0, "reader": ReaderName.LM}
_UNREAD: list = []  # the engine that weighs options with nothing to read, and its folder


def _empty(record: dict) -> dict:
    return {**record, "answered": False, "evidence": 0.0, "short": None, "shown": None, "span_short": None,
            "first_cited": "", "confidence": 0.0, "in_candidates": False, "gold_in_pool": False, "lm": {}}


def _choices(mc: Choice | np.ndarray, nota: Choice | np.ndarray | None) -> dict:
    """The record's multiple choice: the pick and the probabilities, of the plain and the
    none-of-the-above variant."""
    def probs(c: Choice | np.ndarray) -> list[float]:
        return [round(float(p), 4) for p in (c.probabilities if isinstance(c, Choice) else c)]

    def said(c: Choice | np.ndarray, texts: str) -> list[int] | None:
        # Whether each option is said, word for word, in what the model read or was retrieved: what
        # a fit of the pick beside the model's probabilities would weigh.
        if not isinstance(c, Choice):
            return None
        text = " ".join(p.text for p in getattr(c, texts))
        return [int(m.contains_answer(text, [o]) > 0) for o in c.options]

    out = {"mc": int(np.argmax(probs(mc))), "mc_p": probs(mc), "nota_mc": None, "nota_p": None,
           "mc_in_read": said(mc, "read"), "mc_in_passages": said(mc, "passages")}
    if nota is not None:
        out.update(nota_mc=int(np.argmax(probs(nota))), nota_p=probs(nota), nota_in_read=said(nota, "read"),
                   nota_in_passages=said(nota, "passages"))
    return out


def unread_engine(embedder: Embedder, tagger: Tagger | None = None, **config: object) -> QA:
    """Any engine weighs options with nothing to read: one over eval/articles/, made once."""
    if not _UNREAD:
        folder = tempfile.TemporaryDirectory(prefix="qa-rtqa-unread-")
        root = Path(folder.name)
        shutil.copytree(eval_articles(), root / "seeds", ignore=shutil.ignore_patterns("SHA256SUMS"))
        cfg = Config.from_env(seeds_dir=root / "seeds", index_dir=root / "index", **config)
        engine = QA(cfg.replace(**OVERRIDES), embedder=embedder, tagger=tagger)
        engine.build()
        _UNREAD.extend([engine, folder])
    return _UNREAD[0]


def unread_choices(engine: QA, q: dict) -> dict:
    """The model's pick with no article to read ("None of the above" is then right), through the
    product's own queued multiple choice."""
    choice = engine.answerer.choice
    assert choice is not None, "the engine has no multiple choice"
    asked = analyse(q["question_sentence"])
    nota = choice.choose(asked, [], q["nota"]["choices"]) if q.get("nota") else None
    return _choices(choice.choose(asked, [], q["choices"]), nota)


def read_record(answer: Answer, gold: str, min_evidence: float) -> dict:
    """What the readers said of one question and what the user saw, from the answer and its trace."""
    t = answer.trace
    first = answer.citations[0].text if answer.citations else ""
    key, spans = normalise(gold), str(answer.reader) == "spans"
    return {"answered": answer.answered, "evidence": answer.evidence,
            # What the user saw: the short answer shown, or none (the cited sentences, a refusal).
            "shown": answer.short,
            # Where an answer is lost: in the pool the reader's sentences were ranked from, in what
            # it read (gold_given below), read right (short), shown right (shown).
            "gold_in_pool": any(m.contains_answer(p.text, [gold]) for p in t.pool),
            # The language model's phrase, shown or not, and its calibrated confidence.
            "short": t.phrase, "confidence": t.confidence,
            # The span reader's best span and candidates, when it read (the model names one phrase).
            "span_short": t.span_phrases[0] if t.span_phrases and spans else None,
            "span_confidence": t.span_confidence if spans else 0.0,
            "in_candidates": spans and any(normalise(p) == key for p in t.span_phrases),
            "first_cited": " ".join(first.split()),
            # The gold in the sentences the model read tells what it could have answered.
            "gold_given": any(m.contains_answer(p.text, [gold]) for p in t.given),
            "reader": str(answer.reader), "model": answer.model, "notice": answer.notice,
            # "declined" in the stats is the feature (the probability of declining); what the
            # model wrote is "wrote_declined". Empty when the model did not read.
            "lm": ({"wrote_declined": t.declined, "unverified": t.unverified, "no_answer": t.no_answer,
                    **t.stats} if t.stats else {})}


def ask(q: dict, embedder: Embedder, min_evidence: float, tagger: Tagger | None = None,
        year: str = "2022", root: Path = INDEXES, **config: object) -> dict:
    """Answer and choose through the product over this question's articles (indexed once), on the
    question's day, and record what the language model and the span reader said."""
    record = {"id": q["question_id"], "scored": q["scored"], "gold": q["gold"],
              "articles": len(q["articles"]), "mc_right": int(q["answer"][0]),
              "nota_right": q["nota"]["right"] if q.get("nota") else None,
              "gold_in_articles": any(m.contains_answer(a, [q["gold"]]) for a in q["articles"])}
    if not q["articles"]:
        # Nothing to read: the open question is not answered, the options are weighed blind.
        return {**_empty(record), **unread_choices(unread_engine(embedder, tagger, **config), q)}
    question, today = q["question_sentence"], q.get("day")
    try:
        engine = question_engine(year, q, embedder, tagger, root, **{**config, **OVERRIDES})
        answer = engine.answer(question, today=today)
        mc = engine.choose(question, q["choices"], today=today)
        nota = engine.choose(question, q["nota"]["choices"], today=today) if q.get("nota") else None
    except Exception as exc:  # one article the pipeline cannot take must not end the run
        log.warning("%s: %s: %s", q["question_id"], type(exc).__name__, exc)
        # Multiple choice can still be read off the raw articles: the most-mentioned choice.
        counts = [sum(m.contains_answer(a, [c]) for a in q["articles"]) for c in q["choices"]]
        return {**_empty(record), "mc": int(np.argmax(counts)), "nota_mc": -1,
                "error": f"{type(exc).__name__}: {exc}"}
    return {**record, **read_record(answer, q["gold"], min_evidence), **_choices(mc, nota)}
