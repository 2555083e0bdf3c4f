"""Which x86 extensions run on this machine: each built from qa/llm/cpu/ and run in a subprocess.

Reading /proc/cpuinfo is not enough: a virtual machine may advertise AMX tiles whose instructions
fault, and g++ 12 miscompiles ggml's own AMX tile configuration (qa/llm/cpu/tilecfg.cpp).
"""

from __future__ import annotations

import signal
import subprocess
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

CPU = Path(__file__).with_name("cpu")

# Extension -> (compiler flags its probe needs, llama.cpp CMake options it turns on). The names are
# those xllamacpp.get_system_info() reports for a build that has them.
FEATURES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "AVX2": (("-mavx2", "-mfma", "-mf16c"), ("GGML_AVX", "GGML_AVX2", "GGML_FMA", "GGML_F16C")),
    "AVX512": (("-mavx512f", "-mavx512bw", "-mavx512vl", "-mavx512dq", "-mavx512cd"), ("GGML_AVX512",)),
    "AVX512_VNNI": (("-mavx512f", "-mavx512vnni"), ("GGML_AVX512_VNNI",)),
    "AVX512_BF16": (("-mavx512f", "-mavx512bf16"), ("GGML_AVX512_BF16",)),
    "AVX512_VBMI": (("-mavx512f", "-mavx512bw", "-mavx512vbmi"), ("GGML_AVX512_VBMI",)),
    "AVX_VNNI": (("-mavx2", "-mavxvnni"), ("GGML_AVX_VNNI",)),
    "AMX_INT8": (("-mamx-tile", "-mamx-int8"), ("GGML_AMX_TILE", "GGML_AMX_INT8")),
    "AMX_BF16": (("-mamx-tile", "-mamx-bf16"), ("GGML_AMX_BF16",)),
}
NEEDS_AVX512 = ("AVX512_VNNI", "AVX512_BF16", "AVX512_VBMI")  # llama.cpp builds them on AVX512F/BW/VL
# ggml's tile config as the compiler leaves it, and with amx_gcc12_fix.patch's barrier.
TILECFG, TILECFG_PATCHED = "TILECFG", "TILECFG_PATCHED"


@dataclass(frozen=True)
class Verdict:
    """Whether one probe ran and gave the right answer, and if not, why."""

    ok: bool
    why: str


def run_probe(cmd: list[str], work: Path, name: str) -> Verdict:
    """Build with cmd (the output file appended), run the program; a crash or refusal is no."""
    exe = work / name
    built = subprocess.run([*cmd, "-o", str(exe)], capture_output=True, text=True)
    if built.returncode:
        said = (built.stderr.strip().splitlines() or ["?"])[-1][:120]
        return Verdict(False, f"the compiler lacks it: {said}")
    try:
        ran = subprocess.run([str(exe)], capture_output=True, timeout=20)
    except subprocess.TimeoutExpired:
        return Verdict(False, "hung")
    if ran.returncode == 0:
        return Verdict(True, "ran, right answer")
    if ran.returncode < 0:
        return Verdict(False, f"killed by {signal.Signals(-ran.returncode).name}")
    if ran.returncode == 3:
        return Verdict(False, "the kernel refused AMX tile state")
    return Verdict(False, f"ran, wrong answer (exit {ran.returncode})")


def probe(cc: str, cxx: str) -> dict[str, Verdict]:
    """Each extension's verdict, and ggml's tile config's, unpatched and patched (AMX only)."""
    with tempfile.TemporaryDirectory(prefix="qa-cpu-probe-") as tmp:
        work = Path(tmp)
        jobs = {name: [cc, "-O1", *flags, f"-DPROBE_{name}", str(CPU / "probe.c")]
                for name, (flags, _) in FEATURES.items()}
        with ThreadPoolExecutor(2) as pool:
            found = dict(zip(jobs, pool.map(lambda n: run_probe(jobs[n], work, n), jobs), strict=True))
            tile = [cxx, "-O3", "-mamx-tile", "-mamx-int8", str(CPU / "tilecfg.cpp")]
            if found["AMX_INT8"].ok and cxx:
                plain, patched = pool.map(lambda extra: run_probe(tile + extra, work, f"tile{len(extra)}"),
                                          ([], ["-DQA_TILE_BARRIER"]))
            else:
                plain = patched = Verdict(False, "no AMX" if cxx else "no C++ compiler")
    found[TILECFG], found[TILECFG_PATCHED] = plain, patched
    if not found["AVX512"].ok:
        found.update({n: Verdict(False, "needs AVX512") for n in NEEDS_AVX512})
    return found


def cmake_flags(found: dict[str, Verdict], amx: bool) -> tuple[str, ...]:
    """llama.cpp's CPU flags: native detection off, each extension on exactly when it ran here;
    AMX only when asked for and its tile config runs (patched or not)."""
    amx = amx and (found[TILECFG].ok or found[TILECFG_PATCHED].ok)
    flags = ["-DGGML_NATIVE=OFF"]
    for name, (_, options) in FEATURES.items():
        on = found[name].ok and (amx or not name.startswith("AMX"))
        flags += [f"-D{option}={'ON' if on else 'OFF'}" for option in options]
    return tuple(flags)


def enabled(found: dict[str, Verdict], amx: bool) -> tuple[str, ...]:
    """The extensions a build with cmake_flags(found, amx) has, as get_system_info() names them
    (it reports AMX_INT8 only, for AMX)."""
    flags = cmake_flags(found, amx)
    return tuple(name for name, (_, options) in FEATURES.items()
                 if f"-D{options[0]}=ON" in flags and name != "AMX_BF16")
