"""Command line: build the index, search, ask, and chat in the terminal."""

from __future__ import annotations

import logging
import sys

import click

from qa.answer import Answer
from qa.cluster.cli import build_on_cluster, serve
from qa.config import READERS, Config
from qa.errors import QAError
from qa.passage import Passage
from qa.retrieval.retrieve import MODES
from qa.surfaces.add import add
from qa.surfaces.console import Printable, UserError, byline, json_text, print_answer
from qa.surfaces.console import engine as _engine
from qa.surfaces.console import run as _run
from qa.surfaces.install import install_reader, runtime


@click.group()
@click.option("--seeds", type=click.Path(file_okay=False), help="Articles folder (QA_SEEDS_DIR).")
@click.option("--index", "index_dir", type=click.Path(file_okay=False),
              help="Index folder (QA_INDEX_DIR).")
@click.option("-v", "--verbose", is_flag=True, help="Log progress to stderr.")
@click.pass_context
def main(ctx: click.Context, seeds: str | None, index_dir: str | None, verbose: bool) -> None:
    """Ask questions about news articles; every answer sentence is cited.

    The articles folder is seeds/ and the index index/ in the project folder: the nearest
    folder from here upwards that holds seeds/ (or QA_HOME), so qa runs from any subfolder.

    \b
    Examples:
      qa build
      qa search "prisoner release" -k 3
      qa ask "How many Taliban prisoners will be released every day?"
      qa ask "Who is the Taliban's spokesman?" --json
      qa chat
      qa hash-password alice >> users.txt     (then QA_AUTH_FILE=users.txt python app.py)
      qa runtime
    """
    # Articles' text is printed: nothing in it may drive the terminal (an escape sequence in a title).
    sys.stdout, sys.stderr = Printable.wrap(sys.stdout), Printable.wrap(sys.stderr, keep="\r")
    # Our warnings (a skipped empty file) always show; -v adds our progress, not libraries' chatter.
    logging.basicConfig(level=logging.WARNING, format="%(levelname)s %(name)s: %(message)s")
    logging.getLogger("qa").setLevel(logging.INFO if verbose else logging.WARNING)
    try:
        config = Config.from_env(seeds_dir=seeds, index_dir=index_dir)
    except QAError as exc:
        raise UserError(str(exc)) from None
    # An index folder named on the command line is one the user means to exist (a typo must not
    # build a new index somewhere): `build` and `add` make it, the other commands need it.
    ctx.obj = {"config": config, "index_named": index_dir is not None}


def _reader(command):
    """The --reader option: which reader finds the short answer (QA_READER)."""
    option = click.option("--reader", type=click.Choice(READERS), help="Who reads the short answer: the "
                          "language model (lm, the default where installed) or the span ranker (QA_READER).")
    return option(command)


def _dates(command):
    """The --since and --until options: only articles dated within them are read."""
    command = click.option("--until", metavar="YYYY-MM-DD", help="Only articles dated on or before.")(command)
    return click.option("--since", metavar="YYYY-MM-DD", help="Only articles dated on or after.")(command)


main.add_command(add)
main.add_command(install_reader)
main.add_command(runtime)


@main.command()
@click.option("--force", is_flag=True, help="Re-embed every article, ignoring the old index.")
@click.option("--ray", "address", metavar="ADDRESS", help="Build on a Ray cluster (HOST:PORT, or auto).")
@click.option("--corpus", type=click.Path(exists=True), help="With --ray: a .jsonl/.parquet file or folder.")
@click.option("--replace", is_flag=True, help="With --ray: build the corpus into an index folder that holds "
              "another corpus's articles (those not in this one are removed).")
@click.pass_context
def build(ctx: click.Context, force: bool, address: str | None, corpus: str | None, replace: bool) -> None:
    """Build or update the index (only new or changed articles are embedded).

    \b
    Examples:
      qa build
      qa --index archive-index build --ray auto --corpus articles.jsonl
    """
    if address or corpus:
        return build_on_cluster(ctx.obj["config"], address, corpus, force, None, replace)
    report = _run(_engine(ctx, makes_index=True).build, force=force, progress=sys.stderr.isatty())
    if report.up_to_date:
        click.echo(f"Index is up to date ({len(report.unchanged)} articles).")
        return
    click.echo(
        f"Indexed {report.embedded_chunks} chunks, {report.embedded_sentences} sentences in "
        f"{report.seconds:.2f}s: {len(report.added)} added, {len(report.changed)} changed, "
        f"{len(report.removed)} removed, {len(report.unchanged)} unchanged."
    )


