"""Crafted files that cost far more to read than their size: compressed Word and PDF bombs, a Word
file of markup padding, and a PDF of pages that are slow to parse. Used by the tests and eval/faults.py."""

from __future__ import annotations

import io
import zipfile
import zlib
from pathlib import Path

LINE = "All work and no play makes the archive a dull read. "


def _docx(path: Path, head_to_body: str, body: bytes, repeat: int) -> Path:
    """A real python-docx file whose body is replaced by `body` written `repeat` times, deflated."""
    import docx

    buffer = io.BytesIO()
    document = docx.Document()
    document.add_paragraph("Seed")
    document.save(buffer)
    source = zipfile.ZipFile(io.BytesIO(buffer.getvalue()))
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as out:
        for info in source.infolist():
            if info.filename != "word/document.xml":
                out.writestr(info, source.read(info.filename))
                continue
            head, tail = source.read(info.filename).decode().split(head_to_body, 1)
            member = zipfile.ZipInfo("word/document.xml")
            member.compress_type = zipfile.ZIP_DEFLATED
            with out.open(member, "w") as fh:  # streamed: the bomb is never whole in memory here
                fh.write((head + head_to_body).encode())
                for _ in range(repeat):
                    fh.write(body)
                fh.write(tail.encode())
    return path


def docx_bomb(folder: Path, chars: int = 50_000_000, name: str = "bomb.docx") -> Path:
    """A Word file of about 200 KB whose paragraphs hold `chars` characters of text."""
    paragraph = f"<w:p><w:r><w:t>{LINE * 80}</w:t></w:r></w:p>".encode()
    return _docx(folder / name, "<w:body>", paragraph, chars // (len(LINE) * 80))


def docx_padding(folder: Path, mb: int = 60, name: str = "padding.docx") -> Path:
    """A Word file of about 200 KB whose body is `mb` MB of empty paragraphs (markup, no text)."""
    block = b"<w:p><w:r><w:t></w:t></w:r></w:p>" * 10_000
    return _docx(folder / name, "<w:body>", block, mb * 1_000_000 // len(block))


def _pdf(path: Path, pages: list[bytes]) -> Path:
    """A PDF of one Helvetica page per content stream, each stream deflated."""
    objects = {1: b"<< /Type /Catalog /Pages 2 0 R >>",
               3: b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
    kids = []
    for i, content in enumerate(pages):
        page, stream = 4 + 2 * i, 5 + 2 * i
        kids.append(f"{page} 0 R".encode())
        objects[page] = (b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] "
                         b"/Resources << /Font << /F1 3 0 R >> >> /Contents %d 0 R >>" % stream)
        packed = zlib.compress(content, 9)
        objects[stream] = (b"<< /Length %d /Filter /FlateDecode >>\nstream\n%s\nendstream"
                           % (len(packed), packed))
    objects[2] = b"<< /Type /Pages /Kids [%s] /Count %d >>" % (b" ".join(kids), len(pages))
    out, offsets = bytearray(b"%PDF-1.4\n"), {}
    for number in sorted(objects):
        offsets[number] = len(out)
        out += b"%d 0 obj\n%s\nendobj\n" % (number, objects[number])
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    out += b"".join(b"%010d 00000 n \n" % offsets[n] for n in sorted(objects))
    out += b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref)
    path.write_bytes(bytes(out))
    return path


def pdf_bomb(folder: Path, mb: int = 10, name: str = "bomb.pdf") -> Path:
    """A PDF of about 35 KB: one page whose content stream inflates to `mb` MB of text operators."""
    line = f"BT /F1 12 Tf 72 720 Td ({LINE.strip()}) Tj ET\n".encode()
    return _pdf(folder / name, [line * (mb * 1_000_000 // len(line))])


def pdf_slow(folder: Path, pages: int = 40, mb: int = 3, name: str = "slow.pdf") -> Path:
    """A PDF of about 300 KB whose pages each hold `mb` MB of text-state operators and no text."""
    line = b"BT 1 0 0 1 0 0 Tm ET\n"
    return _pdf(folder / name, [line * (mb * 1_000_000 // len(line)) + b"%% page %d\n" % i
                                for i in range(pages)])
