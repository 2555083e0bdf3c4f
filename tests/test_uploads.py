"""Uploads: safe names, refusals that leave nothing behind, concurrent uploads, questions during rebuilds."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import bombs
import pytest
from net import serving
from reading import read_by_model

import qa
from qa.articles.uploads import check_upload, may_upload, safe_name
from qa.index.load import current_path, load_index
from qa.text.nlp import Tagger

SEEDS = Path(__file__).parent.parent / "seeds"
GOOD = b"Harbour Notes\n\nThe Tollby harbour handled 73 ferries in March, its port office said.\n"


def _state(engine: qa.QA) -> tuple[list[str], Path | None]:
    """Every file name in the articles folder (hidden ones too) and the index folder in use."""
    return sorted(os.listdir(engine.config.seeds_dir)), current_path(engine.config.index_dir)


@pytest.mark.parametrize(("name", "safe"), [
    ("report.txt", "report.txt"), ("../../etc/cron.d/evil.TXT", "evil.txt"),
    ("C:\\Users\\x\\a b?.md", "a_b.md"), (".hidden.txt", "hidden.txt"),
    ("Zürich news.txt", "Zurich_news.txt"), ("北京.txt", None), ("a" * 300 + ".txt", "a" * 100 + ".txt"),
])
def test_safe_names(name: str, safe: str | None) -> None:
    if safe is None:
        with pytest.raises(qa.ArticleError, match="no ASCII letters or digits"):
            safe_name(name)
    else:
        assert safe_name(name) == safe


@pytest.mark.parametrize("name", ["report.jpg", "noext", "...txt", "???.txt", "", "dir/.md"])
def test_unsafe_names_are_refused(name: str) -> None:
    with pytest.raises(qa.ArticleError) as err:
        safe_name(name)
    assert "\n" not in str(err.value)


def test_rights() -> None:
    assert not may_upload(qa.Config(), None) and not may_upload(qa.Config(), "alice")
    assert may_upload(qa.Config.of(uploads=True), None)
    team = qa.Config.of(uploaders="alice, carol")
    assert may_upload(team, "alice") and may_upload(team, "carol") and not may_upload(team, "bob")
    assert not may_upload(team, None)


@pytest.mark.parametrize(("data", "message"), [
    (b"x" * 1_000_001, "over the 1 MB limit"),
    (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "not a text file"),
    (b"caf\xe9 au lait", "not valid UTF-8"),
    (bytes(range(1, 32)) * 4, "not a text file"),
    (b"  \n\t \n", "empty"),
    (b"!!! ... ???", "no words"),
])
def test_non_text_and_oversized_are_refused(data: bytes, message: str) -> None:
    with pytest.raises(qa.ArticleError, match=message) as err:
        check_upload("x.txt", data)
    assert "\n" not in str(err.value)


def test_each_refusal_writes_nothing(fake_qa: qa.QA, tmp_path: Path) -> None:
    seeds = fake_qa.config.seeds_dir
    fake_qa.build()
    outside = tmp_path / "outside.txt"
    outside.write_text("secret")
    (seeds / "link.txt").symlink_to(outside)
    (seeds / "dangling.md").symlink_to(tmp_path / "nowhere.md")
    existing = sorted(p.name for p in seeds.glob("*.txt") if not p.is_symlink())[0]
    before = _state(fake_qa)
    cases = [
        (existing, GOOD, "already exists"),
        ("sub/" + existing, GOOD, "already exists"),
        ("link.txt", GOOD, "a symlink with this name already exists"),
        ("dangling.md", GOOD, "a symlink"),
        ("big.txt", b"word " * 250_000, "over the 1 MB limit"),
        ("photo.txt", b"\xff\xd8\xff\xe0\x00\x10JFIF\x00", "not a text file"),
        ("photo.jpg", GOOD, "unknown format"),
    ]
    for name, data, message in cases:
        with pytest.raises(qa.ArticleError, match=message):
            fake_qa.add_article(name, data)
        assert _state(fake_qa) == before, name
    assert outside.read_text() == "secret"
    limited = qa.QA(fake_qa.config.replace(max_articles=len(fake_qa.index.articles)),
                    embedder=fake_qa.embedder)
    with pytest.raises(qa.ArticleError, match="QA_MAX_ARTICLES"):
        limited.add_article("one_more.txt", GOOD)
    assert _state(fake_qa) == before
    load_index(fake_qa.config.index_dir)


def test_an_upload_is_saved_under_its_safe_name(fake_qa: qa.QA) -> None:
    fake_qa.add_article("../../tmp/Tollby harbour!.txt", GOOD)
    assert (fake_qa.config.seeds_dir / "Tollby_harbour.txt").read_bytes() == GOOD
    assert "Tollby_harbour.txt" in fake_qa.index.articles
    assert not list(fake_qa.config.seeds_dir.glob(".*.upload"))
    # The saved file matches what was indexed: a fresh engine finds nothing to rebuild.
    assert qa.QA(fake_qa.config, embedder=fake_qa.embedder).build().up_to_date


def test_a_failed_build_leaves_nothing(fake_qa: qa.QA, monkeypatch: pytest.MonkeyPatch) -> None:
    fake_qa.build()
    before = _state(fake_qa)

    def broken(*args: object, **kwargs: object) -> None:
        raise qa.IndexProblem("the disk is full: free some space")

    monkeypatch.setattr("qa.engine.library.build_index", broken)
    with pytest.raises(qa.IndexProblem):
        fake_qa.add_article("harbour.txt", GOOD)
    assert _state(fake_qa) == before


# ---- The real model behind a real server ------------------------------------------------------

@pytest.fixture
def open_server(real_qa: qa.QA, tmp_path: Path) -> Iterator[tuple[str, qa.QA, GatedTagger]]:
    """Uploads on for everyone, no sign-in, on loopback, over a private copy of seeds/ (each test's
    own: no upload is left for the next); its builds tag through a gate that is open."""
    shutil.copytree(SEEDS, tmp_path / "seeds")
    config = real_qa.config.replace(seeds_dir=tmp_path / "seeds", index_dir=tmp_path / "index", uploads=True,
                                    rate=0)
    tagger = GatedTagger(config.indexing.nlp)
    tagger.go.set()
    engine = qa.QA(config, embedder=real_qa.embedder, tagger=tagger)
    engine.build()
    with serving(engine) as url:
        yield url, engine, tagger


def _article(n: int) -> bytes:
    return (f"Ferry Report {n}\n\nThe Tollby{n} ferry carried {400 + n} passengers on its first "
            f"crossing. " + " ".join(f"Crossing {m} of the Tollby{n} ferry took {20 + m} minutes."
                                     for m in range(60))).encode()


@pytest.mark.slow
def test_two_concurrent_uploads_are_both_indexed(open_server: tuple[str, qa.QA, GatedTagger], tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    from gradio_client import Client, handle_file
    from gradio_client.utils import Status

    url, engine, tagger = open_server
    paths = []
    for n in (1, 2):
        paths.append(tmp_path / "sent" / f"ferry_{n}.txt")
        paths[-1].parent.mkdir(exist_ok=True)
        paths[-1].write_bytes(_article(n))
    # The barrier: the first upload is held in its build (holding the folder) until the second one
    # is at the server too, waiting in Gradio's line for uploads or inside add_article; uploads
    # sent one after the other never get there.
    inside: list[str] = []
    add = engine.add_article

    def counted(name: str, *args: object, **kwargs: object) -> object:
        inside.append(name)
        return add(name, *args, **kwargs)

    monkeypatch.setattr(engine, "add_article", counted)
    tagger.go.clear()
    tagger.waiting.clear()
    jobs = []
    try:
        jobs.append(Client(url, verbose=False).submit(handle_file(str(paths[0])), api_name="/upload"))
        assert tagger.waiting.wait(120), "the first upload's build never reached tagging"
        jobs.append(Client(url, verbose=False).submit(handle_file(str(paths[1])), api_name="/upload"))
        deadline = time.monotonic() + 120
        while not (len(inside) == 2 or jobs[1].status().code == Status.IN_QUEUE):
            assert time.monotonic() < deadline, f"the second upload never met the first: {inside}"
            time.sleep(0.05)
        assert inside == ["ferry_1.txt"] or len(inside) == 2  # the first is still held in its build
    finally:
        tagger.go.set()
    statuses = {p.name: job.result(timeout=300)[0] for p, job in zip(paths, jobs, strict=True)}
    for p in paths:
        assert f"Added {p.name}" in statuses[p.name]
        assert (engine.config.seeds_dir / p.name).read_bytes() == p.read_bytes()
        assert p.name in engine.index.articles
    assert load_index(engine.config.index_dir).meta["counts"]["articles"] == 6
    client = Client(url, verbose=False)
    answer = client.predict("How many passengers did the Tollby2 ferry carry on its first crossing?",
                            api_name="/ask")
    read_by_model(answer)
    assert answer["answered"] and "402" in answer["text"]


class GatedTagger(Tagger):
    """The real tagger, holding each build (which holds the upload lock) until it is let through."""

    def __init__(self, nlp: str) -> None:
        super().__init__(nlp)
        self.waiting, self.go = threading.Event(), threading.Event()

    def tag(self, texts, sentences, batch_size=32, progress=False):  # type: ignore[no-untyped-def]
        if texts:
            self.waiting.set()
            assert self.go.wait(120), "the test never let the build through"
        return super().tag(texts, sentences, batch_size, progress)


def _asked(engine: qa.QA, question: str) -> tuple[qa.Answer, object]:
    """engine.answer from another thread, with the index that answered; fails rather than waits."""
    got: list[tuple[qa.Answer, object]] = []

    def ask() -> None:
        answerer = engine.answerer  # what engine.answer does, keeping hold of the index it used
        got.append((answerer.answer(question), answerer.retriever.index))

    thread = threading.Thread(target=ask)
    thread.start()
    thread.join(60)
    assert got, "a question waited for the build"
    answer, index = got[0]
    for p in (*answer.citations, *answer.passages):
        assert index.articles[p.source].text[p.start:p.end] == p.text
    return answer, index


@pytest.mark.slow
def test_a_compressed_bomb_upload_is_refused_at_once(open_server: tuple[str, qa.QA, GatedTagger],
                                                     tmp_path: Path) -> None:
    from gradio_client import Client, handle_file

    url, engine, _ = open_server
    before = _state(engine)
    bomb = bombs.docx_bomb(tmp_path, chars=50_000_000)
    status = Client(url, verbose=False).predict(handle_file(str(bomb)), api_name="/upload")[0]
    assert "Not added: bomb.docx: expands to more than 1,000,000 characters" in status
    assert _state(engine) == before


@pytest.mark.slow
def test_questions_are_answered_while_uploads_rebuild(real_qa: qa.QA, tmp_path: Path) -> None:
    """Each upload held mid-build: questions are answered from the old index, then from the new."""
    shutil.copytree(SEEDS, tmp_path / "seeds")
    tagger = GatedTagger(real_qa.config.indexing.nlp)
    engine = qa.QA(real_qa.config.replace(seeds_dir=tmp_path / "seeds", index_dir=tmp_path / "index"),
                   embedder=real_qa.embedder, tagger=tagger)
    tagger.go.set()
    engine.build()
    for n in (3, 4):
        tagger.go.clear()
        tagger.waiting.clear()
        old = engine.index.path
        upload = threading.Thread(target=engine.add_article, args=(f"ferry_{n}.txt", _article(n)))
        upload.start()
        assert tagger.waiting.wait(120), "the upload's build never reached tagging"
        during, index = _asked(engine, "How many Taliban prisoners will be released each day?")
        read_by_model(during)
        assert during.answered and during.short == "100" and index.path == old
        ferry = f"How many passengers did the Tollby{n} ferry carry on its first crossing?"
        assert f"ferry_{n}.txt" not in {p.source for p in _asked(engine, ferry)[0].passages}
        tagger.go.set()
        upload.join(120)
        assert not upload.is_alive()
        after, index = _asked(engine, ferry)
        read_by_model(after)
        assert index.path != old and after.citations[0].source == f"ferry_{n}.txt"
        assert str(400 + n) in after.citations[0].text


HOLD = ("import sys; from pathlib import Path; from qa.articles.uploads import FolderLock\n"
        "with FolderLock(Path(sys.argv[1])):\n    print('held', flush=True)\n    sys.stdin.readline()\n")


def _waits_on(path: Path) -> bool:
    """True when this process is blocked in flock on path (a "->" line of /proc/locks)."""
    inode = f":{path.stat().st_ino} "
    return any(line.split()[1] == "->" and f" {os.getpid()} " in line and inode in line
               for line in Path("/proc/locks").read_text().splitlines())


def test_the_upload_lock_holds_across_processes(fake_qa: qa.QA) -> None:
    fake_qa.build()
    holder = subprocess.Popen([sys.executable, "-c", HOLD, str(fake_qa.config.index_dir)],
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        upload = threading.Thread(target=fake_qa.add_article, args=("harbour.txt", GOOD))
        upload.start()
        lock = fake_qa.config.index_dir / ".uploads.lock"
        deadline = time.monotonic() + 60
        while upload.is_alive() and not _waits_on(lock) and time.monotonic() < deadline:
            time.sleep(0.01)
        # The upload waits on the other process's lock: nothing of it is in the folder or the index.
        assert upload.is_alive() and _waits_on(lock)
        assert not (fake_qa.config.seeds_dir / "harbour.txt").exists()
        assert "harbour.txt" not in fake_qa.index.articles
    finally:
        holder.communicate("\n", timeout=30)
    upload.join(60)
    assert not upload.is_alive() and "harbour.txt" in fake_qa.index.articles
