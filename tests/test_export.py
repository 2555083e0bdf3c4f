"""The ONNX export: made once, never left half-written, and its failure only costs speed."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from qa.embedding import export as export_module
from qa.embedding.export import export_onnx, export_path, float_path


def test_a_failed_export_leaves_nothing_behind(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def half_written(path: Path) -> tuple[int, int]:
        path.write_bytes(b"partial graph")
        return 12, 384

    def crash(source: Path, dest: Path, heads: int, hidden: int) -> None:
        dest.write_bytes(b"partial quantized graph")
        raise RuntimeError("disk full")

    monkeypatch.setattr(export_module, "_export_float", half_written)
    monkeypatch.setattr(export_module, "_fuse_and_quantize", crash)
    with pytest.raises(RuntimeError, match="disk full"):
        export_onnx(tmp_path)
    assert [p for p in tmp_path.rglob("*") if p.is_file()] == []


def test_an_existing_export_is_reused(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    done = export_path(tmp_path)
    done.parent.mkdir(parents=True)
    done.write_bytes(b"model")
    float_path(tmp_path).write_bytes(b"float model")
    monkeypatch.setattr(export_module, "_export_float", lambda path: pytest.fail("exported again"))
    assert export_onnx(tmp_path) == done


def test_engine_survives_a_failed_export(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         caplog: pytest.LogCaptureFixture) -> None:
    def fail(cache_dir: Path) -> Path:
        raise RuntimeError("no space left on device\nlong torch details")

    monkeypatch.setattr(export_module, "export_onnx", fail)
    with caplog.at_level(logging.WARNING):
        export_module.export_or_warn(tmp_path / "c")
    assert "no space left on device" in caplog.text and "long torch details" not in caplog.text
