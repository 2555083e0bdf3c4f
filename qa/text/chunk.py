"""Chunking: sentence-aware chunks with exact offsets, built on langchain-text-splitters."""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from qa.articles.load import Article
from qa.errors import BadInput
from qa.text.sentences import split_sentences


@dataclass(frozen=True)
class Chunk:
    """A run of whole sentences of one article: ``article.text[start:end] == text``."""

    source: str
    start: int
    end: int
    text: str


@lru_cache(maxsize=1)
def splitter_class() -> type:
    """The sentence splitter class, made on first use: answering never imports langchain."""
    from langchain_text_splitters import RecursiveCharacterTextSplitter, TextSplitter

    class SentenceTextSplitter(TextSplitter):
        """A langchain splitter whose pieces are whole sentences (words for an over-long one)."""

        def __init__(self, chunk_size: int = 600, chunk_overlap: int = 120) -> None:
            if chunk_size <= 0 or not 0 <= chunk_overlap < chunk_size:
                raise BadInput(
                    f"chunk_size={chunk_size}, chunk_overlap={chunk_overlap}: "
                    "need chunk_size > 0 and 0 <= chunk_overlap < chunk_size"
                )
            super().__init__(chunk_size=chunk_size, chunk_overlap=chunk_overlap, strip_whitespace=False)
            self._words = RecursiveCharacterTextSplitter(
                chunk_size=chunk_size, chunk_overlap=0, separators=[" ", ""], keep_separator="end",
                strip_whitespace=False,
            )

        def split_text(self, text: str) -> list[str]:
            """Split text into chunks; joining pieces with "" keeps them exact substrings."""
            return self._merge_splits(self._pieces(text), separator="")

        def _pieces(self, text: str) -> list[str]:
            """Sentences, each with the whitespace that follows it, cut into words if too long."""
            spans = split_sentences(text)
            pieces: list[str] = []
            for i, (start, _end) in enumerate(spans):
                stop = spans[i + 1][0] if i + 1 < len(spans) else len(text)
                piece = text[start:stop]
                if len(piece) > self._chunk_size:
                    pieces.extend(self._words.split_text(piece))
                else:
                    pieces.append(piece)
            return pieces

    return SentenceTextSplitter


def chunk_article(article: Article, chunk_size: int = 600, chunk_overlap: int = 120) -> list[Chunk]:
    """Chunk one article, locating each chunk's exact offsets in the article text."""
    splitter = splitter_class()(chunk_size, chunk_overlap)
    chunks: list[Chunk] = []
    cursor = 0
    for piece in splitter.split_text(article.text):
        body = piece.strip()
        if not body:
            continue
        # Overlapping chunks start before the previous one ends, never before it starts.
        search_from = chunks[-1].start + 1 if chunks else 0
        start = article.text.find(body, min(search_from, cursor))
        if start < 0:
            raise AssertionError(f"chunk not found in {article.source}")  # splitter invariant
        end = start + len(body)
        chunks.append(Chunk(article.source, start, end, body))
        cursor = end
    return chunks
