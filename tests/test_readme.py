"""The README's examples, run as written in a fresh project: the shipped seeds, their dates, the
command lines (each bracketed option too), both Python blocks and the chat's own command line; and
no page of the docs tells the reader to stop every Ray on the machine."""

from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest
from conftest import REAL_READ_TIMEOUT, SEEDS
from net import free_port
from reading import FALLBACK

from qa.articles.load import load_articles

ROOT = Path(__file__).resolve().parent.parent
README = (ROOT / "README.md").read_text("utf-8")
BIN = Path(sys.executable).parent


def section(heading: str, lang: str) -> list[str]:
    """The code blocks of one language under a README heading (up to the next heading)."""
    body = README.split(heading + "\n", 1)[1].split("\n## ", 1)[0]
    return re.findall(rf"```{lang}\n(.*?)```", body, re.S)


def variants(line: str) -> list[str]:
    """A synopsis line as runs: without its [optional] parts, then with each one (each choice of
    `a|b|c`) in turn."""
    line = line.split("  #", 1)[0].strip()
    groups = re.findall(r"\s*\[([^\]]+)\]", line)
    base = re.sub(r"\s*\[[^\]]+\]", "", line)
    runs = [base]
    for group in groups:
        flag, _, choices = group.partition(" ")
        runs += [f"{base} {flag} {choice}".rstrip() for choice in (choices.split("|") if choices else [""])]
    return runs


def test_the_synopsis_expands_each_option() -> None:
    assert variants('qa search "x" -k 3 [--mode a|b] [--json]   # note') == [
        'qa search "x" -k 3', 'qa search "x" -k 3 --mode a', 'qa search "x" -k 3 --mode b',
        'qa search "x" -k 3 --json']


def test_the_seeds_are_dated_and_the_eval_copy_matches() -> None:
    """The shipped articles carry their dates and sources in front matter (their text unchanged);
    eval/articles is the same files, and its checksums hold."""
    articles = {a.source: a for a in load_articles(SEEDS)}
    assert len(articles) == 4 and {a.date for a in articles.values()} == {"2020-03-11"}
    assert articles["000_c7bb87f1c58ab5e6.txt"].url == "https://www.dawn.com/news/1540093"
    assert articles["001_69f23e6ea4c5139a.txt"].author == "Reuters"
    assert articles["003_38bf3e2f376467a6.txt"].author == "AFP"
    for name, article in articles.items():
        raw = (SEEDS / name).read_text("utf-8")
        assert raw.startswith("---\n") and raw.endswith(article.text)  # the text after the front matter
        assert (ROOT / "eval" / "articles" / name).read_bytes() == (SEEDS / name).read_bytes()
    listed = (ROOT / "eval/articles/SHA256SUMS").read_text().splitlines()
    sums = dict(reversed(line.split()) for line in listed)
    assert sums == {n: hashlib.sha256((SEEDS / n).read_bytes()).hexdigest() for n in articles}


@pytest.fixture
def project(tmp_path: Path, model_cache: Path) -> Path:
    """A fresh project for each test (so none sees another's index): the shipped seeds and `.venv`;
    its commands use the tests' model cache (the reader's model linked in read-only)."""
    root = tmp_path / "project"
    shutil.copytree(SEEDS, root / "seeds")
    (root / ".venv").symlink_to(BIN.parent)
    return root


def _env(root: Path) -> dict[str, str]:
    # As a new user has it: no QA_* settings (the project found from here, the default reader), but
    # the tests' model cache, never ~/.cache/qa, time enough to read on a loaded machine, and under
    # pytest-xdist one thread to read and to embed (see conftest: threads spinning on cores the
    # workers share).
    threads = ("QA_READER_THREADS", "QA_BUILD_THREADS", "QA_ONNX_THREADS")
    kept = {"QA_CACHE_DIR": os.environ["QA_CACHE_DIR"], "QA_READ_TIMEOUT": str(REAL_READ_TIMEOUT),
            **{k: os.environ[k] for k in threads if k in os.environ}}
    return {**{k: v for k, v in os.environ.items() if not k.startswith("QA_")}, **kept, "HF_HUB_OFFLINE": "1"}


def _run(root: Path, line: str, stdin: str = "", timeout: float = 600) -> subprocess.CompletedProcess:
    out = subprocess.run(["bash", "-c", line], cwd=root, env=_env(root), input=stdin, capture_output=True,
                         text=True, timeout=timeout)
    assert out.returncode == 0, f"{line}\n{out.stdout[-2000:]}\n{out.stderr[-3000:]}"
    assert "Traceback" not in out.stderr, out.stderr[-3000:]
    return out


