"""Scholars: ``follow``, ``unfollow``, ``scholars`` (list, merge, split, confirm, reject,
undecide) and ``scholar`` (one scholar's page)."""

from __future__ import annotations

from dataclasses import replace

import click
from rich.markup import escape
from rich.table import Table

from lightnews.cli.common import (
    App,
    audit_name,
    checked,
    emit_json,
    errors_as_exit,
    out,
    pass_app,
)
from lightnews.normalize import validate
from lightnews.normalize.arxiv_ids import ArxivId
from lightnews.normalize.times import now_iso

__all__ = ["follow", "scholar", "scholars", "unfollow"]


def _starter_pack(text: str) -> str:
    from lightnews.sources.bluesky import starter_pack_uri

    starter_pack_uri(text)  # refuses what is not a starter pack's address
    return text.strip()


@click.command()
@click.argument("handle", required=False, callback=checked(validate.bluesky_handle))
@click.option(
    "--arxiv-author",
    "arxiv_author",
    metavar="NAME",
    callback=checked(validate.arxiv_author),
    help='Follow an arXiv author ("Sepp Hochreiter"): their papers, attributed.',
)
@click.option(
    "--orcid",
    metavar="ID",
    callback=checked(validate.orcid),
    help="Add an ORCID iD to the scholar (its check digit is checked).",
)
@click.option(
    "--starter-pack",
    "starter_pack",
    metavar="URL",
    callback=checked(_starter_pack),
    help="Follow every member of a Bluesky starter pack.",
)
@click.option(
    "--scholar",
    "scholar_query",
    metavar="WHO",
    help="Add the identity to this existing scholar instead of a new one.",
)
@click.option("--json", "as_json", is_flag=True, help="Print the scholar as JSON.")
@pass_app
def follow(
    app: App,
    handle: str | None,
    arxiv_author: str | None,
    orcid: str | None,
    starter_pack: str | None,
    scholar_query: str | None,
    as_json: bool,
) -> None:
    """Follow a scholar: a Bluesky @handle, an arXiv author, an ORCID, or a starter pack.

    \b
    Examples:
      lightnews follow @mkirchhof.bsky.social
      lightnews follow --arxiv-author "Sepp Hochreiter"
      lightnews follow --orcid 0000-0002-1825-0097 --scholar "Sepp Hochreiter"
      lightnews follow --starter-pack https://bsky.app/starter-pack/someone/3kabc
    It then says when their sources are first fetched: at the worker's next tick
    after they are due (`lightnews worker`), else at the next `lightnews refresh`.
    """
    from lightnews.ingest.follow import first_fetch, follow_scholar

    if not (handle or arxiv_author or orcid or starter_pack):
        raise click.UsageError("give a @handle, --arxiv-author, --orcid or --starter-pack")
    now = now_iso()
    store = app.store
    with errors_as_exit():
        reader = app.reader
        if starter_pack:
            row, _ = store.add_source(
                "bluesky-starter-pack",
                starter_pack,
                now=now,
                params={"follow_members": True, "follow_for": int(reader)},
            )
            out.print(
                f"following the members of {starter_pack} (source #{row.id}); "
                "run `lightnews refresh`"
            )
            if not (handle or arxiv_author or orcid):
                return
        scholar_id = follow_scholar(
            store,
            reader,
            now,
            handle=handle,
            arxiv_author=arxiv_author,
            orcid=orcid,
            scholar_id=store.find_scholar(scholar_query) if scholar_query else None,
        )
        scholar = store.get_scholar(scholar_id)
        waiting = first_fetch(store, scholar_id, app.settings)
    if as_json:
        emit_json({**scholar.to_json(), "first_fetch": waiting.to_json() if waiting else None})
        return
    ids = ", ".join(f"{i.kind} {i.value}" for i in scholar.identities)
    out.print(f"following #{scholar.id} {escape(scholar.name)} ({escape(ids)})")
    if waiting:
        out.print(escape(waiting.text))


@click.command()
@click.argument("who")
@pass_app
def unfollow(app: App, who: str) -> None:
    """Stop following a scholar (kept; their sources pause when no reader follows them)."""
    from lightnews.ingest.follow import unfollow_scholar

    with errors_as_exit():
        scholar_id = app.store.find_scholar(who)
        unfollow_scholar(app.store, app.reader, scholar_id, now_iso())
        out.print(f"unfollowed #{scholar_id} {app.store.get_scholar(scholar_id).name}")


@click.group()
def scholars() -> None:
    """List scholars, merge or split them, confirm or reject their papers."""


@scholars.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def scholars_list(app: App, as_json: bool) -> None:
    """Scholars with their identities and how many records are attributed to them."""
    with errors_as_exit():
        rows = app.store.list_scholars(app.settings.attribution_bar)
        mine = app.store.follows(app.reader)
    rows = [replace(r, followed=r.id in mine) for r in rows]  # whether *you* follow them
    if as_json:
        emit_json([r.to_json() for r in rows])
        return
    if not rows:
        out.print("no scholars yet: `lightnews follow @handle` or `--arxiv-author NAME`")
        return
    table = Table("id", "name", "identities", "records", "followed")
    for row in rows:
        ids = "\n".join(f"{i.kind}: {i.value}" for i in row.identities)
        table.add_row(
            str(row.id),
            row.name,
            ids,
            str(row.records),
            "yes" if row.followed else "no",
        )
    out.print(table)


