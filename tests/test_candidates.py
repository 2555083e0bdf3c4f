"""The stronger embedders measured against MiniLM: their weights joined from split archives, and
the pool each one's ranking gives the reader (eval/fit/candidates.py, eval/fit/embedders.py)."""

from __future__ import annotations

import io
import random
import zipfile
from pathlib import Path

import numpy as np
import pytest

from eval.fit import embedders
from eval.fit.candidates import member_of_parts
from qa import QA


def _split_zip(tmp_path: Path, part: int) -> tuple[list[bytes], bytes, int]:
    """A zip of two members cut into parts of ``part`` bytes: the parts, the second member's bytes
    and the number (from 1) of the part its header starts in."""
    rng = random.Random(7)
    first, second = rng.randbytes(3000), rng.randbytes(5000)
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("a.bin", first)
        z.writestr("dir/b.bin", second)
    data = buf.getvalue()
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        offset = z.getinfo("dir/b.bin").header_offset
    return [data[i:i + part] for i in range(0, len(data), part)], second, offset // part + 1


def test_a_member_is_read_from_the_last_parts_of_a_split_zip_alone(tmp_path: Path) -> None:
    parts, second, starts = _split_zip(tmp_path, 1024)
    assert starts > 1  # the earlier parts are not given
    out = member_of_parts(parts[starts - 1:], starts, 1024, "dir/b.bin", tmp_path / "b.bin")
    assert out.read_bytes() == second
    assert not list(tmp_path.glob("*.partial")) and not list(tmp_path.glob("*.tmp"))


def test_a_damaged_part_is_refused_and_leaves_no_file(tmp_path: Path) -> None:
    parts, _, starts = _split_zip(tmp_path, 1024)
    given = parts[starts - 1:]
    given[1] = bytes(b ^ 0xFF for b in given[1])  # inside the member's compressed data
    with pytest.raises((zipfile.BadZipFile, OSError, EOFError, ValueError)):
        member_of_parts(given, starts, 1024, "dir/b.bin", tmp_path / "b.bin")
    assert not (tmp_path / "b.bin").exists()
    assert not list(tmp_path.glob("*.partial")) and not list(tmp_path.glob("*.tmp"))


def _pointing(best: int, passages: int) -> np.ndarray:
    """A candidate's passage vectors that make ``best`` the passage nearest the question [1, 0]."""
    return np.array([[1.0, 0.0] if i == best else [0.0, 1.0] for i in range(passages)], dtype=np.float32)


def test_the_candidates_pool_is_its_own_ranking_fused_with_bm25(fake_qa: QA,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    fake_qa.build()
    texts = embedders.passages(fake_qa)
    holding = next(i for i, t in enumerate(texts) if "80,000 books" in t)
    other = next(i for i, t in enumerate(texts) if "80,000" not in t)
    monkeypatch.setattr(embedders, "POOLS", (1,))
    question, gold = "How many cars cross the harbour bridge?", "80,000 books"  # BM25 finds the bridge
    query = np.array([1.0, 0.0], dtype=np.float32)
    right = embedders.measure(fake_qa, question, gold, "c", _pointing(holding, len(texts)), query)
    wrong = embedders.measure(fake_qa, question, gold, "c", _pointing(other, len(texts)), query)
    assert right["c dense@1"] and not wrong["c dense@1"]
    # The product's own ranking is the same whatever the candidate says.
    assert {k: v for k, v in right.items() if k.startswith("product")} == \
        {k: v for k, v in wrong.items() if k.startswith("product")}
    assert not right["product dense@1"] and not right["product hybrid@1"]
