"""``lightnews sources``: add, list, remove and export the sources Lightnews reads."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

import click
from rich.markup import escape
from rich.table import Table

from lightnews.cli.common import (
    App,
    audit_name,
    checked,
    emit_json,
    err,
    errors_as_exit,
    out,
    pass_app,
)
from lightnews.errors import UsageError
from lightnews.normalize import validate
from lightnews.normalize.times import now_iso

__all__ = ["sources"]


@click.group()
def sources() -> None:
    """Add, list, remove and export the sources Lightnews reads."""


@sources.command("add")
@click.argument("url", required=False, callback=checked(validate.feed_address))
@click.option(
    "--category",
    "categories",
    multiple=True,
    metavar="CAT",
    callback=checked(validate.arxiv_category),
    help="An arXiv category to follow (cs.LG); repeatable.",
)
@click.option(
    "--author",
    "authors",
    multiple=True,
    metavar="NAME",
    callback=checked(validate.arxiv_author),
    help='An arXiv author to follow ("Sepp Hochreiter"); repeatable.',
)
@click.option("--query", help="Any arXiv API search_query (ti:diffusion AND cat:cs.CV).")
@click.option("--ids", help="Comma-separated arXiv ids to watch.")
@click.option(
    "--oai-set",
    metavar="SET",
    callback=checked(validate.oai_set),
    help="Harvest an OAI-PMH set (cs, math, physics:hep-th, ...).",
)
@click.option(
    "--oai-format",
    type=click.Choice(["arXiv", "arXivRaw"]),
    default="arXiv",
    show_default=True,
    help="OAI-PMH metadata format for --oai-set.",
)
@click.option(
    "--opml",
    "opml_file",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Add every feed listed in an OPML file, with its folder.",
)
@click.option(
    "--daily-papers",
    "daily_papers",
    is_flag=True,
    help="Follow Hugging Face Daily Papers (upvotes, comments, GitHub stars).",
)
@click.option(
    "--notes",
    "notes_url",
    metavar="URL",
    callback=checked(validate.notes_address),
    help="A page of someone's paper notes (HTML or Markdown), one note per heading.",
)
@click.option("--folder", help="Folder to file the source under.")
@click.option("--title", help="A title for the source.")
@click.option("--json", "as_json", is_flag=True, help="Print the added sources as JSON.")
@pass_app
def sources_add(
    app: App,
    url: str | None,
    categories: tuple[str, ...],
    authors: tuple[str, ...],
    query: str | None,
    ids: str | None,
    oai_set: str | None,
    oai_format: str,
    opml_file: Path | None,
    daily_papers: bool,
    notes_url: str | None,
    folder: str | None,
    title: str | None,
    as_json: bool,
) -> None:
    """Add a feed URL, arXiv categories, authors, queries or ids, an OAI set, or an OPML file.

    \b
    Examples:
      lightnews sources add https://example.org/blog/feed.xml --folder Labs
      lightnews sources add --category cs.LG --category cs.CL
      lightnews sources add --author "Sepp Hochreiter"
      lightnews sources add --opml subscriptions.opml
    """
    wanted: list[tuple[str, str, str | None, str | None, dict[str, Any]]] = []
    if url:
        wanted.append(("feed", url, title, folder, {}))
    wanted += [("arxiv-api", f"cat:{c}", title, folder, {}) for c in categories]
    wanted += [("arxiv-api", f'au:"{a}"', title or a, folder, {}) for a in authors]
    if query is not None:
        if not query.strip():
            raise click.BadParameter("give an arXiv search query", param_hint="--query")
        wanted.append(("arxiv-api", query.strip(), title, folder, {}))
    if ids:
        try:
            parsed = [validate.paper_id(i) for i in ids.split(",") if i.strip()]
        except UsageError as error:
            raise click.BadParameter(str(error), param_hint="--ids") from None
        if not parsed:
            raise click.BadParameter("give arXiv ids separated by commas", param_hint="--ids")
        cleaned = ",".join(dict.fromkeys(p.base for p in parsed))
        wanted.append(("arxiv-api", f"id:{cleaned}", title, folder, {}))
    if oai_set:
        wanted.append(("arxiv-oai", oai_set, title, folder, {"metadataPrefix": oai_format}))
    if daily_papers:
        wanted.append(("hf-daily", "", title or "Hugging Face Daily Papers", folder, {}))
    if notes_url:
        wanted.append(("notes", notes_url, title, folder, {}))
    if opml_file:
        wanted += _opml_feeds(opml_file, folder, int(app.settings.max_title_chars))
    if not wanted:
        raise click.UsageError(
            "nothing to add: give a URL or one of --category, --author, "
            "--query, --ids, --oai-set, --daily-papers, --notes, --opml"
        )

    added: list[dict[str, Any]] = []
    with errors_as_exit():
        actor = audit_name(app)  # checked before anything changes
        for kind, address, name, group, params in wanted:
            row, created = app.store.add_source(
                kind, address, now=now_iso(), title=name, folder=group, params=params
            )
            if created:
                app.store.audit(
                    actor, "sources.add", f"#{row.id} {row.kind} {row.address}", now_iso()
                )
            added.append({**row.to_json(), "created": created})
    if as_json:
        emit_json(added)
        return
    for entry in added:
        state = "added" if entry["created"] else "already there"
        out.print(f"{state}: #{entry['id']} {entry['kind']} {entry['url']}")


def _opml_feeds(
    path: Path, folder: str | None, title_chars: int
) -> list[tuple[str, str, str | None, str | None, dict[str, Any]]]:
    """The feeds of an OPML file to add (:func:`~lightnews.sources.opml.read_subscriptions`);
    each one refused is said on stderr."""
    from lightnews.sources.opml import read_subscriptions

    with errors_as_exit():
        found = read_subscriptions(path, folder, title_chars)
    for address, why in found.refused:
        err.print(f"skipped {escape(address[:200])}: {escape(why)}")
    if found.none_followable:
        raise click.UsageError(f"no feed of {path} has an address that can be followed")
    return [("feed", f.address, f.title, f.folder, {}) for f in found.feeds]


@sources.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def sources_list(app: App, as_json: bool) -> None:
    """List sources with their health: last success, last error, next attempt."""
    with errors_as_exit():
        rows = app.store.list_sources()
    incomplete = [r for r in rows if r.incomplete]
    if as_json:
        emit_json([r.to_json() for r in rows])
        if incomplete:  # a listing arXiv served short or stale: cron should know
            sys.exit(3)
        return
    if not rows:
        out.print("no sources yet: add one with `lightnews sources add`")
        return
    table = Table("id", "kind", "source", "folder", "last success", "errors", "next attempt")
    for r in rows:
        health = f"[red]{r.error_count}: {r.last_error}[/red]" if r.last_error else "0"
        table.add_row(
            str(r.id),
            r.kind,
            r.title or r.address,
            r.folder or "",
            r.last_success or "never",
            health,
            r.next_attempt or "now",
        )
    out.print(table)
    for r in incomplete:
        out.print(f"[red]#{r.id} {r.kind} {r.address}: {r.incomplete}[/red]")
    if incomplete:
        sys.exit(3)


@sources.command("remove")
@click.argument("source_ids", nargs=-1, type=int, required=True)
@pass_app
def sources_remove(app: App, source_ids: tuple[int, ...]) -> None:
    """Remove sources by id (their items go; papers stay)."""
    with errors_as_exit():
        actor = audit_name(app)  # checked before anything changes
        for source_id in source_ids:
            row = app.store.remove_source(source_id)
            app.store.audit(
                actor, "sources.remove", f"#{row.id} {row.kind} {row.address}", now_iso()
            )
            out.print(f"removed #{row.id} {row.kind} {row.address}")


@sources.command("export")
@click.option("--opml", "as_opml", is_flag=True, default=True, help="OPML 2.0 (the default).")
@pass_app
def sources_export(app: App, as_opml: bool) -> None:
    """Print the feed sources as OPML, folders included."""
    from lightnews.deliver.export import sources_opml

    with errors_as_exit():
        click.echo(sources_opml(app.store).decode())
