"""Word files (.docx): python-docx's paragraphs and the document's core properties."""

from __future__ import annotations

import io
import posixpath
import zipfile
from typing import IO

from qa.articles.converters import MAX_TEXT_CHARS, Extracted, clean, iso_date, text_date, too_long
from qa.errors import ArticleError

_W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
_OFFICE_DOCUMENT = "http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument"
_CORE = "http://schemas.openxmlformats.org/package/2006/relationships/metadata/core-properties"
# The package's relationships file names the main part; more than this is not a real one.
MAX_RELS_BYTES = 1_000_000
# Bytes of body XML a document may expand to per character of text it may hold: real documents
# spend 5-20 on markup; a file past this is markup padding, refused before it is parsed.
XML_PER_CHAR = 64


def _main_part(archive: zipfile.ZipFile) -> str:
    """The zip member holding the document's body, as the package's relationships name it."""
    from lxml import etree

    info = archive.getinfo("_rels/.rels")
    if info.file_size > MAX_RELS_BYTES:
        raise ValueError("oversized package relationships")
    root = etree.fromstring(archive.read(info), etree.XMLParser(resolve_entities=False, no_network=True))
    for rel in root:
        if rel.get("Type") == _OFFICE_DOCUMENT and rel.get("TargetMode") != "External":
            return posixpath.normpath(rel.get("Target", "").lstrip("/"))
    raise KeyError("no main document part")


class _Capped:
    """A zip member read through a byte budget: ArticleError once more than cap bytes are read."""

    def __init__(self, stream: IO[bytes], name: str, cap: int) -> None:
        self.stream, self.name, self.cap, self.read_bytes = stream, name, cap, 0

    def read(self, size: int = -1) -> bytes:
        chunk = self.stream.read(size)
        self.read_bytes += len(chunk)
        if self.read_bytes > self.cap:
            raise ArticleError(f"{self.name}: its body expands to more than {self.cap:,} bytes of XML, more "
                               "than a document within the text limit holds; it may be a compressed bomb")
        return chunk


def check_length(name: str, data: bytes, limit: int) -> None:
    """Refuse the document, having read at most limit characters of it, when its text passes limit.

    The body's XML is streamed out of the zip, so a compressed bomb costs what its first
    ``limit`` characters (or ``XML_PER_CHAR * limit`` bytes of markup) do, not what it expands to.
    """
    from lxml import etree

    try:
        with zipfile.ZipFile(io.BytesIO(data)) as archive, archive.open(_main_part(archive)) as member:
            body, seen = _Capped(member, name, XML_PER_CHAR * limit), 0
            for _, element in etree.iterparse(body, tag=(f"{_W}t", f"{_W}p"), resolve_entities=False,
                                              no_network=True):
                if element.tag == f"{_W}t":
                    seen += len(element.text or "")
                    if seen > limit:
                        raise too_long(name, limit)
                else:
                    # A paragraph counted is dropped: memory stays flat however long the body.
                    element.clear()
                    while element.getprevious() is not None:
                        del element.getparent()[0]
    except ArticleError:
        raise
    except Exception as exc:  # a damaged zip or XML raises many kinds
        raise ArticleError(f"{name}: not a readable Word file ({type(exc).__name__})") from exc


def convert(name: str, data: bytes, limit: int = MAX_TEXT_CHARS) -> list[Extracted]:
    """The document's paragraphs (one per line, blank lines dropped), title, author and date."""
    import docx  # lazily: only when such a file is read

    check_length(name, data, limit)
    try:
        document = docx.Document(io.BytesIO(data))
        paragraphs = [" ".join(p.text.split()) for p in document.paragraphs]
        title = author = created = None
        try:
            document.part.package.part_related_by(_CORE)
        except KeyError:
            pass  # no core properties: python-docx would make defaults, titled "Word Document"
        else:
            props = document.core_properties
            title, author, created = props.title, props.author, props.created
    except Exception as exc:  # a damaged zip or XML raises many kinds
        raise ArticleError(f"{name}: not a readable Word file ({type(exc).__name__})") from exc
    text = "\n\n".join(p for p in paragraphs if p)
    if not any(ch.isalnum() for ch in text):
        raise ArticleError(f"{name}: the document has no text")
    # The core properties' date is when the file was made: the article's own is the one its text gives.
    date = text_date(text)
    return [Extracted(text + "\n", clean(title), date, clean(author),
                      file_date=None if date else iso_date(created))]