@main.command()
@click.argument("question")
@click.option("-k", default=5, show_default=True, type=click.IntRange(min=1), help="Number of passages.")
@click.option("--mode", type=click.Choice(MODES), default="hybrid", show_default=True)
@click.option("--json", "as_json", is_flag=True, help="Print the passages as JSON.")
@_dates
@click.pass_context
def search(ctx: click.Context, question: str, k: int, mode: str, as_json: bool, since: str | None,
           until: str | None) -> None:
    """Print the passages that best match QUESTION.

    \b
    Examples:
      qa search "prisoner release" -k 3
      qa search "Suhail Shaheen" --mode bm25 --json
    """
    passages: list[Passage] = _run(_engine(ctx).retrieve, question, k, mode, since, until)
    if len(passages) < k and not as_json:
        why = ("bm25 finds only passages that hold the question's words; --mode hybrid ranks them all"
               if mode == "bm25" else "the articles hold no more passages that do not overlap")
        click.echo(f"Only {len(passages)} of {k} passages: {why}.", err=True)
    if as_json:
        click.echo(json_text([p.to_dict() for p in passages]))
        return
    for n, p in enumerate(passages, 1):
        click.echo(f"[{n}] {p.source} {p.start}-{p.end} score={p.score:.4f} — {p.title}"
                   f"{byline(p)}")
        click.echo("    " + " ".join(p.text.split()) + "\n")


def _with_reader(ctx: click.Context, reader: str | None) -> None:
    if reader:
        ctx.obj["config"] = ctx.obj["config"].replace(reader=reader)


def _answer(engine, question: str, history: list, llm: bool, stream: bool,
            dates: tuple[str | None, str | None] = (None, None)) -> Answer:
    """Ask the engine; with --llm, print verified sentences as they arrive when streaming."""
    shown = [""]

    def partial(answer: Answer) -> None:
        # Provisional answers only grow by verified sentences; print what is new.
        if stream and answer.method == "llm" and answer.text.startswith(shown[0]) and answer.text != shown[0]:
            click.echo(answer.text[len(shown[0]):], nl=False)
            shown[0] = answer.text

    if llm:
        result = engine.answer_llm(question, history, partial, *dates)
    else:
        result = engine.answer(question, history=history, since=dates[0], until=dates[1])
    if stream:
        print_answer(result, shown[0])
    return result


@main.command()
@click.argument("question")
@click.option("--json", "as_json", is_flag=True, help="Print the answer as JSON.")
@click.option("--llm", is_flag=True, help="Write the answer with a language model (QA_LLM_URL, else the "
              "reader's model); every sentence verified.")
@_reader
@_dates
@click.pass_context
def ask(ctx: click.Context, question: str, as_json: bool, llm: bool, reader: str | None, since: str | None,
        until: str | None) -> None:
    """Answer QUESTION with sentences cited from the articles.

    \b
    Examples:
      qa ask "How many Taliban prisoners will be released every day?"
      qa ask "Who is the Taliban's spokesman?" --json
      qa ask "How many prisoners were freed?" --since 2020-03-01 --until 2020-03-31
      qa ask "Who tweeted about the decree?" --reader spans
      qa ask --llm "Why did Ghani sign the decree?"
    """
    _with_reader(ctx, reader)
    result: Answer = _run(_answer, _engine(ctx), question, [], llm, not as_json, (since, until))
    if as_json:
        click.echo(json_text(result.to_dict()))


@main.command()
@click.option("--llm", is_flag=True, help="Write answers with a language model, every sentence verified.")
@_reader
@click.pass_context
def chat(ctx: click.Context, llm: bool, reader: str | None) -> None:
    """Talk with the articles in the terminal; follow-up questions use earlier turns.

    \b
    Example:
      qa chat      (then type questions; an empty line or Ctrl-D ends)
    """
    _with_reader(ctx, reader)
    engine = _engine(ctx)
    _run(lambda: engine.index)
    history: list[tuple[str, Answer]] = []
    click.echo("Ask about the articles. An empty line or Ctrl-D ends the chat.")
    while True:
        try:
            question = input("\n> ")
        except (EOFError, KeyboardInterrupt):
            click.echo()
            return
        if not question.strip():
            return
        try:
            result = _answer(engine, question, history, llm, stream=True)
        except QAError as exc:
            click.echo(f"Error: {exc}", err=True)
            continue
        history.append((question, result))


@main.command("hash-password")
@click.argument("user")
@click.option("--stdin", "from_stdin", is_flag=True, help="Read the password from the first line of stdin.")
def hash_password_cmd(user: str, from_stdin: bool) -> None:
    """Print a QA_AUTH_FILE line (USER:scrypt-hash) for USER's password, asked without echo.

    \b
    Examples:
      qa hash-password alice >> users.txt
      printf '%s\\n' "$PASSWORD" | qa hash-password bob --stdin >> users.txt
    """
    from qa.surfaces.web.auth import hash_password

    if not user.strip() or ":" in user or "," in user or user != user.strip():
        raise UserError(f"user name {user!r} must be non-empty, without ':', ',' or outer spaces")
    if from_stdin:
        password = sys.stdin.readline().rstrip("\r\n")
    else:
        password = click.prompt("Password", hide_input=True, confirmation_prompt=True, err=True)
    if not password:
        raise UserError("the password is empty: choose one of at least 8 characters")
    if len(password) < 8:
        click.echo("warning: a password under 8 characters is easy to guess", err=True)
    click.echo(f"{user}:{hash_password(password)}")


main.add_command(serve)

