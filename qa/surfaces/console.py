"""What every CLI command shares: the one-line error, the engine, and calling into the library."""

from __future__ import annotations

import click

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
