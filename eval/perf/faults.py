"""Faults: `qa build` and an upload's build killed with SIGKILL at random moments, a full disk, and
files built to expand (compressed Word and PDF bombs, markup padding, a PDF slow to parse).

After each kill the index must pass its checksum check and `qa ask` must answer with exact
offsets; a killed upload must leave the articles and the index as they were, or hold the whole
upload when the kill lands after it saved its file (while the process exits). Each bomb must be
refused by `qa add` with one line, in bounded memory, leaving both as they were, and a bomb
dropped into the folder must stop `qa build` with one line while the old index stays in use.

    .venv/bin/python -m eval faults [--publish]   # 10 build kills, 3 upload kills, full disk, bombs
"""

from __future__ import annotations

import argparse
import json
import random
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from eval.paths import ROOT, RUNS, eval_articles
from eval.perf.processes import QA_BIN, env_for, kill_at, measured, timed_build
from eval.progress import Steps, bar
from qa.articles.load import load_articles
from qa.index.load import current_path, load_index

sys.path.insert(0, str(ROOT / "tests"))
import bombs  # the test suite's bombs, made the same way

QUESTION = "How many Taliban prisoners will be released each day?"
RESULTS = RUNS / "faults.json"


def corpus(seeds: Path, variant: int, articles: int = 12) -> None:
    """Write (or rewrite) articles made of shuffled seed sentences: every chunk new per variant."""
    sentences = [s.strip() + "." for p in sorted(eval_articles().glob("*.txt"))
                 for s in p.read_text().replace("\n", " ").split(". ") if len(s.split()) > 4]
    rng = random.Random(variant)
    for j in range(articles):
        picked = rng.sample(sentences, min(len(sentences), 28))
        text = f"Corpus report {variant}-{j}\n\n" + " ".join(picked) + f"\nFiled as report {variant}-{j}.\n"
        (seeds / f"zz_corpus_{j:02d}.txt").write_text(text)


def snapshot(root: Path) -> tuple[dict[str, str], Path | None]:
    """The article files (name -> sha256) and the index folder in use."""
    articles = {a.source: a.sha256 for a in load_articles(root / "seeds")}
    return articles, current_path(root / "index")


def check_ask(root: Path) -> dict:
    """`qa ask` answers (exit 0) and every offset is exact in the index it used; returns the JSON."""
    out = subprocess.run([QA_BIN, "ask", QUESTION, "--json"], env=env_for(root), capture_output=True,
                         text=True, timeout=300)
    if out.returncode != 0:
        raise AssertionError(f"qa ask failed ({out.returncode}): {out.stderr[-500:]}")
    answer = json.loads(out.stdout)
    index = load_index(root / "index")  # verifies every file's sha256
    for p in [*answer["citations"], *answer["passages"]]:
        assert index.articles[p["source"]].text[p["start"]:p["end"]] == p["text"], p
    assert answer["answered"] and "100" in answer["text"], answer["text"]
    return answer


def saved_a_batch(root: Path) -> Callable[[], bool]:
    """True once a build in root has saved embedded vectors (index/.partial/): it is mid-way."""
    return lambda: any((root / "index" / ".partial").glob("*.np*"))


def index_dirs(root: Path) -> list[str]:
    """The index folders in root/index: versions and unfinished (.tmp-) ones."""
    return sorted(p.name for p in (root / "index").iterdir() if p.name.startswith((".tmp-", "v-")))


def prepare(root: Path, articles: int = 12) -> float:
    """root/seeds = seeds + a corpus, indexed; returns how long a build of a new corpus takes."""
    shutil.copytree(eval_articles(), root / "seeds", ignore=shutil.ignore_patterns("SHA256SUMS"))
    corpus(root / "seeds", 0, articles)
    timed_build(root)
    corpus(root / "seeds", 1, articles)
    return timed_build(root)