@scholars.command("merge")
@click.argument("keep")
@click.argument("drop")
@pass_app
def scholars_merge(app: App, keep: str, drop: str) -> None:
    """Merge scholar DROP into KEEP (one person known twice)."""
    from lightnews.link.attribution import merge_scholars

    with errors_as_exit():
        keep_id, drop_id = app.store.find_scholar(keep), app.store.find_scholar(drop)
        count = merge_scholars(app.store, keep_id, drop_id)
        out.print(f"merged #{drop_id} into #{keep_id}: {count} attributed records")


@scholars.command("split")
@click.argument("who")
@click.option(
    "--identity",
    "identities",
    multiple=True,
    required=True,
    metavar="KIND:VALUE",
    help="An identity to move to the new scholar (arxiv-name:NAME); repeatable.",
)
@click.option("--name", required=True, help="Name of the new scholar.")
@pass_app
def scholars_split(app: App, who: str, identities: tuple[str, ...], name: str) -> None:
    """Split identities off a scholar into a new one (two people known as one)."""
    from lightnews.link.attribution import split_scholar

    pairs = []
    for identity in identities:
        kind, sep, value = identity.partition(":")
        if not sep or not value:
            raise click.BadParameter(f"{identity!r} is not KIND:VALUE", param_hint="--identity")
        pairs.append((kind, value))
    with errors_as_exit():
        old_id = app.store.find_scholar(who)
        new_id = split_scholar(app.store, old_id, pairs, name, now_iso())
    out.print(f"split #{new_id} {name} off #{old_id}")


def _decide(app: App, who: str, arxiv_id: ArxivId, decision: str | None) -> None:
    from lightnews.link.attribution import decide_attribution

    with errors_as_exit():
        actor = audit_name(app)  # checked before anything changes
        scholar_id = app.store.find_scholar(who)
        # A decision every reader sees: the audit log says who made it.
        decide_attribution(app.store, scholar_id, arxiv_id.base, decision, now_iso(), by=actor)
    word = {"confirm": "confirmed", "reject": "rejected", None: "left to the matcher"}[decision]
    out.print(f"{arxiv_id.base} {word} for #{scholar_id}")


def _decision_command(name: str, decision: str | None, summary: str) -> None:
    """One ``scholars`` subcommand recording the user's decision on an attribution."""

    @scholars.command(name, help=summary)
    @click.argument("who")
    @click.argument("arxiv_id", callback=checked(validate.paper_id))
    @pass_app
    def command(app: App, who: str, arxiv_id: ArxivId) -> None:
        _decide(app, who, arxiv_id, decision)


for _name, _decision, _summary in (
    (
        "confirm",
        "confirm",
        "Confirm that ARXIV_ID is by this scholar (kept across every re-ingest).",
    ),
    (
        "reject",
        "reject",
        "Reject a wrong attribution of ARXIV_ID to this scholar (kept across re-ingests).",
    ),
    ("undecide", None, "Forget a confirm or reject: the matcher decides again."),
):
    _decision_command(_name, _decision, _summary)


@click.command()
@click.argument("who")
@click.option(
    "--page",
    default=1,
    show_default=True,
    type=click.IntRange(min=1),
    help="Page of the papers list.",
)
@click.option(
    "--per-page",
    default=20,
    show_default=True,
    type=click.IntRange(1, 500),
    help="Papers per page.",
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def scholar(app: App, who: str, page: int, per_page: int, as_json: bool) -> None:
    """A scholar's page: profile, posts (threads as one unit) and attributed papers.

    WHO is an id, a handle, an ORCID iD or (part of) a name: `scholar mara`,
    `scholar Lindqvist`. When several scholars match, they are listed (exit status 2).
    """
    from lightnews.serve.scholar import numbers_itself, scholar_page

    with errors_as_exit():
        data = scholar_page(
            app.store,
            who,
            page=page,
            per_page=per_page,
            bar=app.settings.attribution_bar,
            reader=app.reader,
        )
    if as_json:
        emit_json(data.to_json())
        return
    profile = data.profile
    out.print(
        f"[bold]{data.scholar.name}[/bold]"
        + (f"  @{profile.handle}" if profile and profile.handle else "")
    )
    if profile:
        out.print(
            f"{profile.followers or 0} followers · {profile.following or 0} "
            f"following · {profile.posts or 0} posts"
        )
        if profile.description:
            out.print(profile.description)
    for other_id, other_name in data.namesakes:
        out.print(
            f"[yellow]maybe the same person as #{other_id} {escape(other_name)}[/yellow]: "
            f"lightnews scholars merge {other_id} {data.scholar.id}"
        )
    for post in data.posts[:30]:
        if post.gap:
            where = f"{post.position}/{post.thread_size}"
            out.print(f"\n[dim]… post {where} of this thread is not fetched yet[/dim]")
            continue
        marks = []
        if post.pinned:
            marks.append("pinned")
        if post.reposted_by:
            by = post.reposted_by
            marks.append(f"reposted by {by.name or by.handle}, by {post.author} @{post.handle}")
        if post.thread_size > 1 and not numbers_itself(post.text):
            marks.append(f"thread {post.position}/{post.thread_size}")
        when = (post.created_at or "")[:16].replace("T", " ")
        out.print()
        out.print(escape(" · ".join([when, *marks])), style="dim", soft_wrap=True)
        out.print(escape(post.text))
        for link in post.links:
            out.print(f"  {link}")
    out.print(
        f"\n[bold]Publications and source records · at least {data.records_at_least} "
        f"records · page {data.page} of {data.pages}[/bold]"
    )
    for paper in data.papers:
        out.print(
            f"{paper.year or '----'}  {paper.title}  [dim]{paper.primary_category}"
            f"  {paper.url}[/dim]"
        )
