"""What a user would build instead: LangChain's splitter (500 characters, 50 overlap), MiniLM vectors
in FAISS, the top 4 chunks, and the common "rag-prompt" (LangChain hub's rlm/rag-prompt), read by the
same language model the product reads with. It cites nothing, and refuses when it says it does not
know."""

from __future__ import annotations

import re
from collections.abc import Sequence

import numpy as np

from qa import QA

CHUNK, OVERLAP, TOP = 500, 50, 4
RAG_PROMPT = ("You are an assistant for question-answering tasks. Use the following pieces of "
              "retrieved context to answer the question. If you don't know the answer, just say that you "
              "don't know. Use three sentences maximum and keep the answer concise.\nQuestion: {question} "
              "\nContext: {context} \nAnswer:")
DONT_KNOW = re.compile(r"\b(don'?t|do not|does not|doesn'?t|cannot|can'?t) (know|say|mention|provide|"
                       r"specify|contain|state)|\bnot (mentioned|specified|provided|stated|in the context)\b",
                       re.I)
MAX_TOKENS = 200


class Peer:
    """The standard recipe over one engine's articles, with that engine's embedder and model."""

    def __init__(self, engine: QA) -> None:
        from langchain_text_splitters import RecursiveCharacterTextSplitter

        articles = [a.text for a in engine.index.articles.values()]
        splitter = RecursiveCharacterTextSplitter(chunk_size=CHUNK, chunk_overlap=OVERLAP)
        self.chunks = [c for text in articles for c in splitter.split_text(text)]
        self.embedder = engine.query_embedder
        self.vectors = self.embedder.embed(self.chunks)
        self.runtime = engine.runtime

    def top(self, question: str) -> list[str]:
        """The four chunks nearest the question (FAISS's flat inner product, as a numpy product)."""
        query = self.embedder.embed([question])[0]
        order = np.argsort(-(self.vectors @ query), kind="stable")[:TOP]
        return [self.chunks[i] for i in order]

    def answer(self, question: str, history: Sequence[str] = ()) -> tuple[str, bool]:
        """The recipe's reply and whether it answered (not "I don't know")."""
        asked = " ".join([*history[-1:], question]) if history else question
        context = "\n\n".join(self.top(asked))
        prompt = RAG_PROMPT.format(question=question, context=context)
        messages = [{"role": "user", "content": prompt}]
        reply = self.runtime.complete(messages, max_tokens=MAX_TOKENS).text.strip()
        return reply, bool(reply) and not DONT_KNOW.search(reply)
