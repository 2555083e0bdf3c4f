"""Files that expand far past their size: refused with one line once past the limit, in bounded memory and
time, by `qa add`, `qa build` and the converters alike, leaving the articles and the index as they were."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import article_files as files
import bombs
import pytest

import qa
from qa.articles.bounded import Worker
from qa.articles.converters import MAX_TEXT_CHARS
from qa.articles.converters.registry import converter
from qa.articles.load import articles_from_bytes
from qa.index.load import current_path

QA_BIN = str(Path(sys.executable).with_name("qa"))
TOO_LONG = f"expands to more than {MAX_TEXT_CHARS:,} characters"
# Runs a command and prints the peak resident memory of it and its children (the worker) in KB.
PEAK = ("import resource, subprocess, sys; code = subprocess.call(sys.argv[1:]); "
        "print('peak_kb', resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss, file=sys.stderr); "
        "sys.exit(code)")


def test_a_compressed_word_bomb_is_refused_once_past_the_limit(tmp_path: Path) -> None:
    bomb = bombs.docx_bomb(tmp_path, chars=50_000_000)
    assert bomb.stat().st_size < 300_000  # 50 million characters in about 200 KB
    with pytest.raises(qa.ArticleError, match=TOO_LONG) as refused:
        articles_from_bytes(bomb.name, bomb.read_bytes())
    assert "\n" not in str(refused.value) and str(refused.value).startswith("bomb.docx: ")


@pytest.mark.slow  # seconds of a worker running into its limit
def test_a_compressed_pdf_bomb_is_refused_once_past_the_limit(tmp_path: Path) -> None:
    bomb = bombs.pdf_bomb(tmp_path, mb=10)
    assert bomb.stat().st_size < 100_000  # 10 MB of page content, over 5 million characters
    with pytest.raises(qa.ArticleError, match=TOO_LONG):
        articles_from_bytes(bomb.name, bomb.read_bytes())


def test_plain_text_over_the_limit_is_refused_too() -> None:
    with pytest.raises(qa.ArticleError, match=TOO_LONG):
        articles_from_bytes("long.txt", b"word " * (MAX_TEXT_CHARS // 5 + 1))
    assert articles_from_bytes("fits.txt", b"word " * (MAX_TEXT_CHARS // 5 - 1))


@pytest.mark.slow  # seconds of a worker running into its limit
def test_markup_padding_is_refused_by_its_size_or_by_the_memory_limit(tmp_path: Path) -> None:
    padding = bombs.docx_padding(tmp_path, mb=100)  # no text at all: the body's markup alone
    with pytest.raises(qa.ArticleError, match="expands to more than 64,000,000 bytes of XML"):
        articles_from_bytes(padding.name, padding.read_bytes())
    padding = bombs.docx_padding(tmp_path, mb=60)  # within that: python-docx's tree passes the memory limit
    with Worker() as worker:
        with pytest.raises(qa.ArticleError, match="needs more than 1,024 MB of memory"):
            worker.convert(padding.name, padding.read_bytes())
        # The worker that ran out is replaced: the next file converts normally.
        fine = bombs.docx_bomb(tmp_path, chars=10_000, name="fine.docx")
        [article] = worker.convert(fine.name, fine.read_bytes())
        assert article.text.startswith("All work and no play") and article.text.endswith("\n\nSeed\n")


@pytest.mark.slow  # seconds of a worker running into its limit
def test_a_slow_pdf_runs_into_the_time_limit(tmp_path: Path) -> None:
    slow = bombs.pdf_slow(tmp_path, pages=40)  # each page parses for seconds and has no text
    with Worker(seconds=3) as worker, pytest.raises(qa.ArticleError, match="took more than 3 s"):
        worker.convert(slow.name, slow.read_bytes())


def test_the_worker_gives_what_the_converter_gives_in_process(tmp_path: Path) -> None:
    with Worker() as worker:
        for path in (files.page(tmp_path), files.word(tmp_path), files.rss(tmp_path), files.atom(tmp_path)):
            data = path.read_bytes()
            assert worker.convert(path.name, data) == converter(path.name)(path.name, data)


def _run(args: list[str], env: dict[str, str]) -> tuple[subprocess.CompletedProcess, int]:
    """Run a qa command; its result and the peak memory (KB) of it and its worker."""
    out = subprocess.run([sys.executable, "-c", PEAK, *args], env=env, capture_output=True, text=True,
                         timeout=600)
    lines = out.stderr.strip().splitlines()
    peak = int(lines.pop().split()[1])
    out.stderr = "\n".join(lines)
    return out, peak


def _folders(env: dict[str, str]) -> tuple[list[str], Path | None]:
    return sorted(os.listdir(env["QA_SEEDS_DIR"])), current_path(Path(env["QA_INDEX_DIR"]))


@pytest.mark.slow
def test_qa_add_refuses_both_bombs_with_one_line_in_bounded_memory(real_copy: dict, tmp_path: Path) -> None:
    before = _folders(real_copy)
    for bomb in (bombs.docx_bomb(tmp_path, chars=190_000_000), bombs.pdf_bomb(tmp_path, mb=10)):
        out, peak_kb = _run([QA_BIN, "add", str(bomb)], real_copy)
        assert out.returncode == 2, out.stderr
        assert out.stderr.splitlines() == [f"Refused: {bomb.name}: {TOO_LONG} of text (the limit per file); "
                                           "split it into smaller files"], out.stderr
        assert "Traceback" not in out.stdout + out.stderr
        assert peak_kb < 1_200_000, f"{bomb.name}: {peak_kb} KB"
        assert _folders(real_copy) == before


@pytest.mark.slow
def test_qa_build_with_a_bomb_in_the_folder_keeps_the_old_index(real_copy: dict[str, str]) -> None:
    before = current_path(Path(real_copy["QA_INDEX_DIR"]))
    bombs.docx_bomb(Path(real_copy["QA_SEEDS_DIR"]), chars=50_000_000, name="dropped_in.docx")
    out, _ = _run([QA_BIN, "build"], real_copy)
    assert out.returncode == 2
    assert out.stderr.strip().splitlines() == [
        f"Error: dropped_in.docx: {TOO_LONG} of text (the limit per file); split it into smaller files"]
    assert current_path(Path(real_copy["QA_INDEX_DIR"])) == before
