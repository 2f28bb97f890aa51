"""The ``lightnews`` command: every user-facing action from a terminal or a cron job.

Read commands take ``--json`` and print machine-readable output on stdout;
progress goes to stderr. Exit codes a cron job can act on:

    0  done
    1  the thing asked for is not there (``show`` of an unknown paper)
    2  the command was used wrongly (bad option, bad value)
    3  done, but some sources failed (their errors are recorded on them)
    4  nothing could be done (every source failed, unreadable input)

This module holds the root group and the one list that registers every
command; each command group lives in a module of its own, which imports
:mod:`lightnews.cli.common` and never this module (so nothing imports back).
A command parses its arguments, calls the layer below and prints.
"""

from __future__ import annotations

import sys
from typing import Any

import click
from rich.markup import escape

from lightnews import __version__
from lightnews.cli import (
    accounts,
    db,
    demo,
    feed,
    imports,
    ingest,
    listen,
    papers,
    scholars,
    serve,
    settings,
    sources,
    worker,
)
from lightnews.cli.common import EXIT_FAILED, EXIT_NOT_FOUND, EXIT_PARTIAL, App, err
from lightnews.errors import Unavailable
from lightnews.store import BACKEND_ERRORS, unavailable

__all__ = ["EXIT_FAILED", "EXIT_NOT_FOUND", "EXIT_PARTIAL", "cli", "main"]

_DATABASE_ERRORS: tuple[type[Exception], ...] = (Unavailable, *BACKEND_ERRORS)


class _Commands(click.Group):
    """The command group; a database that cannot answer ends any command with a message.

    Whatever the command, a busy or broken database prints what happened and
    what to do (``error: the database is busy ... try again``) and exits with
    ``EXIT_FAILED``, never a traceback.
    """

    def invoke(self, ctx: click.Context) -> Any:
        try:
            return super().invoke(ctx)
        except _DATABASE_ERRORS as error:
            err.print(f"[red]error:[/red] {escape(str(unavailable(error)))}")
            sys.exit(EXIT_FAILED)


@click.group(
    cls=_Commands,
    context_settings={"help_option_names": ["-h", "--help"], "max_content_width": 100},
)
@click.option(
    "--db",
    metavar="PATH|URL",
    envvar="LIGHTNEWS_DB",
    help="The library: an SQLite file (default: lightnews.db in the user data directory) or "
    "a postgresql://USER@HOST/DB URL for a group's server; env LIGHTNEWS_DB.",
)
@click.option(
    "--as",
    "as_user",
    metavar="NAME",
    envvar="LIGHTNEWS_USER",
    help="Act as this account for reader commands (feed, follow, mute, read, digest, export, "
    "tokens); env LIGHTNEWS_USER. Without accounts: the local reader.",
)
@click.version_option(__version__, prog_name="lightnews")
@click.pass_context
def cli(ctx: click.Context, db: str | None, as_user: str | None) -> None:
    """Lightnews: scholar-powered research news.

    Follow researchers across arXiv, their labs' blogs and other feeds, and read
    one deduplicated feed of the papers they write and discuss.
    """
    app = App(db, as_user)
    ctx.obj = app
    ctx.call_on_close(app.close)


# Every command, in one place (``lightnews --help`` lists them by name).
for _command in (
    # the library itself, and its sources
    db.init,
    db.db_group,
    sources.sources,
    ingest.refresh,
    ingest.ingest,
    ingest.embed,
    imports.import_group,
    # reading
    feed.feed,
    feed.digest,
    feed.mute,
    feed.read_command,
    feed.more_like_this,
    feed.not_interested,
    feed.export_command,
    papers.search,
    papers.related,
    papers.show,
    papers.resolve,
    # scholars
    scholars.follow,
    scholars.unfollow,
    scholars.scholars,
    scholars.scholar,
    # the whole conversation (Bluesky's network)
    listen.listen,
    listen.discussed,
    listen.suggest,
    listen.watch,
    listen.watches,
    listen.unwatch,
    listen.push,
    # settings and accounts
    settings.settings,
    accounts.users,
    accounts.tokens,
    # running it
    serve.serve,
    serve.mcp_command,
    worker.worker,
    demo.demo,
):
    cli.add_command(_command)


def main() -> None:
    cli(prog_name="lightnews")