def kill_builds(root: Path, moments: int, build_s: float, seed: int = 0, articles: int = 12,
                mid_batch: int = 0) -> list[dict]:
    """Kill `qa build` of a changed corpus at random moments, then `mid_batch` times the moment it
    saved its first vectors; after each, check the index and `qa ask` (which finishes the build)."""
    rng = random.Random(seed)
    rows = []
    for i in bar(range(moments + mid_batch), desc="build kills", unit="kill", every=1):
        corpus(root / "seeds", 100 + i, articles)
        random_moment = i < moments
        after = rng.uniform(0.05, 1.0) * build_s if random_moment else 10 * build_s
        began = time.monotonic()
        finished = kill_at([QA_BIN, "build"], root, after, None if random_moment else saved_a_batch(root))
        killed_after = time.monotonic() - began
        load_index(root / "index")  # the old or the new index, whole: raises if any file is off
        leftovers = index_dirs(root)
        check_ask(root)
        rows.append({"moment": "random" if random_moment else "first saved batch",
                     "killed_after_s": round(after if random_moment else killed_after, 2),
                     "had_finished": finished,
                     "index_dirs_after_kill": leftovers, "index_dirs_after_ask": index_dirs(root)})
    return rows


UPLOAD = ("import sys; from pathlib import Path; import qa; "
          "qa.QA(qa.Config.from_env()).add_article('killed_upload.txt', Path(sys.argv[1]).read_bytes())")


def kill_uploads(root: Path, moments: int, seed: int = 0, lines: int = 150) -> list[dict]:
    """Kill an upload's build at random moments: articles and index stay as they were or hold all of it."""
    rng = random.Random(seed)
    big = root / "killed_upload.txt"
    big.write_text("\n\n".join(f"Paragraph {n}. " + " ".join(
        f"The upload test line {n}-{m} names Quorvale item {n * 31 + m}." for m in range(6))
        for n in range(lines)))
    began = time.monotonic()
    subprocess.run([sys.executable, "-c", UPLOAD, str(big)], env=env_for(root), check=True,
                   capture_output=True, timeout=600)
    upload_s = time.monotonic() - began
    saved = snapshot(root)[0]["killed_upload.txt"]
    (root / "seeds" / "killed_upload.txt").unlink()
    subprocess.run([QA_BIN, "build"], env=env_for(root), check=True, capture_output=True, timeout=600)
    rows = []
    for _ in bar(range(moments), desc="upload kills", unit="kill", every=1):
        before = snapshot(root)
        after = rng.uniform(0.3, 0.9) * upload_s
        finished = kill_at([sys.executable, "-c", UPLOAD, str(big)], root, after)
        now = snapshot(root)
        index = load_index(root / "index")
        # A kill that lands after the upload saved its file (while the process exits) leaves all of it.
        committed = (now[0] == {**before[0], "killed_upload.txt": saved}
                     and now[1] != before[1] and "killed_upload.txt" in index.articles)
        if finished:
            assert committed, f"a finished upload must be saved and indexed: {before} -> {now}"
        else:
            assert now == before or committed, f"a killed upload left part of itself: {before} -> {now}"
        if committed:  # the next upload starts from the folder without it (`qa ask` reindexes)
            (root / "seeds" / "killed_upload.txt").unlink()
        check_ask(root)
        rows.append({"killed_after_s": round(after, 2), "had_finished": finished,
                     "unchanged": now == before, "committed": committed})
    return rows


def full_disk(root: Path, limit_bytes: int = 100_000, articles: int = 12) -> dict:
    """`qa build` under RLIMIT_FSIZE: one clear line, exit code 2, the old index still in use."""
    corpus(root / "seeds", 999, articles)
    before = current_path(root / "index")

    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (limit_bytes, limit_bytes))

    out = subprocess.run([QA_BIN, "build"], env=env_for(root), capture_output=True, text=True, timeout=600,
                         preexec_fn=limit)
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 2, (out.returncode, out.stderr[-1000:])
    assert len(lines) == 1 and "disk is full" in lines[0], out.stderr[-1000:]
    assert current_path(root / "index") == before
    load_index(root / "index")
    assert not list((root / "index").glob(".tmp-*"))
    return {"exit_code": out.returncode, "stderr": lines[0], "old_index_in_use": True}


