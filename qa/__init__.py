"""Question answering over news articles, every sentence cited to the sentence it came from."""

from qa.answer import NOT_COVERED, Answer
from qa.api import answer, default_qa, retrieve
from qa.articles.load import Article, load_articles
from qa.config import Config
from qa.embedding.base import Embedder
from qa.embedding.transformer import SentenceTransformerEmbedder
from qa.engine import QA
from qa.errors import ArticleError, IndexProblem, QAError
from qa.index.build import BuildReport
from qa.passage import Passage

__all__ = [
    "NOT_COVERED",
    "QA",
    "Answer",
    "Article",
    "ArticleError",
    "BuildReport",
    "Config",
    "Embedder",
    "IndexProblem",
    "Passage",
    "QAError",
    "SentenceTransformerEmbedder",
    "answer",
    "default_qa",
    "load_articles",
    "retrieve",
]
