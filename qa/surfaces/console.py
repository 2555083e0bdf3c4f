"""What every CLI command shares: the one-line error, the engine, and calling into the library."""

from __future__ import annotations

import click

from qa.answer import Answer
from qa.errors import QAError


class UserError(click.ClickException):
    """A one-line error on stderr with exit code 2."""

    exit_code = 2

    def show(self, file: object = None) -> None:
        click.echo(f"Error: {self.format_message()}", err=True)


def engine(ctx: click.Context):  # noqa: ANN201 - returns qa.engine.QA
    """The engine over the command's settings (the model loads on first use)."""
    from qa.embedding.export import exported
    from qa.embedding.onnx_runtime import onnx_available
    from qa.engine import QA

    config = ctx.obj["config"]
    if onnx_available(config.model) and not exported(config.cache_dir):
        click.echo("Exporting the embedding model to ONNX, once per machine (about 5 s)…", err=True)
    return QA(config)


def run(fn, *args, **kwargs):  # noqa: ANN001, ANN002, ANN003, ANN201
    """Call into the library, turning user-fixable problems into a one-line error."""
    try:
        return fn(*args, **kwargs)
    except (QAError, ValueError) as exc:
        raise UserError(str(exc)) from None


def byline(date: str | None, author: str | None, url: str | None) -> str:
    """ " · 11 Mar 2020 · Jane Doe · https://…": the metadata that is known, for one line of output."""
    from qa.passage import human_date

    return "".join(f" · {x}" for x in (human_date(date), author, url) if x)


def print_answer(result: Answer, streamed: str = "") -> None:
    """Print an answer; `streamed` is the start of its text already printed while streaming."""
    if streamed and result.method == "llm" and result.text.startswith(streamed):
        click.echo(result.text[len(streamed):])
    else:
        if streamed:
            click.echo()
        if result.notice and result.answered:
            click.echo(f"({result.notice})")
        click.echo(result.text)
        if result.notice and not result.answered:
            click.echo(result.notice)
    if result.dropped:
        click.echo(f"\n({len(result.dropped)} generated sentence(s) dropped: unsupported by their citations)")
    if result.short and result.answered:
        span = result.short_span
        where = f" ({span.source} {span.start}-{span.end}, p={span.score:.2f})" if span else ""
        who = (f"; read by {result.model or 'the language model'} in {result.timings['read_ms'] / 1000:.1f} s"
               if result.reader == "lm" and "read_ms" in result.timings else "")
        click.echo(f"\nShort answer: {result.short}{where}{who}")
    shown = result.citations if result.answered else result.passages[:3]
    if shown:
        click.echo("\nSources:" if result.answered else "\nClosest passages:")
    for n, p in enumerate(shown, 1):
        snippet = " ".join(p.text.split())
        snippet = snippet if len(snippet) <= 160 else snippet[:157] + "…"
        click.echo(f"  [{n}] {p.source} {p.start}-{p.end}{byline(p.date, p.author, p.url)}: {snippet}")
