"""Real article files for the format tests: a saved news page, its PDF printed by Chromium or typeset
without a browser, a Word file, RSS and Atom feeds, and the PDFs that must be refused (encrypted,
image-only)."""

from __future__ import annotations

import io
from datetime import UTC
from pathlib import Path

SENTENCE = ("Afghanistan will release 100 Taliban prisoners a day starting on Saturday, "
            "the government said on Wednesday.")
BOILERPLATE = ("Subscribe to our newsletter", "Buy cheap watches", "All rights reserved", "Markets Home")

PAGE = f"""<!doctype html>
<html lang="en"><head><meta charset="utf-8">
<title>Afghanistan to free Taliban prisoners | Reuters</title>
<meta name="author" content="Jane Doe">
<meta property="og:site_name" content="Reuters">
<meta property="article:published_time" content="2020-03-11T08:00:00Z">
<link rel="canonical" href="https://www.reuters.com/article/us-afghanistan-prisoners">
</head><body>
<header><nav><ul><li><a href="/">Markets Home</a></li><li><a href="/world">World</a></li>
<li><a href="/business">Business</a></li><li><a href="/tech">Technology</a></li></ul></nav></header>
<aside class="ad">Advertisement: Buy cheap watches now, 70% off!</aside>
<main><article>
<h1>Afghanistan to free Taliban prisoners</h1>
<p class="byline">By Jane Doe, March 11, 2020</p>
<p>KABUL (Reuters) - {SENTENCE}</p>
<p>The release is part of a deal signed in Doha between the United States and the Taliban last
month, which calls for up to 5,000 prisoners to be freed before talks begin.</p>
<p>Suhail Shaheen, a spokesman for the Taliban political office in Qatar, said the group would
verify the identities of all the prisoners before accepting them.</p>
<p>President Ashraf Ghani signed a decree on Tuesday ordering the release of 1,500 prisoners,
a first step toward the 5,000 demanded by the militants.</p>
</article></main>
<aside><h3>Subscribe to our newsletter</h3><p>Get the day's top stories in your inbox.</p></aside>
<footer><p>© 2020 Reuters. All rights reserved.</p><a href="/privacy">Privacy</a></footer>
</body></html>
"""


def page(folder: Path, name: str = "prisoners.html") -> Path:
    """The saved news page."""
    path = folder / name
    path.write_text(PAGE, "utf-8")
    return path


def printed_pdf(folder: Path, name: str = "prisoners.pdf") -> Path:
    """The news page printed to PDF by Chromium (Playwright's page.pdf), in a thread of its own:
    Playwright's sync API cannot start inside another one this thread runs (a module fixture's)."""
    from concurrent.futures import ThreadPoolExecutor

    with ThreadPoolExecutor(1) as pool:
        return pool.submit(_print_pdf, folder, name).result()


def _print_pdf(folder: Path, name: str) -> Path:
    from net import chromium

    html = page(folder, "_print.html")
    path = folder / name
    with chromium() as browser:
        tab = browser.new_page()
        tab.goto(html.as_uri())
        tab.pdf(path=str(path), format="A4")
    html.unlink()
    return path


# What the page shows a reader, as lines of the typeset PDF: its headline, byline and paragraphs.
ARTICLE = ["Afghanistan to free Taliban prisoners", "By Jane Doe, March 11, 2020", "",
           f"KABUL (Reuters) - {SENTENCE}", "",
           "The release is part of a deal signed in Doha between the United States and the Taliban last "
           "month, which calls for up to 5,000 prisoners to be freed before talks begin.", "",
           "Suhail Shaheen, a spokesman for the Taliban political office in Qatar, said the group would "
           "verify the identities of all the prisoners before accepting them."]


def typeset_pdf(folder: Path, name: str = "report.pdf") -> Path:
    """The page's article as a one-page PDF with a text layer (Helvetica, 11 pt), written by pypdf
    without a browser: for the tests of `qa add` whose subject is not Chromium's printing."""
    import textwrap

    import pypdf
    from bombs import _pdf

    lines = [wrapped for line in ARTICLE for wrapped in (textwrap.wrap(line, 88) or [""])]
    shown = "".join("(" + line.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)") + ") Tj T*\n"
                    for line in lines)
    raw = _pdf(folder / f"_{name}", [f"BT /F1 11 Tf 14 TL 56 770 Td\n{shown}ET\n".encode("latin-1")])
    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(raw))  # re-written whole by the library
    writer.add_metadata({"/Title": ARTICLE[0], "/Author": "Jane Doe"})
    path = folder / name
    with path.open("wb") as fh:
        writer.write(fh)
    raw.unlink()
    return path


