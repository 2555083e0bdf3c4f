"""A fast ONNX twin of the packaged model, exported once per machine for torch-free questions."""

from __future__ import annotations

import logging
import os
import warnings
from importlib.metadata import version
from pathlib import Path

from qa.config import DEFAULT_MODEL
from qa.errors import require

log = logging.getLogger(__name__)


def export_path(cache_dir: Path) -> Path:
    """The int8-block export that embeds questions, keyed by the model package's version."""
    return cache_dir / "onnx" / f"{DEFAULT_MODEL}-{version(DEFAULT_MODEL)}" / "model-q8.onnx"


def float_path(cache_dir: Path) -> Path:
    """The float32 export that builds indexes: the model's own vectors, without torch."""
    return export_path(cache_dir).with_name("model-f32.onnx")


def exported(cache_dir: Path) -> bool:
    """True once both ONNX files exist in cache_dir."""
    return export_path(cache_dir).is_file() and float_path(cache_dir).is_file()


def export_onnx(cache_dir: Path) -> Path:
    """Export the packaged model (float32, then int8-block) unless done before; needs torch, onnx."""
    dest, exact = export_path(cache_dir), float_path(cache_dir)
    if dest.is_file() and exact.is_file():
        return dest
    require("onnx", "default")
    log.info("exporting the embedding model to ONNX, once per machine (about 5 s), into %s", dest.parent)
    dest.parent.mkdir(parents=True, exist_ok=True)
    # Written under temporary names, then renamed: never a half-written model under a real name.
    tmp_float = dest.with_name(f".float.{os.getpid()}.tmp")
    tmp = dest.with_name(f".{dest.name}.{os.getpid()}.tmp")
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's exporter warns about code paths it traces
            heads, hidden = _export_float(tmp_float)
            _fuse_and_quantize(tmp_float, tmp, heads, hidden)
        os.replace(tmp_float, exact)
        os.replace(tmp, dest)
    finally:
        tmp_float.unlink(missing_ok=True)
        tmp.unlink(missing_ok=True)
    log.info("exported %s to %s", DEFAULT_MODEL, dest.parent)
    return dest


def export_or_warn(cache_dir: Path) -> None:
    """Make the ONNX exports once per machine; on failure say so, as sentence-transformers still works."""
    try:
        export_onnx(cache_dir)
    except Exception as exc:  # sentence-transformers and the int8 twin still work
        log.warning("could not export the model to ONNX (%s); building with sentence-transformers, "
                    "questions use the int8 twin",
                    str(exc).splitlines()[0] if str(exc) else type(exc).__name__)


def _export_float(path: Path) -> tuple[int, int]:
    """Write the model's float32 graph (token ids in, last hidden states out) to path."""
    import torch
    from transformers import AutoModel
    from transformers.utils import logging as hf_logging

    from qa.embedding.base import resolve_model

    hf_logging.disable_progress_bar()  # the library never prints
    # Eager attention exports as plain MatMul/Softmax, which onnxruntime fuses into its own
    # attention kernel; the default kernel exports to a masked graph it cannot fuse.
    model = AutoModel.from_pretrained(resolve_model(DEFAULT_MODEL), attn_implementation="eager").eval()

    class Hidden(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = model

        def forward(self, input_ids, attention_mask, token_type_ids):
            return self.bert(input_ids=input_ids, attention_mask=attention_mask,
                             token_type_ids=token_type_ids).last_hidden_state

    names = ["input_ids", "attention_mask", "token_type_ids"]
    ids = torch.ones(1, 8, dtype=torch.long)
    with torch.no_grad():
        torch.onnx.export(Hidden(), (ids, torch.ones_like(ids), torch.zeros_like(ids)), str(path),
                          input_names=names, output_names=["hidden"], opset_version=17,
                          dynamic_axes={n: {0: "batch", 1: "tokens"} for n in [*names, "hidden"]},
                          dynamo=False)
    return model.config.num_attention_heads, model.config.hidden_size


def _fuse_and_quantize(source: Path, dest: Path, heads: int, hidden: int) -> None:
    """Fuse attention and layer norms, then store the MatMul weights as int8 in blocks of 32.

    Blocks of 32 keep the vectors within a cosine of 0.9995 of sentence-transformers on the
    eval questions, and int8 arithmetic embeds a question in about three quarters of the time.
    """
    # The quantizer's module calls logging.basicConfig(level=INFO) when imported, and both
    # tools log every node at INFO: keep the caller's logging as it was, and quiet meanwhile.
    root = logging.getLogger()
    handlers, level, disabled = root.handlers[:], root.level, logging.root.manager.disable
    logging.disable(logging.INFO)
    try:
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer
        from onnxruntime.transformers import optimizer

        fused = optimizer.optimize_model(str(source), model_type="bert", num_heads=heads,
                                         hidden_size=hidden, opt_level=1)
        quantizer = MatMulNBitsQuantizer(fused.model, bits=8, block_size=32, is_symmetric=True,
                                         accuracy_level=4)
        quantizer.process()
        quantizer.model.save_model_to_file(str(dest))
    finally:
        root.handlers[:] = handlers
        root.setLevel(level)
        logging.disable(disabled)