BOMBS = {"docx_bomb": lambda d: bombs.docx_bomb(d, chars=190_000_000),  # the reviewer's 970 KB one
         "pdf_bomb": lambda d: bombs.pdf_bomb(d, mb=10),
         "docx_padding": lambda d: bombs.docx_padding(d, mb=60),
         "pdf_slow": lambda d: bombs.pdf_slow(d, pages=40)}


def expanding_files(root: Path, kinds: tuple[str, ...] = tuple(BOMBS)) -> list[dict]:
    """`qa add` of each bomb (of `kinds`), then `qa build` with one in the folder: one line each,
    nothing changed."""
    rows, folder = [], root / "bombs"
    folder.mkdir(exist_ok=True)
    for kind in kinds:
        path = BOMBS[kind](folder)
        before = snapshot(root)
        code, lines, seconds, peak = measured([QA_BIN, "add", str(path)], root)
        assert code == 2 and len(lines) == 1 and lines[0].startswith(f"Refused: {path.name}: "), (code, lines)
        assert snapshot(root) == before, f"{kind} changed the articles or the index"
        rows.append({"file": kind, "command": "qa add", "kb": round(path.stat().st_size / 1024),
                     "exit_code": code, "seconds": seconds, "peak_mb": peak, "message": lines[0],
                     "unchanged": True})
    dropped, bomb = root / "seeds" / "dropped_bomb.docx", folder / "bomb.docx"
    shutil.copy(bomb if bomb.exists() else BOMBS["docx_bomb"](folder), dropped)
    before = current_path(root / "index")
    code, lines, seconds, peak = measured([QA_BIN, "build"], root)
    dropped.unlink()
    assert code == 2 and len(lines) == 1 and "expands to more than" in lines[0], (code, lines)
    assert current_path(root / "index") == before
    load_index(root / "index")
    rows.append({"file": "docx_bomb in seeds/", "command": "qa build",
                 "kb": round(bomb.stat().st_size / 1024), "exit_code": code, "seconds": seconds,
                 "peak_mb": peak, "message": lines[0], "unchanged": True})
    return rows


def main() -> None:
    """Run every fault and write what happened."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--kills", type=int, default=10)
    parser.add_argument("--upload-kills", type=int, default=3)
    parser.add_argument("--out", type=Path, default=RESULTS)
    args = parser.parse_args()
    root = Path(tempfile.mkdtemp(prefix="qa-faults-"))
    steps = Steps("faults", {"two builds of a corpus": 40, "build kills": 25 * args.kills,
                             "upload kills": 30 + 25 * args.upload_kills, "a full disk": 15,
                             "files built to expand": 90})
    try:
        steps.step("two builds of a corpus")
        build_s = prepare(root)
        print(f"a corpus build takes {build_s:.1f} s (process start to exit)", file=sys.stderr)
        steps.step("build kills", f"{args.kills} at random moments")
        builds = kill_builds(root, args.kills, build_s)
        steps.step("upload kills", str(args.upload_kills))
        uploads = kill_uploads(root, args.upload_kills)
        steps.step("a full disk")
        disk = full_disk(root)
        steps.step("files built to expand", ", ".join(BOMBS))
        expanding = expanding_files(root)
    finally:
        shutil.rmtree(root, ignore_errors=True)
    steps.finish()
    result = {"build_s": round(build_s, 2), "build_kills": builds, "upload_kills": uploads, "full_disk": disk,
              "bombs": expanding, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())}
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    for row in builds + uploads + expanding:
        print(row)
    print(disk["stderr"])
    print(f"written to {args.out}")


if __name__ == "__main__":
    main()
