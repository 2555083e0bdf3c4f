"""What every CLI command shares: the one-line error, the engine, calling into the library, and
output that no article can use to drive the terminal."""

from __future__ import annotations

import io
import json
import re

import click

from qa.answer import Answer
from qa.answering.layout import VERDICTS
from qa.errors import QAError
from qa.passage import Passage, shown_date
from qa.question.forms import KIND_NAMES


class UserError(click.ClickException):
    """A one-line error on stderr with exit code 2."""

    exit_code = 2

    def show(self, file: object = None) -> None:
        click.echo(f"Error: {self.format_message()}", err=True)


def engine(ctx: click.Context, makes_index: bool = False):  # returns qa.engine.QA
    """The engine over the command's settings (the model loads on first use); UserError when
    ``--index`` names a folder that does not exist and the command does not make one."""
    from qa.embedding.export import exported
    from qa.embedding.onnx_runtime import onnx_available
    from qa.engine import QA

    config = ctx.obj["config"]
    if ctx.obj.get("index_named") and not makes_index and not config.index_dir.exists():
        raise UserError(f"no index at {config.index_dir}: check the path, or build one there with "
                        f"`qa --index {config.index_dir} build`")
    if onnx_available(config.indexing.model) and not exported(config.cache_dir):
        click.echo("Exporting the embedding model to ONNX, once per machine (about 5 s)…", err=True)
    return QA(config)


def run(fn, *args, **kwargs):
    """Call into the library, turning user-fixable problems into a one-line error; any other
    exception (a ValueError from numpy or FAISS too) is a bug and keeps its traceback."""
    try:
        return fn(*args, **kwargs)
    except QAError as exc:
        raise UserError(str(exc)) from None


def byline(p: Passage) -> str:
    """ " · 11 Mar 2020 · Jane Doe · https://…": the metadata that is known, for one line of output."""
    return "".join(f" · {x}" for x in (shown_date(p.date, p.file_date), p.author, p.url) if x)


def print_answer(result: Answer, streamed: str = "") -> None:
    """Print an answer; `streamed` is the start of its text already printed while streaming."""
    if streamed and result.method == "llm" and result.text.startswith(streamed):
        click.echo(result.text[len(streamed):])
    else:
        if streamed:
            click.echo()
        if result.notice and result.answered:
            click.echo(f"({result.notice})")
        verdict = VERDICTS.get(result.verdict or "", "")
        if verdict:  # a yes/no question's verdict in bold, then the sentences it stands on
            click.echo(click.style(verdict, bold=True) + " " + result.text.removeprefix(verdict).strip())
        else:
            click.echo(result.text)
        if result.notice and not result.answered:
            click.echo(result.notice)
    if result.dropped:
        click.echo(f"\n({len(result.dropped)} generated sentence(s) dropped: unsupported by their citations)")
    if result.short and result.answered:
        span = result.short_span
        who = (f"; read by {result.model or 'the language model'} in {result.timings['read_ms'] / 1000:.1f} s"
               if result.model and "read_ms" in result.timings else "")
        where = f" ({span.source} {span.start}-{span.end}, p={span.score:.2f}{who})" if span else ""
        click.echo(f"\nShort answer: {result.short}{where}")
    if result.answered and result.kind != "factoid":
        click.echo(f"\n(Answered as: {KIND_NAMES.get(result.kind, result.kind)})")
    shown = result.citations if result.answered else result.passages[:3]
    if shown:
        click.echo("\nSources:" if result.answered else "\nClosest passages:")
    for n, p in enumerate(shown, 1):
        snippet = " ".join(p.text.split())
        snippet = snippet if len(snippet) <= 160 else snippet[:157] + "…"
        click.echo(f"  [{n}] {p.source} {p.start}-{p.end}{byline(p)}: {snippet}")


# Terminal controls an article's text may hold (ESC starts escape sequences that retitle the window or
# rewrite the screen; C1's CSI does too; bidi overrides reorder what is shown): never printed raw.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


class Printable(io.TextIOBase):
    """A text stream that drops terminal control characters from everything written to it."""

    def __init__(self, stream: io.TextIOBase, keep: str = "") -> None:
        self.stream, self._keep = stream, keep  # keep: "\r" on stderr, for progress bars

    @classmethod
    def wrap(cls, stream: object, keep: str = "") -> object:
        """stream behind the filter (once, however often the CLI runs in one process)."""
        return stream if isinstance(stream, cls) else cls(stream, keep)  # type: ignore[arg-type]

    def write(self, text: str) -> int:
        self.stream.write(_CONTROLS.sub(lambda m: m.group() if m.group() in self._keep else "", text))
        return len(text)

    def flush(self) -> None:
        self.stream.flush()

    def writable(self) -> bool:
        return True

    def isatty(self) -> bool:
        return self.stream.isatty()

    def fileno(self) -> int:
        return self.stream.fileno()

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", "utf-8")

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.stream, "errors", None)


def json_text(data: object) -> str:
    """JSON for the terminal: controls are escapes (\\u001b), never raw, and no data is lost."""
    text = json.dumps(data, ensure_ascii=False, indent=2)
    return _CONTROLS.sub(lambda m: f"\\u{ord(m.group()):04x}", text)
