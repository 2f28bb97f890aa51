"""``lightnews demo``: a library built from the bundled offline snapshot, its feed, and
where to look next (``--port``: served at once)."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import click
from rich.progress import BarColumn, Progress, TextColumn, TimeElapsedColumn

from lightnews.cli.common import App, emit_json, err, errors_as_exit, out, pass_app, shown
from lightnews.cli.serve import serve_library
from lightnews.store import default_db_path

__all__ = ["demo"]


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print what was loaded as JSON.")
@click.option(
    "--port",
    type=click.IntRange(1, 65535),
    default=None,
    help="Then serve the web UI on this port.",
)
@pass_app
def demo(app: App, as_json: bool, port: int | None) -> None:
    """Build a database from the bundled offline snapshot and show its feed.

    Uses --db when given, else demo.db beside the default database. The
    snapshot is a set of saved responses in the services' real formats, read by
    the real parsers: no network needed.
    """
    from lightnews.rank import rank_stories

    if not app.opened and app.db_path == default_db_path():
        app.db_path = default_db_path().with_name("demo.db")
    with errors_as_exit():
        reports = _build_demo_with_progress(app, quiet=as_json)
        stories = rank_stories(
            app.store,
            app.reader,
            limit=10,
            bar=app.settings.attribution_bar,
            settings=app.settings,
        )
        counts = app.store.counts()
    if as_json:
        emit_json(
            {
                "db": shown(app.db_path),
                "counts": counts,
                "files": [r.to_json() for r in reports],
                "feed": [s.to_json() for s in stories],
            }
        )
        return
    out.print(f"[bold]Lightnews demo[/bold] · database {shown(app.db_path)}")
    for report in reports:
        status = "[green]ok[/green]" if report.ok else f"[red]{report.error}[/red]"
        out.print(f"  {report.kind:<10} {Path(report.address).name:<26} {status}")
    out.print(
        f"{counts['papers'] - counts['stubs']} papers, {counts['items']} items, "
        f"{counts['mentions']} mentions, {counts['sources']} sources\n"
    )
    for story in stories:
        out.print(f"[bold]{story.title}[/bold]")
        out.print(
            f"  {story.arxiv_id or (story.items[0].kind if story.items else 'item')} · "
            f"{(story.time or '')[:10]} · "
            f"{' · '.join(dict.fromkeys(story.why))}"
        )
    db = shown(app.db_path)
    out.print("\n[bold]Where to look next[/bold] (the same library each time):")
    out.print(f"  lightnews --db {db} serve --port 8080    # the web UI: http://127.0.0.1:8080/")
    out.print(f"  lightnews --db {db} feed                 # this feed, with why")
    out.print(f"  lightnews --db {db} search attention     # words and meaning")
    out.print(f"  lightnews --db {db} show 2511.18342      # one story and its conversation")
    out.print(f"  (or `export LIGHTNEWS_DB={db}` and leave out --db)")
    if port is not None:
        out.print(f"\nServing it now: http://127.0.0.1:{port}/ (Ctrl-C stops)")
        serve_library(app, "127.0.0.1", port)


def _build_demo_with_progress(app: App, quiet: bool) -> list[Any]:
    """Build the demo, saying on stderr what it is doing (third-party progress bars silenced)."""
    from lightnews.demo import SNAPSHOT_FILES, build_demo

    for name in ("TQDM_DISABLE", "HF_HUB_DISABLE_PROGRESS_BARS"):
        os.environ.setdefault(name, "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    if quiet:
        return build_demo(app.store, app.settings)
    columns = (TextColumn("{task.description}"), BarColumn(), TimeElapsedColumn())
    with Progress(*columns, console=err, transient=False) as progress:
        task = progress.add_task("Building the demo library", total=len(SNAPSHOT_FILES) + 1)

        def step(words: str) -> None:
            progress.update(task, description=words)
            if not words.startswith("Preparing"):
                progress.advance(task)

        reports = build_demo(app.store, app.settings, progress=step)
        progress.update(task, description="Demo library ready", completed=len(SNAPSHOT_FILES) + 1)
    return reports