def word(folder: Path, name: str = "briefing.docx") -> Path:
    """A Word file written by python-docx, with title, author and creation date set."""
    import datetime as dt

    import docx

    document = docx.Document()
    document.add_heading("Briefing on the prisoner release", level=1)
    document.add_paragraph("Officials in Kabul said 1,500 prisoners would be freed in the first week.")
    document.add_paragraph("")
    document.add_paragraph("The Taliban said they would check every name on the list before the exchange.")
    props = document.core_properties
    props.title, props.author = "Prisoner release briefing", "Kabul desk"
    props.created = dt.datetime(2020, 3, 12, 9, 30)
    path = folder / name
    document.save(str(path))
    return path


ENTRIES = [
    ("Talks open in Doha", "2020-03-02", "https://example.org/news/1",
     "<p>Delegations from Kabul and the Taliban met in <b>Doha</b> to open the talks.</p>"),
    ("Prisoner exchange delayed", "2020-03-09", "https://example.org/news/2",
     "<p>The exchange of prisoners was delayed by a dispute over the list of names.</p>"
     "<script>alert(1)</script>"),
    ("Ceasefire extended", "2020-03-16", "https://example.org/news/3",
     "<p>The partial ceasefire was extended by another week, both sides said.</p>"),
]


def rss(folder: Path, name: str = "wire.rss") -> Path:
    """An RSS 2.0 feed file with three entries whose descriptions are HTML."""
    import email.utils
    from datetime import datetime
    from html import escape

    items = "".join(
        f"<item><title>{t}</title><link>{u}</link><author>desk@example.org (Wire desk)</author>"
        f"<pubDate>{email.utils.format_datetime(datetime.fromisoformat(d).replace(tzinfo=UTC))}"
        f"</pubDate><description>{escape(body)}</description></item>" for t, d, u, body in ENTRIES)
    path = folder / name
    path.write_text(f'<?xml version="1.0"?><rss version="2.0"><channel><title>Wire</title>'
                    f"<link>https://example.org/</link><description>News</description>{items}"
                    "</channel></rss>", "utf-8")
    return path


def atom(folder: Path, name: str = "wire.atom") -> Path:
    """An Atom feed file with three entries whose content is HTML."""
    from html import escape

    entries = "".join(
        f'<entry><title>{t}</title><link href="{u}"/><id>{u}</id><updated>{d}T10:00:00Z</updated>'
        f'<author><name>Wire desk</name></author><content type="html">{escape(body)}</content></entry>'
        for t, d, u, body in ENTRIES)
    path = folder / name
    path.write_text('<?xml version="1.0" encoding="utf-8"?><feed xmlns="http://www.w3.org/2005/Atom">'
                    '<title>Wire</title><id>urn:wire</id><updated>2020-03-16T10:00:00Z</updated>'
                    f"{entries}</feed>", "utf-8")
    return path


def encrypted_pdf(source: Path, folder: Path, name: str = "locked.pdf") -> Path:
    """A copy of a PDF encrypted with a password (pypdf)."""
    import pypdf

    writer = pypdf.PdfWriter(clone_from=pypdf.PdfReader(source))
    writer.encrypt("secret", algorithm="RC4-128")
    path = folder / name
    with path.open("wb") as fh:
        writer.write(fh)
    return path


def image_pdf(folder: Path, name: str = "scan.pdf") -> Path:
    """A PDF holding only an image of text (no text layer), as a scanner makes."""
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (800, 300), "white")
    ImageDraw.Draw(image).text((20, 20), SENTENCE[:60], fill="black")
    buffer = io.BytesIO()
    image.save(buffer, "PDF")
    path = folder / name
    path.write_bytes(buffer.getvalue())
    return path
