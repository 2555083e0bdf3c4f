"""Against a peer: the same corpus indexed and searched the usual LangChain way, in the same run.

LangChain: the same sentence splitter, ``HuggingFaceEmbeddings`` over the packaged MiniLM,
``langchain_community`` FAISS, ``similarity_search(q, k=5)``. Needs the ``bench`` extra.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

from eval.perf.scale_data import percentiles
from qa.articles.load import Article

log = logging.getLogger(__name__)


def langchain_store(model_path: str) -> object:
    """LangChain's embeddings object over the packaged model (loaded once, outside the timings)."""
    from langchain_huggingface import HuggingFaceEmbeddings

    return HuggingFaceEmbeddings(model_name=model_path, encode_kwargs={"normalize_embeddings": True})


def compare(name: str, articles: list[Article], questions: list[str], embedder: object,
            lc_embeddings: object, work: Path) -> dict:
    """Build both indexes over the articles and time each one's queries, interleaved."""
    from langchain_community.vectorstores import FAISS

    from qa import QA, Config, ReaderName
    from qa.index.build import build_index
    from qa.index.load import load_index
    from qa.text.chunk import splitter_class
    from qa.text.sentences import split_sentences

    # Both sides split sentences with qa's cached splitter: each build starts with it empty.
    split_sentences.cache_clear()
    began = time.perf_counter()
    report = build_index(work / f"peer-{name}", articles, embedder, 600, 120, force=True)  # type: ignore[arg-type]
    ours_build = time.perf_counter() - began

    split_sentences.cache_clear()
    began = time.perf_counter()
    splitter = splitter_class()(600, 120)
    docs = splitter.create_documents([a.text for a in articles], [{"source": a.source} for a in articles])
    store = FAISS.from_documents(docs, lc_embeddings)  # type: ignore[arg-type]
    theirs_build = time.perf_counter() - began

    # The product's engine over that index, with the span reader: questions are embedded as the
    # product embeds them (the int8-block export).
    engine = QA(Config.from_env(index_dir=work / f"peer-{name}", reader=ReaderName.SPANS))
    engine.use_index(load_index(work / f"peer-{name}"))
    retriever = engine.answerer.retriever
    engine.answer(questions[0])
    store.similarity_search(questions[0], k=5)
    ours_search, ours_answer, theirs = [], [], []
    for question in questions:
        retriever._cache.clear()  # every query pays for its embedding, as LangChain's does
        t0 = time.perf_counter()
        retriever.search(question, 5)
        t1 = time.perf_counter()
        retriever._cache.clear()
        engine.answer(question)
        t2 = time.perf_counter()
        store.similarity_search(question, k=5)
        t3 = time.perf_counter()
        ours_search.append(t1 - t0)
        ours_answer.append(t2 - t1)
        theirs.append(t3 - t2)
    result = {
        "articles": len(articles), "chunks": report.embedded_chunks, "langchain_chunks": len(docs),
        "sentences": report.embedded_sentences, "questions": len(questions),
        "build_s": {"ours": round(ours_build, 3), "langchain": round(theirs_build, 3),
                    "ours/langchain": round(ours_build / theirs_build, 3)},
        "query_ms": {"ours_search": percentiles(ours_search), "ours_answer": percentiles(ours_answer),
                     "langchain_search": percentiles(theirs)},
    }
    p50 = {k: v["p50_ms"] for k, v in result["query_ms"].items()}
    result["speedup_p50"] = {"search": round(p50["langchain_search"] / p50["ours_search"], 2),
                             "answer": round(p50["langchain_search"] / p50["ours_answer"], 2)}
    return result
