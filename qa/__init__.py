"""Question answering over news articles, every sentence cited to the sentence it came from."""

from qa.answer import NOT_COVERED, Answer, Choice, Part, Trace
from qa.api import answer, default_qa, retrieve
from qa.articles.load import Article, load_articles
from qa.config import Config, ReaderName
from qa.embedding.base import Embedder
from qa.embedding.transformer import SentenceTransformerEmbedder
from qa.engine import QA
from qa.errors import ArticleError, BadInput, IndexProblem, QAError
from qa.index.build import BuildReport
from qa.passage import Passage
from qa.readers.base import ReaderUnavailable

__all__ = [
    "NOT_COVERED",
    "QA",
    "Answer",
    "Article",
    "ArticleError",
    "BadInput",
    "BuildReport",
    "Choice",
    "Config",
    "Embedder",
    "IndexProblem",
    "Part",
    "Passage",
    "QAError",
    "ReaderName",
    "ReaderUnavailable",
    "SentenceTransformerEmbedder",
    "Trace",
    "answer",
    "default_qa",
    "load_articles",
    "retrieve",
]
