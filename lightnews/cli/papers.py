"""Papers: ``search``, ``related``, ``show`` (a paper and its conversation) and
``resolve`` (which papers a text or a page names)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

import click
from rich.markup import escape

from lightnews.cli.common import (
    EXIT_NOT_FOUND,
    App,
    checked,
    emit_json,
    err,
    errors_as_exit,
    out,
    pass_app,
)
from lightnews.errors import UsageError
from lightnews.normalize import validate
from lightnews.normalize.arxiv_ids import ArxivId
from lightnews.normalize.times import utc_now

if TYPE_CHECKING:
    from lightnews.rank.conversation import SaidPost

__all__ = ["related", "resolve", "search", "show"]


def _search_date(text: str) -> str:
    """A search date as typed, checked now and read later against the library's clock."""
    validate.search_date(text, utc_now())
    return text


def _any_category(text: str) -> str:
    return validate.arxiv_category(text, archives=True)


def _source_kind(text: str) -> str:
    from lightnews.sources import registry

    return validate.source_kind(text, registry())


@click.command()
@click.argument("query")
@click.option(
    "--limit",
    default=20,
    show_default=True,
    type=click.IntRange(1, 200),
    help="Results per page.",
)
@click.option(
    "--page", default=1, show_default=True, type=click.IntRange(min=1), help="Page number."
)
@click.option(
    "--subject",
    callback=checked(_any_category),
    help="An arXiv category (cs.LG) or a whole archive (cs).",
)
@click.option(
    "--since",
    callback=checked(_search_date),
    help="Published on or after this day (2025-01-31, or 1d, 2w, today, yesterday).",
)
@click.option(
    "--until",
    callback=checked(_search_date),
    help="Published on or before this day (same forms as --since).",
)
@click.option("--scholar", "scholar_who", metavar="WHO", help="Papers attributed to a scholar.")
@click.option(
    "--source-kind",
    callback=checked(_source_kind),
    help="Papers recorded or mentioned by a kind of source (bluesky).",
)
@click.option(
    "--kind",
    "what",
    default="all",
    show_default=True,
    type=click.Choice(["all", "papers", "said"]),
    help="Papers, what was said (posts, threads, articles, notes), or both (papers first).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def search(
    app: App,
    query: str,
    limit: int,
    page: int,
    subject: str | None,
    since: str | None,
    until: str | None,
    scholar_who: str | None,
    source_kind: str | None,
    what: str,
    as_json: bool,
) -> None:
    """Search papers, posts, threads, articles and notes by words, "exact phrases",
    prefix*, -excluded words, or an arXiv id.

    Papers come first (words fused with meaning), then what was said (by words;
    a thread once); every result says its kind.
    """
    from lightnews.model import SearchFilters
    from lightnews.search import parse_query, search_papers

    with errors_as_exit():
        if not any(not term.exclude for term in parse_query(query)):
            raise UsageError(
                'give words to search for (lightnews search "sparse attention"); '
                "-word only leaves out what has it"
            )
        now = app.settings.now()  # "1w" is a week before the library's clock
        since = validate.search_date(since, now) if since else None
        until = validate.search_date(until, now) if until else None
        validate.date_range(since, until)
        filters = SearchFilters(
            subject=subject,
            since=since,
            until=until,
            source_kind=source_kind,
            scholar_id=app.store.find_scholar(scholar_who) if scholar_who else None,
        )
        hits = search_papers(
            app.store,
            query,
            limit=limit,
            offset=(page - 1) * limit,
            filters=filters,
            settings=app.settings,
            items=what != "papers",
        )
        papers = list(hits) if what != "said" else []
        if page > 1 and not papers and not hits.items:
            raise UsageError(f"page {page} is past the last page of results for this search")
    _how_found(hits)
    if as_json:
        emit_json([h.to_json() for h in papers] + [i.to_json() for i in hits.items])
        return
    if not papers and not hits.items:
        out.print("no results")
    for hit in papers:
        out.print(
            f"{hit.arxiv_id:>18}  {_marked(hit.title_parts)}  [dim]{(hit.published or '')[:10]} "
            f"{hit.primary_category or ''} · by {hit.why}[/dim]"
        )
        if hit.authors:
            more = hit.author_count - len(hit.authors)
            names = ", ".join(hit.authors) + (f" and {more} more" if more > 0 else "")
            out.print(f"{'':>18}  [dim]{escape(names)}[/dim]")
        if hit.snippet:
            out.print(f"{'':>18}  {_marked(hit.snippet_parts)}")
    if hits.items and papers:
        out.print("[bold]said[/bold]")
    for item in hits.items:
        who = f" · {item.author}" if item.author else ""
        out.print(
            f"{item.kind:>18}  {escape(item.title or item.snippet[:80])}  [dim]"
            f"{'' if item.dated else 'seen '}{(item.published or '')[:10]}{who}"
            f" · {item.source_kind} · item {item.item_id}[/dim]"
        )
        out.print(f"{'':>18}  [dim]{escape(item.snippet)}[/dim]")
        if item.url:
            out.print(f"{'':>18}  {escape(item.url)}")


