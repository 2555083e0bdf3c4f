"""The cluster's commands: `qa build --ray ADDRESS` and `qa serve --ray ADDRESS`; Ray loads on use."""

from __future__ import annotations

import contextlib
import logging
import os
import signal
import sys
from collections.abc import Iterator
from pathlib import Path

import click

from qa.config import Config
from qa.errors import QAError


class ClusterUserError(click.ClickException):
    """A one-line error on stderr with exit code 2, as the other commands give."""

    exit_code = 2

    def show(self, file: object = None) -> None:
        click.echo(f"Error: {self.format_message()}", err=True)


def _quiet_ray() -> None:
    """Ray logs each dataset's plan and progress at INFO; the CLI prints its own summary."""
    for name in ("ray", "ray.data", "ray.serve"):
        logging.getLogger(name).setLevel(logging.WARNING)


def build_on_cluster(config: Config, address: str | None, corpus: str | None, force: bool,
                     workers: int | None, replace: bool = False) -> None:
    """Run a cluster build and print what it did (the body of `qa build --ray`)."""
    from qa.cluster.build import build_on_ray

    if not address:
        raise ClusterUserError("--corpus is read on a Ray cluster: add --ray ADDRESS (or auto)")
    _quiet_ray()
    try:
        report = build_on_ray(config, address, Path(corpus) if corpus else None, force=force,
                              workers=workers, progress=sys.stderr.isatty(), replace=replace)
    except QAError as exc:
        raise ClusterUserError(str(exc)) from None
    if report.up_to_date:
        click.echo(f"Index is up to date ({len(report.unchanged)} articles).")
        return
    click.echo(
        f"Indexed {report.embedded_chunks} chunks, {report.embedded_sentences} sentences on the cluster in "
        f"{report.seconds:.2f}s: {len(report.added)} added, {len(report.changed)} changed, "
        f"{len(report.removed)} removed, {len(report.unchanged)} unchanged."
    )


@click.command()
@click.option("--ray", "address", required=True, metavar="ADDRESS",
              help="The Ray cluster: HOST:PORT of its head, or auto for the one running here.")
@click.option("--replicas", default=2, show_default=True, type=click.IntRange(1, 64),
              help="Replicas answering in parallel (the fewest, when --max-replicas scales them).")
@click.option("--replica-cpus", default=1, show_default=True, type=click.IntRange(1, 256),
              help="CPUs each replica takes (its language model reads with as many threads).")
@click.option("--max-replicas", type=click.IntRange(1, 256),
              help="Scale up to this many replicas while questions queue (Ray Serve autoscaling).")
@click.option("--host", default="127.0.0.1", show_default=True, help="Address the HTTP proxy listens on.")
@click.option("--port", default=8000, show_default=True, type=click.IntRange(1, 65535))
@click.pass_context
def serve(ctx: click.Context, address: str, replicas: int, replica_cpus: int, max_replicas: int | None,
          host: str, port: int) -> None:
    """Answer over HTTP from a Ray cluster: POST /ask, POST /search, GET /health.

    With QA_SERVE_TOKEN set, every request must carry it (Authorization: Bearer TOKEN); without
    it, only a loopback --host is allowed.

    \b
    Examples:
      qa serve --ray auto --replicas 2
      qa serve --ray auto --replicas 1 --max-replicas 8 --replica-cpus 4
      curl -s localhost:8000/ask -d '{"question": "Who is the Taliban spokesman?"}'
      QA_SERVE_TOKEN=$(openssl rand -hex 32) qa serve --ray auto --host 0.0.0.0
    """
    from qa.cluster.serve import start_service, stop_service

    _quiet_ray()
    # Ray's handler of fatal signals would take SIGTERM first and end the process with Serve running.
    os.environ["RAY_DISABLE_FAILURE_SIGNAL_HANDLER"] = "1"
    # A stop may come while Serve is still starting (`kill` as soon as /health answers): then Ray's
    # own SIGTERM handler (sys.exit) stands in for this one, and either way Serve is stopped below,
    # or its replicas would keep the cluster's CPUs.
    signal.signal(signal.SIGTERM, _stop)
    try:
        try:
            url = start_service(ctx.obj["config"], address, replicas, host, port, replica_cpus, max_replicas)
        except QAError as exc:
            raise ClusterUserError(str(exc)) from None
        token = " with a bearer token (QA_SERVE_TOKEN)" if ctx.obj["config"].serving.serve_token else ""
        click.echo(f"Serving {replicas} replica(s) at {url}{token} (POST /ask, POST /search, GET /health); "
                   "Ctrl-C stops.", err=True)
        signal.signal(signal.SIGTERM, _stop)  # again: ray.init put its own in place of the first
        while True:
            signal.pause()
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        if "ray" in sys.modules and sys.modules["ray"].is_initialized():
            with _silenced():  # Ray reports each actor it stops as an error; stopping is what was asked
                stop_service()
                # Disconnected inside the silence: a raylet's report of the stopped controller
                # (its retried graceful_shutdown) once reached stdout after it.
                sys.modules["ray"].shutdown()


def _stop(*_: object) -> None:
    """SIGTERM: stop serving, as Ctrl-C does."""
    raise SystemExit(0)


@contextlib.contextmanager
def _silenced() -> Iterator[None]:
    """Send what is written to file descriptors 1 and 2 (Ray's C++ code too) nowhere for the block."""
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(os.devnull, "wb") as sink:
        os.dup2(sink.fileno(), 1)
        os.dup2(sink.fileno(), 2)
        try:
            yield
        finally:
            for fd, copy in ((1, saved[0]), (2, saved[1])):
                os.dup2(copy, fd)
                os.close(copy)
