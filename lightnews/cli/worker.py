"""``lightnews worker``: run the jobs of a PostgreSQL library's queue (or say what the
workers do, with ``--status``)."""

from __future__ import annotations

import click
from rich.markup import escape

from lightnews.cli.common import App, err, errors_as_exit, out, pass_app

__all__ = ["worker"]


@click.command()
@click.option(
    "--concurrency",
    default=1,
    show_default=True,
    type=click.IntRange(1, 64),
    help="Jobs this worker runs at once (each in a thread of its own).",
)
@click.option(
    "--status",
    is_flag=True,
    help="Say what the workers do instead (live workers, jobs waiting and running, the last "
    "fetch, sources due) and exit.",
)
@pass_app
def worker(app: App, concurrency: int, status: bool) -> None:
    """Run jobs from a PostgreSQL library's queue: refresh due sources, embed, resolve stubs.

    Start as many workers as you like, on any machines that reach the database:
    each source is fetched by one worker at a time, each host's interval (arXiv's
    3 s) holds for all of them together, and the jobs of a worker that dies are
    run again by another. Every `worker_tick` seconds one of them queues what is
    due; each job queued and each job's end is said on a line. Ctrl-C or SIGTERM
    stops it once its running jobs are done. A database lost for longer than
    `worker_reconnect_seconds` stops it with an error (exit status 4), for its
    supervisor to start it again.

    Only for a postgresql:// library: with an SQLite file, `lightnews refresh`
    does the same work in-process (run it from cron).
    """
    if not isinstance(app.db_path, str):
        raise click.UsageError(
            f"workers need a PostgreSQL library (--db postgresql://USER@HOST/DB); "
            f"{app.db_path} is an SQLite file, which `lightnews refresh` refreshes "
            "in-process (from cron, say)"
        )
    if status:
        from lightnews.worker.queue import queue_status

        with errors_as_exit():
            state = queue_status(app.db_path, float(app.settings.worker_heartbeat))
        for line in state.lines():
            out.print(escape(line))
        return
    app.in_background()
    from lightnews.worker.jobs import DEFER_TASK, JobOutcome
    from lightnews.worker.queue import run_worker

    def echo(outcome: JobOutcome) -> None:
        if outcome.task == DEFER_TASK:  # a job queued ("queued #3 ..."): its end comes later
            out.print(escape(outcome.summary))
            return
        mark = "[green]ok[/green]  " if outcome.ok else "[red]fail[/red]"
        out.print(f"{mark} {escape(outcome.summary)}")

    with errors_as_exit():
        run_worker(
            app.db_path,
            concurrency=concurrency,
            echo=echo,
            on_start=lambda line: err.print(escape(line)),
        )
