"""Question answering over news articles, every sentence cited to the sentence it came from."""

from .answer import NOT_COVERED, Answer
from .articles import Article, load_articles
from .build import BuildReport
from .config import Config
from .embed import Embedder, SentenceTransformerEmbedder
from .engine import QA, answer, default_qa, retrieve
from .errors import ArticleError, IndexProblem, QAError
from .passage import Passage

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
