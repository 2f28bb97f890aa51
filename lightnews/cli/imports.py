"""``lightnews import``: a reference library (BibTeX, CSL JSON), an export of Lightnews
itself, or arXiv's metadata snapshot, in bulk."""

from __future__ import annotations

import sys
from pathlib import Path

import click
from rich.markup import escape

from lightnews.cli.common import (
    EXIT_FAILED,
    EXIT_PARTIAL,
    App,
    audit_name,
    emit_json,
    err,
    errors_as_exit,
    out,
    pass_app,
    progress_bar,
)
from lightnews.errors import UsageError
from lightnews.normalize.times import now_iso

__all__ = ["import_group"]


@click.group("import")
def import_group() -> None:
    """Bulk imports."""


@import_group.command("library")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--list",
    "list_name",
    metavar="NAME",
    help="File the saves in this saved list (an interest of its own).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@pass_app
def import_library(app: App, path: Path, list_name: str | None, as_json: bool) -> None:
    """Save the papers of your reference library: a BibTeX or CSL JSON export (Zotero,
    Mendeley, Paperpile, JabRef). Your feed learns what you like from them at once.

    Entries with an arXiv id are saved (papers the library lacks are fetched by the
    next refresh); entries with another DOI are saved when a stored paper has it.
    Re-running is safe.
    """
    from lightnews.rank.coldstart import save_library
    from lightnews.sources.libraries import read_library

    if list_name is not None and not list_name.strip():
        raise click.BadParameter("give the list a name", param_hint="--list")
    with errors_as_exit():
        entries = read_library(path)
        done = save_library(app.store, app.reader, entries, now_iso(), list_name)
    app.learn()  # "your feed learns what you like from them at once"
    if as_json:
        emit_json(done.to_json())
        return
    fetched = (
        f" ({done.new_stubs} new to the library, fetched at the next refresh)"
        if (done.new_stubs)
        else ""
    )
    out.print(
        f"saved {done.saved} of {done.entries} entries{fetched}"
        + (f" in the list “{list_name}”" if list_name else "")
    )
    if done.unmatched:
        shown = ", ".join(done.unmatched[:8]) + (" …" if len(done.unmatched) > 8 else "")
        out.print(f"{len(done.unmatched)} without an arXiv id or a known DOI: {shown}")


@import_group.command("export")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option("--json", "as_json", is_flag=True, help="Print what was taken as JSON.")
@pass_app
def import_export(app: App, path: Path, as_json: bool) -> None:
    """Take back what `lightnews export` wrote: follows, mutes, read and saved stories, your
    settings, and the shared decisions, sources and settings (those in the audit log).

    Re-running is safe: what is already so is left as it is. Exit status 3 when some
    entries could not be taken (each is printed with why).
    """
    from lightnews.deliver.export import read_export, user_import

    with errors_as_exit():
        if path.stat().st_size > 200 * 1024 * 1024:
            raise UsageError(f"{path} is over 200 MB: not an export of one reader")
        document = read_export(path.read_bytes())
        actor = audit_name(app)  # checked before anything changes
        report = user_import(app.store, app.reader, document, now_iso(), actor=actor)
    if as_json:
        emit_json(report.to_json())
    else:
        out.print(
            f"imported {path.name}: {report.follows} follows, {report.mutes} mutes, "
            f"{report.stories} stories, {report.settings} settings, {report.sources} "
            f"sources, {report.decisions} decisions new or changed"
        )
        for note in report.remarks:
            err.print(f"[yellow]note:[/yellow] {escape(note)}", soft_wrap=True)
        for problem in report.left_out:
            err.print(f"[red]left out:[/red] {escape(problem)}", soft_wrap=True)
    if report.left_out:
        sys.exit(EXIT_PARTIAL)


@import_group.command("arxiv-snapshot")
@click.argument("path", type=click.Path(exists=True, dir_okay=False, path_type=Path))
@click.option(
    "--batch-size",
    default=5000,
    show_default=True,
    type=click.IntRange(min=1),
    help="Records per batch (several batches make one transaction).",
)
@click.option(
    "--connections",
    type=click.IntRange(min=1),
    default=None,
    help="PostgreSQL: connections inserting new papers at once, each a server process "
    "computing their full-text columns [default: the CPU count, at most 8].",
)
@click.option("--json", "as_json", is_flag=True, help="Print the summary as JSON.")
@pass_app
def import_snapshot(
    app: App, path: Path, batch_size: int, connections: int | None, as_json: bool
) -> None:
    """Import arXiv's metadata snapshot (JSON Lines), streamed in constant memory.

    Re-importing is safe: unchanged records are skipped, changed ones merged.
    """
    app.in_background()
    from lightnews.ingest.bulk import import_snapshot as run_import
    from lightnews.normalize.limits import Limits

    with errors_as_exit(), progress_bar(err) as progress:
        task = progress.add_task(f"importing {path.name}", total=path.stat().st_size)
        summary = run_import(
            app.store,
            path,
            batch_size=batch_size,
            on_progress=lambda done: progress.update(task, completed=done),
            limits=Limits.from_settings(app.settings),
            connections=connections,
        )
    if as_json:
        emit_json(summary.to_json())
    else:
        out.print(
            f"{summary.records} records in {summary.seconds:.1f}s "
            f"({summary.rate:,.0f}/s): {summary.saved.papers_new} new, "
            f"{summary.saved.papers_updated} updated, {summary.saved.unchanged} unchanged, "
            f"{summary.saved.stubs} stubs (no title yet), {summary.errors.count} unreadable lines"
            + (f", {summary.cut} fields cut to size" if summary.cut else "")
            + (f"; {summary.attributed} scholars attributed" if summary.attributed else "")
        )
        for example in summary.errors.examples:
            err.print(f"[yellow]skipped[/yellow] {example}")
        for example in summary.cut_examples:
            err.print(f"[yellow]cut[/yellow] {example}")
        if summary.saved.papers_new or summary.saved.papers_updated:
            err.print("[dim]next: `lightnews embed` makes them searchable by meaning[/dim]")
    if summary.records == 0 and summary.errors.count:
        sys.exit(EXIT_FAILED)
