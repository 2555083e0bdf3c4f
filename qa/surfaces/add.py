"""`qa add PATH...`: add article files (or every article in folders), each checked like an upload."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from qa.articles.uploads import safe_name
from qa.errors import QAError
from qa.surfaces.console import UserError, engine


def _files(paths: tuple[str, ...]) -> list[Path]:
    """The files named, and every file under the folders named (hidden ones left out), in order."""
    out: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if path.is_dir():
            out.extend(p for p in sorted(path.rglob("*"))
                       if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts))
        else:
            out.append(path)
    return out


@click.command()
@click.argument("paths", nargs=-1, required=True, type=click.Path())
@click.pass_context
def add(ctx: click.Context, paths: tuple[str, ...]) -> None:
    """Add article files or folders: .txt, .md, .html, .pdf, .docx, RSS/Atom feeds.

    Each file is checked as an upload is (1 MB at most, a readable format with text, at most
    1,000,000 characters of it); a refused file gets one line saying why and nothing of it is
    indexed. Exit code 2 when any is refused.

    \b
    Examples:
      qa add saved/page.html report.pdf
      qa add ~/Downloads/wire-copy/
    """
    from tqdm import tqdm

    files = _files(paths)
    qa_engine = engine(ctx, makes_index=True)
    refused = added = 0
    bar = tqdm(files, unit="file", disable=not sys.stderr.isatty() or len(files) < 2)
    for path in bar:
        bar.set_postfix_str(path.name[:30])
        try:
            if not path.is_file():
                raise UserError(f"{path}: no such file")
            if path.stat().st_size > 1_000_000:
                raise UserError(f"{path.name}: {path.stat().st_size:,} bytes is over the 1 MB limit")
            report = qa_engine.add_article(path.name, path.read_bytes())
            # The build also indexes what was dropped into the folder meanwhile: count only this file's.
            name = safe_name(path.name)
            added += sum(s == name or s.startswith(f"{name}#") for s in report.added)
        except (QAError, UserError) as exc:
            refused += 1
            message = exc.format_message() if isinstance(exc, UserError) else str(exc)
            tqdm.write(f"Refused: {message}", file=sys.stderr)
        except OSError as exc:
            refused += 1
            message = f"{path}: cannot be read ({exc.strerror})"
            tqdm.write(f"Refused: {message}", file=sys.stderr)
    click.echo(f"Added {added} article(s) from {len(files) - refused} file(s); {refused} refused.")
    if refused:
        ctx.exit(2)