def _marked(parts: list[tuple[str, bool]]) -> str:
    """Text with the query's words in bold (the rest escaped for the console)."""
    return "".join(
        f"[bold]{escape(text)}[/bold]" if marked else escape(text) for text, marked in parts
    )


def _how_found(results: Any) -> None:
    """Say on stderr how results were found, when that is not the full hybrid search."""
    if results.mode == "lexical" or results.note:
        err.print(f"[dim]{results.note or 'by words'}[/dim]")


@click.command()
@click.argument("arxiv_id", callback=checked(validate.paper_id))
@click.option(
    "--limit", default=10, show_default=True, type=click.IntRange(1, 200), help="How many papers."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def related(app: App, arxiv_id: ArxivId, limit: int, as_json: bool) -> None:
    """Papers like this one: all the words of its title and abstract, fused with meaning.

    Without the semantic extra (or before `lightnews embed`), by words only, and it says so.
    """
    from lightnews.search import related_papers

    with errors_as_exit():
        hits = related_papers(app.store, arxiv_id.base, limit=limit, settings=app.settings)
    _how_found(hits)
    if as_json:
        emit_json([h.to_json() for h in hits])
        return
    for hit in hits:
        out.print(f"{hit.arxiv_id:>18}  {hit.title}  [dim]by {' and '.join(hit.matched)}[/dim]")


@click.command()
@click.argument("arxiv_id", callback=checked(validate.paper_id))
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@click.option("--bibtex", "as_bibtex", is_flag=True, help="Print a BibTeX entry.")
@click.option(
    "--posts",
    "posts_page",
    type=click.IntRange(1, 100_000),
    default=1,
    show_default=True,
    help="Which page of the conversation on the network to show.",
)
@pass_app
def show(app: App, arxiv_id: ArxivId, as_json: bool, as_bibtex: bool, posts_page: int) -> None:
    """Show a paper with its versions, links, everything that mentions it and its conversation.

    ARXIV_ID is an id (2510.03172, arXiv:2510.03172v2) or the paper's address
    (https://arxiv.org/abs/2510.03172, its PDF, Hugging Face or DOI link).
    The conversation is what Bluesky says of it, as ``lightnews listen`` heard it
    and as the feeds you follow carry it: threads whole, replies and quotes under
    what they answer, bots folded away.
    Exit status 1 when the paper is not stored.
    """
    from lightnews.rank.conversation import read_conversation

    with errors_as_exit():
        paper = app.store.get_paper(arxiv_id.base)
        talk = read_conversation(
            app.store, paper.arxiv_id, app.reader, app.settings.now(), posts_page
        )
        card = app.store.paper_cards([paper.arxiv_id]).get(paper.arxiv_id) if paper.stub else None
    if as_json:
        emit_json(
            {
                **paper.to_json(),
                "conversation": talk.to_json(),
                "link_card": card.to_json() if card else None,
            }
        )
        return
    if as_bibtex:
        from lightnews.deliver.export import bibtex

        click.echo(bibtex([paper]), nl=False)
        return
    if paper.stub:
        title = f"{card.title} (stub: from a post's link card)" if card else "(a stub)"
        out.print(f"[bold]{escape(title)}[/bold] [dim]metadata not fetched yet[/dim]")
    else:
        out.print(f"[bold]{escape(paper.title)}[/bold]")
    out.print(
        f"{paper.arxiv_id} · {paper.primary_category or ''} · "
        f"{(paper.published or '')[:10]}" + (" · [red]withdrawn[/red]" if paper.withdrawn else "")
    )
    if paper.authors:
        out.print(", ".join(paper.authors))
    if paper.versions:
        out.print(
            "versions: " + ", ".join(f"{v.version} {(v.date or '')[:10]}" for v in paper.versions)
        )
    venue = paper.venue
    if venue is not None:
        out.print(f"venue: {venue.reason} (read from its {venue.source})", markup=False)
    for change in paper.changes:
        # arXiv's date of the version, and the day it was stored when that differs (a
        # later edit of the same version is stored under it), as the story page shows.
        stored = f"stored {change.seen_at[:10]}"
        if change.dated:
            day = change.dated[:10]
            stored = f"on arXiv {day}" + (f", {stored}" if day != change.seen_at[:10] else "")
        out.print(f"{change.note} ({stored})", markup=False)
    if paper.abstract:
        out.print()
        out.print(paper.abstract)
    out.print()
    for name, link in paper.links.items():
        out.print(f"{name}: {link}")
    if paper.mentions:
        out.print(f"\n[bold]mentioned in {len(paper.mentions)} items[/bold]")
        for m in paper.mentions:
            out.print(f"  {m.kind} · {m.source} · {m.title} · {m.url or ''}")
    if talk:
        out.print(f"\n[bold]on the network: {talk.why}[/bold]")
        for unit in talk.units:
            for n, post in enumerate(unit.posts):
                _said_line(post, "  " if n == 0 else "   ↳ ", "")
            if unit.reposters:
                who = (r.label + (" (you follow)" if r.followed else "") for r in unit.reposters)
                out.print("     reposted by " + ", ".join(who), markup=False)
            for post in unit.replies:
                _said_line(post, "     ", "replied")
            for post in unit.quotes:
                _said_line(post, "     ", "quoted it")
        if talk.pages > 1:
            out.print(f"page {talk.page} of {talk.pages} (--posts N for another)")


def _said_line(post: SaidPost, indent: str, how: str) -> None:
    """One post of a story's conversation, as ``show`` prints it."""
    who = post.author + (
        f" @{post.handle}" if post.handle and post.author != f"@{post.handle}" else ""
    )
    marks = (" (you follow)" if post.followed else "") + (" [this week]" if post.recent else "")
    head = f"{indent}{who}{marks}{' ' + how if how else ''} · {(post.created_at or '')[:16]}"
    out.print(head, markup=False)
    pad = " " * (len(indent) + 2)
    out.print(f"{pad}{' '.join(post.text.split())[:280]}", markup=False)
    if post.url:
        out.print(f"{pad}{post.url}", markup=False)


@click.command()
@click.argument("text", required=False)
@click.option(
    "--file",
    "path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Read the text from a file.",
)
@click.option("--offline", is_flag=True, help="Never fetch a URL given as TEXT.")
@click.option(
    "--bar",
    type=click.FloatRange(0, 1),
    default=None,
    help="Confidence a link needs (default: the link_bar setting).",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def resolve(
    app: App,
    text: str | None,
    path: Path | None,
    offline: bool,
    bar: float | None,
    as_json: bool,
) -> None:
    """Which papers does this text or URL mention? Identifiers, titles, "Surname: title".

    TEXT may be text, a URL (its page is fetched unless --offline), or "-" for
    standard input; --file reads a file. A page in a format Lightnews ingests
    (a feed, a notes page, saved Bluesky posts) is read as ingesting it would
    read it, and linked by the same linker. Papers cited as "Surname: short
    title" that the library lacks are looked up on arXiv (not with --offline
    or resolve_online off). Exit status 1 when nothing is found.
    """
    from lightnews.ingest.resolve import resolve_input

    kind: str | None = None
    if path is not None:
        body = path.read_bytes()
    elif text in (None, "-"):
        body = sys.stdin.buffer.read()
    else:
        assert text is not None
        body, kind = text.encode("utf-8"), "text"
    settings = app.settings if bar is None else app.settings.with_overrides(link_bar=bar)
    with errors_as_exit():
        result = resolve_input(app.store, body, settings, kind=kind, fetch=not offline)
        mentions = list(result.mentions)
        for warning in result.warnings:
            err.print(f"[yellow]warning:[/yellow] {warning}")
        known = app.store.papers_by_ids([m.arxiv_id for m in mentions])
    rows = [
        {
            "arxiv_id": m.arxiv_id,
            "title": known[m.arxiv_id].title if m.arxiv_id in known else "",
            "method": m.method,
            "confidence": m.confidence,
        }
        for m in sorted(mentions, key=lambda m: m.confidence, reverse=True)
    ]
    if as_json:
        emit_json(rows)
    else:
        for row in rows:
            out.print(
                f"{row['arxiv_id']:>18}  {row['confidence']:.2f} {row['method']:<12} "
                f"{row['title'] or '(not stored yet)'}"
            )
        if not rows:
            out.print("no paper found")
    if not rows:
        sys.exit(EXIT_NOT_FOUND)
