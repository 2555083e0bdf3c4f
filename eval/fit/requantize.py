"""Requantize the reader's model (Q4_K_M) to another llama.cpp type, to read side by side with it
in `eval bench --model` (llama.cpp repacks Q4_0 for x86's wide kernels at load).

Run: .venv/bin/python -m eval.fit.requantize [--type Q4_0] [--out PATH]
It needs llama-cpp-python, which the project does not install (xllamacpp has no quantizer):
`.venv/bin/pip install llama-cpp-python` compiles it, about 5 minutes on 2 cores.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path


def requantize(source: Path, target: Path, kind: str, threads: int) -> float:
    """Write source requantized to kind at target; the seconds it took."""
    try:
        import llama_cpp
    except ImportError:
        raise SystemExit("error: requantizing needs llama-cpp-python: .venv/bin/pip install llama-cpp-python "
                         "(it compiles llama.cpp, about 5 minutes)") from None
    ftype = getattr(llama_cpp, f"LLAMA_FTYPE_MOSTLY_{kind.upper()}", None)
    if ftype is None:
        raise SystemExit(f"error: llama.cpp has no type {kind!r}: try Q4_0, Q4_1, Q5_0 or Q8_0")
    params = llama_cpp.llama_model_quantize_default_params()
    params.ftype = ftype
    params.allow_requantize = True  # the source is quantized already: the point of the exercise
    params.nthread = threads
    began = time.perf_counter()
    tmp = target.with_name(target.name + ".part")
    if llama_cpp.llama_model_quantize(str(source).encode(), str(tmp).encode(), params) != 0:
        tmp.unlink(missing_ok=True)
        raise SystemExit(f"error: llama.cpp could not requantize {source}")
    tmp.replace(target)  # never a half-written model under the final name
    return time.perf_counter() - began


def main() -> None:
    from qa import Config
    from qa.llm.model_file import model_path

    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--type", default="Q4_0", help="llama.cpp's quantization type (default Q4_0)")
    parser.add_argument("--out", type=Path,
                        help="where to write it (default: beside the model, in the cache)")
    args = parser.parse_args()
    config = Config.from_env()
    source = model_path(config.cache_dir, config.reading.reader_model)
    target = args.out or source.with_name(source.stem.replace("q4_k_m", "") + args.type.lower() + ".gguf")
    took = requantize(source, target, args.type, config.reading.reader_threads)
    size = target.stat().st_size / 2**20
    print(f"{target} ({size:.0f} MiB) from {source.name} in {took:.1f} s", file=sys.stderr)
    print(target)


if __name__ == "__main__":
    main()
