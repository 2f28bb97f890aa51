"""Bringing things in: ``refresh`` (every due source, politely), ``ingest`` (a saved
response, replayed) and ``embed`` (vectors for search by meaning)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click

from lightnews.cli.common import (
    EXIT_FAILED,
    EXIT_PARTIAL,
    App,
    emit_json,
    err,
    errors_as_exit,
    out,
    pass_app,
    progress_bar,
)

__all__ = ["embed", "ingest", "refresh"]


@click.command()
@click.option("--force", is_flag=True, help="Refresh every source, due or not.")
@click.option("--kind", "kinds", multiple=True, help="Only sources of this kind; repeatable.")
@click.option("--json", "as_json", is_flag=True, help="Print a JSON report per source.")
@pass_app
def refresh(app: App, force: bool, kinds: tuple[str, ...], as_json: bool) -> None:
    """Fetch every due source politely, with progress and a summary.

    Exit status 3 when some sources failed, 4 when all did; each failure is
    recorded on its source (see `lightnews sources list`).
    """
    app.in_background()
    from lightnews.ingest.refresh import refresh as run_refresh

    with errors_as_exit():
        settings = app.settings
        due = len(app.store.list_sources())
        with progress_bar(err) as progress:
            task = progress.add_task("refreshing", total=due)

            def started(row: Any) -> None:
                progress.update(task, description=f"{row.kind} {row.title or row.address}")

            reports = run_refresh(
                app.store,
                settings,
                force=force,
                kinds=list(kinds) or None,
                on_start=started,
                on_done=lambda r: progress.advance(task),
            )
    failed = [r for r in reports if not r.ok]
    if as_json:
        emit_json([r.to_json() for r in reports])
    else:
        for r in reports:
            if r.ok:
                note = (
                    "not modified"
                    if r.not_modified
                    else (
                        f"{r.saved.papers_new} new papers, {r.saved.items_new} new items, "
                        f"{r.saved.papers_updated + r.saved.items_updated} updated"
                    )
                )
                out.print(f"[green]ok[/green]   #{r.source_id} {r.kind} {r.address}: {note}")
            else:
                out.print(
                    f"[red]fail[/red] #{r.source_id} {r.kind} {r.address}: {r.error} "
                    f"(next attempt {r.next_attempt})"
                )
        out.print(f"{len(reports)} sources refreshed, {len(failed)} failed")
    _embed_after(app, as_json)
    if reports and len(failed) == len(reports):
        sys.exit(EXIT_FAILED)
    if failed:
        sys.exit(EXIT_PARTIAL)


@click.command()
@click.option(
    "--kind",
    required=True,
    help="Source kind that reads the file (arxiv-api, arxiv-oai, arxiv-abs, feed, ...).",
)
@click.option(
    "--from-file",
    "path",
    required=True,
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A saved response, exactly as the service sent it.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_app
def ingest(app: App, kind: str, path: Path, as_json: bool) -> None:
    """Read a saved response instead of the network (replay): same parser, same store."""
    app.in_background()
    from lightnews.ingest.replay import ingest_file

    with errors_as_exit():
        report = ingest_file(app.store, kind, path, app.settings)
    if as_json:
        emit_json(report.to_json())
    elif report.ok:
        s = report.saved
        out.print(
            f"{path.name}: {s.papers_new} new papers, {s.papers_updated} updated, "
            f"{s.items_new} new items, {s.items_updated} updated, "
            f"{s.mentions} mentions, {s.unchanged} unchanged"
        )
        for warning in s.warnings:
            err.print(f"[yellow]warning:[/yellow] {warning}")
    else:
        err.print(f"[red]error:[/red] {path.name}: {report.error}")
    if not report.ok:
        sys.exit(EXIT_FAILED)
    _embed_after(app, as_json)


def _embed_after(app: App, quiet: bool) -> None:
    """Embed what a refresh or an ingest brought, and say so (on stderr)."""
    from lightnews.embed import embed_new

    with errors_as_exit():
        result = embed_new(app.store, app.settings)
    if quiet:
        return
    if isinstance(result, str):
        err.print(f"[dim]search stays lexical: {result}[/dim]")
    elif result.embedded:
        err.print(f"[dim]{result.embedded:,} papers embedded for search by meaning[/dim]")


@click.command()
@click.option("--limit", type=click.IntRange(min=1), help="Embed at most this many papers now.")
@click.option(
    "--batch-size",
    default=1024,
    show_default=True,
    type=click.IntRange(min=1),
    help="Papers per batch.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON.")
@pass_app
def embed(app: App, limit: int | None, batch_size: int, as_json: bool) -> None:
    """Give papers sentence vectors, so search and related papers follow meaning.

    Embeds every paper that has no vector from the encoder chosen by the
    `semantic` setting; interrupted runs keep their work, re-runs go on.
    Needs the semantic extra. The first run makes the encoder from the packaged
    model (the default exports it to ONNX with int8 weights: under a minute, once).
    """
    app.in_background()
    from lightnews.embed import embed_papers

    with errors_as_exit():
        settings = app.settings
        total = app.store.count_unembedded()
        if limit is not None:
            total = min(total, limit)
        with progress_bar(err) as progress:
            task = progress.add_task(f"embedding ({settings.semantic})", total=total)
            report = embed_papers(
                app.store,
                settings,
                limit=limit,
                batch_size=batch_size,
                progress=lambda r: progress.update(task, completed=r.embedded),
            )
    if as_json:
        emit_json(report.to_json())
        return
    out.print(
        f"{report.embedded:,} papers embedded with {report.encoder} in {report.seconds:.1f}s "
        f"({report.per_second:,.0f}/s); {report.remaining:,} left"
    )
