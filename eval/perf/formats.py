"""Extraction time per format on realistic files made from a seed article: `python -m eval formats`.

A saved news page (the article inside a site's menus, ads, related links, scripts and footer),
that page printed to PDF by Chromium, a Word file and an RSS feed of the four seed articles."""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from html import escape
from pathlib import Path

from eval.paths import ROOT, output_file
from eval.progress import Steps
from qa.articles.bounded import Worker
from qa.articles.load import articles_from_bytes

sys.path.insert(0, str(ROOT / "tests"))
from net import chromium  # the tests' Chromium (Debian's, headless), opened the same way

SEEDS = sorted((ROOT / "seeds").glob("*.txt"))


def news_page(text: str) -> str:
    """A seed article as a news site serves it."""
    title, _, body = text.partition("\n")
    paragraphs = "".join(f"<p>{escape(p)}</p>" for p in body.split("\n") if p.strip())
    nav = "".join(f'<li><a href="/section/{i}">Section {i}</a></li>' for i in range(40))
    related = "".join(f'<li><a href="/story/{i}">Related story number {i} about the region</a></li>'
                      for i in range(30))
    script = "<script>" + "var tracking = {};" * 2000 + "</script>"
    ad = '<div class="ad">Advertisement: subscribe today and save 50% on your first year</div>'
    return (f"<!doctype html><html><head><title>{escape(title[:80])} | Daily News</title>"
            '<meta name="author" content="Staff Reporter">'
            '<meta property="article:published_time" content="2020-03-11T08:00:00Z">'
            f'<link rel="canonical" href="https://news.example.com/a/1">{script}</head><body>'
            f"<header><nav><ul>{nav}</ul></nav></header>{ad}<main><article><h1>{escape(title)}</h1>"
            f"{paragraphs}{ad}</article><aside><h3>Related</h3><ul>{related}</ul></aside></main>"
            "<footer><p>© 2020 Daily News. All rights reserved.</p></footer></body></html>")


def make(folder: Path) -> list[Path]:
    import docx

    text = max((p.read_text("utf-8") for p in SEEDS), key=len)
    page = folder / "page.html"
    page.write_text(news_page(text), "utf-8")
    pdf = folder / "page.pdf"
    with chromium() as browser:
        tab = browser.new_page()
        tab.goto(page.as_uri())
        tab.pdf(path=str(pdf), format="A4")
    document = docx.Document()
    for paragraph in text.split("\n"):
        document.add_paragraph(paragraph)
    word = folder / "article.docx"
    document.save(str(word))
    items = "".join(f"<item><title>{escape(p.read_text('utf-8').partition(chr(10))[0][:80])}</title>"
                    f"<link>https://news.example.com/{i}</link>"
                    "<pubDate>Wed, 11 Mar 2020 08:00:00 GMT</pubDate>"
                    f"<description>{escape(news_page(p.read_text('utf-8')))}</description></item>"
                    for i, p in enumerate(SEEDS))
    feed = folder / "feed.rss"
    feed.write_text(f'<?xml version="1.0"?><rss version="2.0"><channel><title>Daily News</title>{items}'
                    "</channel></rss>", "utf-8")
    return [page, pdf, word, feed]


def _median_ms(name: str, data: bytes) -> tuple[float, list]:
    """Median of 5 warm extractions of data (as a file called name), and the articles.

    One conversion worker serves them all, as in a build: its start-up (about 0.3 s, once per
    build or upload) is left out.
    """
    with Worker() as worker:
        articles_from_bytes(name, data, worker)  # starts the worker, imports and warms up
        runs = []
        for _ in range(5):
            began = time.perf_counter()
            articles = articles_from_bytes(name, data, worker)
            runs.append((time.perf_counter() - began) * 1000)
    return statistics.median(runs), articles


def main() -> None:
    """Time each format's extraction against reading the same text as a .txt, in one run."""
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--out", type=Path, default=output_file("formats.json", False))
    args = parser.parse_args()
    rows = {}
    steps = Steps("formats", {"make the files (Chromium prints the PDF)": 15, ".html": 5, ".pdf": 10,
                              ".docx": 5, ".rss": 5})
    with tempfile.TemporaryDirectory() as tmp:
        steps.step("make the files (Chromium prints the PDF)")
        for path in make(Path(tmp)):
            steps.step(path.suffix, path.name)
            data = path.read_bytes()
            ms, articles = _median_ms(path.name, data)
            text = "\n\n".join(a.text for a in articles)
            txt_ms, _ = _median_ms("same.txt", text.encode("utf-8"))
            rows[path.suffix] = {"kb": round(len(data) / 1024, 1), "articles": len(articles),
                                 "chars": len(text), "median_ms": round(ms, 2),
                                 "ratio_to_txt": round(ms / txt_ms, 1)}
            print(f"{path.suffix:6} {len(data) / 1024:7.1f} KB -> {len(articles)} article(s), "
                  f"{len(text):,} chars: {ms:6.1f} ms (median of 5) = {ms / txt_ms:.0f}x reading it as .txt")
    steps.finish()
    args.out.write_text(json.dumps({"formats": rows}, indent=1), "utf-8")


if __name__ == "__main__":
    main()
