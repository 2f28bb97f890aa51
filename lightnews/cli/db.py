"""The library itself: ``init`` (the schema, and a deployment's first admin) and ``db copy``."""

from __future__ import annotations

import os
import sys

import click
from rich.markup import escape

from lightnews.cli.common import (
    EXIT_FAILED,
    App,
    audit_name,
    emit_json,
    err,
    errors_as_exit,
    out,
    pass_app,
    shown,
)

__all__ = ["db_group", "init"]


@click.command()
@click.option(
    "--admin-from-env",
    is_flag=True,
    help="On a library without accounts, create the first admin: LIGHTNEWS_ADMIN_USER, with "
    "the password in LIGHTNEWS_ADMIN_PASSWORD_FILE (a file) or LIGHTNEWS_ADMIN_PASSWORD. "
    "With accounts, nothing changes (no password is ever overwritten).",
)
@pass_app
def init(app: App, admin_from_env: bool) -> None:
    """Create the database (or bring its schema up to date).

    A deployment's setup step runs `lightnews init --admin-from-env` before the
    web processes start: the first time it makes the first admin from the
    environment; every time after, it only says that accounts exist.
    """
    from lightnews.store.secrets import admin_from_env as first_admin

    with errors_as_exit():
        version = app.store.schema_version
        said = ""
        if admin_from_env:
            setup = first_admin(app.store, os.environ, lambda: audit_name(app))
            if setup.note:
                err.print(setup.note)
            said = setup.said
    out.print(f"database ready at {shown(app.db_path)} (schema version {version})")
    if said:
        out.print(escape(said))


@click.group("db")
def db_group() -> None:
    """Move a library between backends (SQLite files and PostgreSQL URLs)."""


@db_group.command("copy")
@click.argument("source")
@click.argument("destination")
@click.option("--json", "as_json", is_flag=True, help="Print the table-by-table check as JSON.")
@click.option(
    "--keep-clock",
    is_flag=True,
    help="Copy the `clock` setting too (left out by default: a copy of the demo would "
    "otherwise believe it is still the demo's day).",
)
def db_copy(source: str, destination: str, as_json: bool, keep_clock: bool) -> None:
    """Copy the whole library SOURCE into the new, empty DESTINATION, then compare them.

    Each is an SQLite file or a postgresql:// URL, in either direction. Every
    table is compared at the end (rows and a checksum of every row); the exit
    code is 4 when anything differs. The `clock` setting (the demo's frozen
    "now") is left out unless --keep-clock: the copy reads the real clock.
    """
    from lightnews.store.copy import copy_library

    with errors_as_exit():
        report = copy_library(
            source,
            destination,
            lambda table, rows: err.print(f"  {table}: {rows:,}", end="\r"),
            keep_clock=keep_clock,
        )
    if as_json:
        emit_json(report.to_json())
    else:
        for check in report.tables:
            mark = "[green]equal[/green]" if check.equal else "[red]DIFFERENT[/red]"
            out.print(f"{check.table:<22} {check.copied_rows:>10,} rows  {mark}")
        out.print(f"copied {report.source} → {report.destination}")
        if report.clock_left_out:
            out.print(
                f"left out the clock setting ({escape(report.clock_left_out)}): the copy reads "
                "the real clock (--keep-clock keeps it)"
            )
    if not report.equal:
        sys.exit(EXIT_FAILED)