@pytest.mark.slow
def test_the_command_lines_run_as_written(project: Path) -> None:
    from article_files import rss, typeset_pdf

    [block] = section("## Command line", "bash")
    lines = [line for line in block.splitlines() if line.strip()]
    # `qa add`'s example names the user's files: give it such files.
    typeset_pdf(project, "report.pdf")
    (project / "feeds").mkdir()
    rss(project / "feeds")
    seen: dict[str, str] = {}
    for line in lines:
        for run in variants(line):
            command = run.split()[1]
            stdin = {"chat": "Who is the Taliban's spokesman?\nWhich agency did he speak to?\n\n",
                     "hash-password": "a long password\na long password\n"}.get(command, "")
            seen[run] = _run(project, run, stdin).stdout
    assert re.search(r"Indexed \d+ chunks", seen[".venv/bin/qa build"])
    ask = next(r for r in seen if r.startswith(".venv/bin/qa ask") and r.endswith("--since 2020-03-01"))
    assert "Sources:" in seen[ask] and "11 Mar 2020" in seen[ask]
    as_json = next(r for r in seen if r.startswith(".venv/bin/qa ask") and r.endswith("--json"))
    answer = json.loads(seen[as_json])
    assert answer["answered"] and all(c["date"] for c in answer["citations"])
    assert any("AFP" in text or "Reuters" in text for text in seen.values())
    assert seen[".venv/bin/qa hash-password alice"].startswith("alice:scrypt$")
    assert "Added 4 article(s) from 2 file(s)" in seen[".venv/bin/qa add report.pdf feeds/"]
    # Each option does what the README says, not just exit 0.
    asks = {r.removeprefix('.venv/bin/qa ask "Which agency reported Shaheen\'s phone remarks?"').strip(): out
            for r, out in seen.items() if r.startswith(".venv/bin/qa ask")}
    assert "Short answer: Reuters" in asks[""] and "; read by " in asks[""]  # the language model read it
    assert FALLBACK not in "".join(asks.values())
    assert "Sources:" in asks["--reader spans"] and "; read by " not in asks["--reader spans"]
    written = asks["--llm"]  # the model's answer, or why none: not the extractive one unchanged
    assert written != asks[""] and "Sources:" in written and "not installed" not in written
    _searched_as_each_mode(project, {r: o for r, o in seen.items() if r.startswith(".venv/bin/qa search")})
    first, follow = seen[".venv/bin/qa chat"].split("\n> ")[1:3]
    assert "Short answer: Suhail Shaheen" in first
    # "he" is the spokesman just named: the reply cites him (which agency it names, if any, is the
    # reader's to get right: the added report.pdf says he spoke, to no agency).
    assert "Sources:" in follow and "Shaheen" in follow.split("Sources:")[0]
    installed = seen[".venv/bin/qa install-reader"]
    cache = os.environ["QA_CACHE_DIR"]
    assert installed.startswith(f"The reader's model is ready: {cache}/models/"), installed


def _searched_as_each_mode(project: Path, runs: dict[str, str]) -> None:
    """Each --mode's hits are that retriever's, as qa.retrieve gives them over the same index."""
    import qa

    engine = qa.QA(qa.Config.from_env(seeds_dir=project / "seeds", index_dir=project / "index"))
    hit = re.compile(r"^\[\d+\] (\S+) (\d+)-", re.M)
    found = {run.rsplit("--mode ", 1)[1] if "--mode" in run else "": hit.findall(out)
             for run, out in runs.items() if "--json" not in run}
    assert found[""] == found["hybrid"]  # the default
    for mode in ("hybrid", "dense", "bm25"):
        hits = engine.retrieve("prisoner release", 3, mode)  # type: ignore[arg-type]
        want = [(p.source, str(p.start)) for p in hits]
        assert found[mode] == want, mode


@pytest.mark.slow
def test_the_python_blocks_run_as_written(project: Path) -> None:
    library, client = section("## Python", "python") + section("## Chat in the browser and its API", "python")
    # The block as written, then checks of what it made (the dated retrieve above all).
    checks = ("\nassert passages and recent and {p.date for p in recent} == {'2020-03-11'}\n"
              "assert answer.answered and follow.answered\n"
              # Read by the language model, and "he" is the spokesman the first answer named.
              f"assert [a.reader for a in (answer, follow)] == ['lm', 'lm'] and not any({FALLBACK!r} in "
              "(a.notice or '') for a in (answer, follow))\n"
              "assert answer.short == 'Suhail Shaheen' and 'Shaheen' in follow.query\n"
              "assert any('Shaheen' in c.text and ('Reuters' in c.text or 'AFP' in c.text) "
              "for c in follow.citations), follow.citations\n"
              "print('dated', len(recent))\n")
    (project / "example.py").write_text(library + checks, "utf-8")
    assert "dated" in _run(project, ".venv/bin/python example.py").stdout
    # The API block against the chat as the README starts it (its own port, the fast reader).
    port = free_port()
    env = {**_env(project), "QA_PORT": str(port), "QA_READER": "spans"}
    server = subprocess.Popen([str(project / ".venv/bin/python"), str(ROOT / "app.py")], cwd=project, env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    try:
        deadline = time.monotonic() + 300
        while True:
            assert server.poll() is None and time.monotonic() < deadline, server.stdout.read()[-3000:]
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/", timeout=5).close()
                break
            except OSError:
                time.sleep(1)
        (project / "client.py").write_text(client.replace("127.0.0.1:7860", f"127.0.0.1:{port}"), "utf-8")
        out = _run(project, ".venv/bin/python client.py", timeout=300).stdout
        assert "100" in out
    finally:
        server.terminate()
        server.wait(60)


def test_no_page_tells_the_reader_to_run_ray_stop() -> None:
    """`ray stop` stops every Ray process on the machine, another cluster's too: the docs stop theirs
    by its own process (`kill $ray`) and name `ray stop` only to warn of it."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    told = {}
    for page in pages:
        text = " ".join(page.read_text("utf-8").split())
        told[page.name] = [text[m.start():m.end() + 30] for m in re.finditer(r"ray stop", text)
                           if " every " not in text[m.end():m.end() + 30]]
    assert {name: found for name, found in told.items() if found} == {}
