"""Reading the feed: ``feed``, ``digest``, ``mute``, ``read``, ``more-like-this``,
``not-interested`` and ``export`` (what a reader owns)."""

from __future__ import annotations

import sys

import click
from rich.markup import escape

from lightnews.cli.common import (
    App,
    checked,
    emit_json,
    err,
    errors_as_exit,
    moment_typed,
    out,
    pass_app,
)
from lightnews.errors import UsageError
from lightnews.normalize import validate
from lightnews.normalize.times import now_iso
from lightnews.store.actions import mark_stories, record_paper_feedback

__all__ = [
    "digest",
    "export_command",
    "feed",
    "more_like_this",
    "mute",
    "not_interested",
    "read_command",
]


def _keyword(text: str) -> str:
    word = text.strip().lower()
    if not word:
        raise UsageError("give a word to mute, like benchmark")
    return word


@click.command()
@click.option(
    "--limit", default=30, show_default=True, type=click.IntRange(min=1), help="How many stories."
)
@click.option("--newest", is_flag=True, help="Most recent activity first, without ranking.")
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["text", "atom", "jsonfeed"]),
    default="text",
    show_default=True,
    help="Print as text, Atom 1.0 or JSON Feed 1.1.",
)
@click.option(
    "--papers-only",
    is_flag=True,
    help="Only papers' stories: leave out posts and articles that name no paper.",
)
@click.option("--with-read", is_flag=True, help="Keep the stories you have read (marked read).")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def feed(
    app: App,
    limit: int,
    newest: bool,
    fmt: str,
    papers_only: bool,
    with_read: bool,
    as_json: bool,
) -> None:
    """The feed: stories ranked by what the scholars you follow write and discuss.

    Every entry says why it is there: posted or authored by a followed scholar,
    how many scholars discuss it, upvotes, topics you follow; newer counts more
    (the half_life_hours setting). The whole candidate window is ranked before
    the list is cut, so --limit 5 is the first five of --limit 50. Stories you
    have read stay out until something new happens to them (--with-read keeps them).
    """
    from lightnews.rank import newest_stories, rank_stories

    with errors_as_exit():
        settings = app.reader_settings
        reader = app.reader
        stories = (
            [s for s in newest_stories(app.store, reader, None) if s.arxiv_id or not papers_only]
            if newest
            else rank_stories(
                app.store,
                reader,
                limit=limit,
                half_life_hours=settings.half_life_hours,
                bar=settings.attribution_bar,
                settings=settings,
                papers_only=papers_only,
                keep_read=with_read,
            )
        )[:limit]
    if as_json:
        emit_json([s.to_json() for s in stories])
        return
    if fmt != "text":
        from lightnews.deliver.export import FeedEntry, atom_feed, json_feed

        entries = [FeedEntry(s.url or s.key, s.title, s.url, s.time, why=s.why) for s in stories]
        if fmt == "atom":
            click.echo(atom_feed("Lightnews: your feed", "lightnews:feed", entries).decode())
        else:
            emit_json(json_feed("Lightnews: your feed", "lightnews:feed", entries))
        return
    if not stories:
        out.print("the feed is empty: add sources and run `lightnews refresh`")
    for story in stories:
        label = story.arxiv_id or story.key  # what `read`, `more-like-this` take (item:ID)
        out.print(f"[bold]{escape(story.title)}[/bold]")
        score = "" if newest else f" · score {story.score:.2f}"
        out.print(f"  {label} · {(story.time or '')[:10]}{score}")
        out.print(f"  why: {escape(' · '.join(story.why))}")
        if story.url:
            out.print(f"  {story.url}")


@click.command()
@click.option(
    "--since",
    "since_typed",
    default="1d",
    show_default=True,
    callback=checked(moment_typed),
    help="Stories with activity since: 12h, 1d, 2w, today, yesterday or a date (2025-01-31).",
)
@click.option(
    "--format",
    "fmt",
    type=click.Choice(["md", "html"]),
    default="md",
    show_default=True,
    help="Markdown or HTML.",
)
@click.option(
    "--limit", default=15, show_default=True, type=click.IntRange(min=1), help="How many stories."
)
@click.option(
    "--email",
    "email",
    is_flag=False,
    flag_value="",
    default=None,
    metavar="ADDRESS",
    help="E-mail it (to ADDRESS, or the digest_to setting) through the SMTP settings.",
)
@click.option(
    "--dry-run",
    is_flag=True,
    help="Show what would be delivered (and to whom), sending and marking nothing.",
)
@pass_app
def digest(
    app: App, since_typed: str, fmt: str, limit: int, email: str | None, dry_run: bool
) -> None:
    """The top stories since a moment, each with why it is there; printed or e-mailed.

    Once the digest is delivered (printed, or accepted by the SMTP server), its
    stories count as read everywhere (feed, web, feeds out) until something
    material happens to them, and what happened to the papers you watch, and
    their new posts on the network (its "Watched papers" section), are told
    once. A digest that could not be delivered marks nothing: the next run
    brings the same. --dry-run previews. Stories link to their pages here when
    the public_url setting is set, else to arXiv (and the command says so).
    """
    from lightnews.deliver.digest import (
        compose_digest,
        digest_recipient,
        mark_digested,
        send_digest,
        unlinked_note,
    )

    with errors_as_exit():
        settings = app.reader_settings
        reader = app.reader
        now = settings.now()
        since = validate.moment(since_typed, now)
        to = digest_recipient(settings, email, dry_run=dry_run)
        made = compose_digest(
            app.store, reader, settings, since, limit=limit, now=now, refresh=not dry_run
        )
        if note := unlinked_note(settings):  # links stay absolute: say where they lead
            err.print(f"[dim]{escape(note)}[/dim]")
        if dry_run:
            if to is not None:
                err.print(
                    f"[dim]dry run: would send “{made.subject}” to {to}; nothing sent, "
                    "nothing marked read[/dim]"
                )
            else:
                err.print("[dim]dry run: nothing marked read[/dim]")
            click.echo(made.markdown if fmt == "md" else made.html, nl=False)
            return
        if to is not None:
            send_digest(settings, to, made.subject, made.markdown, made.html)
        else:
            click.echo(made.markdown if fmt == "md" else made.html, nl=False)
            sys.stdout.flush()
        # Delivered: seen in the digest is seen, until something new happens; the watched
        # papers' events are told once.
        mark_digested(
            app.store,
            reader,
            made.stories,
            made.events,
            now.strftime("%Y-%m-%dT%H:%M:%SZ"),
            talk=made.talk,
        )
    if to is not None:
        told = f" and {len(made.events)} events on papers you watch" if made.events else ""
        if made.posts:
            told += f" and {made.posts} new posts " + (
                "on them" if made.events else "on papers you watch"
            )
        out.print(f"sent {len(made.stories)} stories{told} to {to}")


@click.command()
@click.option("--scholar", "scholar_who", metavar="WHO", help="A scholar whose posts say nothing.")
@click.option("--source", "source_id", type=int, metavar="ID", help="A source to silence.")
@click.option(
    "--keyword",
    metavar="WORD",
    callback=checked(_keyword),
    help="Hide stories whose title has this word.",
)
@click.option("--undo", is_flag=True, help="Unmute instead.")
@pass_app
def mute(
    app: App, scholar_who: str | None, source_id: int | None, keyword: str | None, undo: bool
) -> None:
    """Mute (or --undo) a scholar, a source or a keyword in the feed and digests."""

    now = now_iso()
    with errors_as_exit():
        targets: list[tuple[str, str]] = []
        if scholar_who:
            targets.append(("scholar", str(app.store.find_scholar(scholar_who))))
        if source_id is not None:
            targets.append(("source", str(app.store.get_source(source_id).id)))
        if keyword:
            targets.append(("keyword", keyword))
        if not targets:
            raise UsageError("give --scholar, --source or --keyword")
        for kind, value in targets:
            app.store.set_mute(app.reader, kind, value, now, muted=not undo)
            out.print(f"{'unmuted' if undo else 'muted'} {kind} {value}")
    app.learn()


@click.command("read")
@click.argument("stories", nargs=-1, required=True, callback=checked(validate.story_key))
@click.option("--unread", is_flag=True, help="Mark unread instead.")
@click.option("--save", is_flag=True, help="Also save them (keep them in the export).")
@pass_app
def read_command(app: App, stories: tuple[str, ...], unread: bool, save: bool) -> None:
    """Mark stories read (an arXiv id or address, or item:ID): back only when something new happens.

    Exit status 1 (and nothing marked) when one of them is not stored.
    """
    with errors_as_exit():
        marked = mark_stories(
            app.store, app.reader, stories, now_iso(), read=not unread, saved=True if save else None
        )
    for key in marked:
        out.print(f"{key}: {'unread' if unread else 'read'}{', saved' if save else ''}")
    app.learn()


@click.command("more-like-this")
@click.argument("papers", nargs=-1, required=True, callback=checked(validate.story_key))
@click.option("--undo", is_flag=True, help="Take it back.")
@pass_app
def more_like_this(app: App, papers: tuple[str, ...], undo: bool) -> None:
    """Ask for more papers like these: your feed learns from it as from a save."""
    _paper_feedback(app, papers, None if undo else "more-like-this")


@click.command("not-interested")
@click.argument("papers", nargs=-1, required=True, callback=checked(validate.story_key))
@click.option("--undo", is_flag=True, help="Take it back: the paper may come back.")
@pass_app
def not_interested(app: App, papers: tuple[str, ...], undo: bool) -> None:
    """Hide papers from your feed, and show fewer like them (yours alone)."""
    _paper_feedback(app, papers, None if undo else "not-interested")


def _paper_feedback(app: App, papers: tuple[str, ...], decision: str | None) -> None:
    """The reader's word on papers (all of them known before any is recorded)."""
    with errors_as_exit():
        recorded = record_paper_feedback(app.store, app.reader, papers, decision, now_iso())
    for key in recorded:
        out.print(f"{key}: {decision or 'no feedback'}")
    app.learn()


@click.command("export")
@click.option("--bibtex", "as_bibtex", is_flag=True, help="BibTeX of your saved stories instead.")
@pass_app
def export_command(app: App, as_bibtex: bool) -> None:
    """Print everything you own as JSON: follows, identities, decisions, sources, settings."""
    from lightnews.deliver.export import user_export

    with errors_as_exit():
        if as_bibtex:
            from lightnews.deliver.export import bibtex
            from lightnews.normalize.arxiv_ids import parse_arxiv_id

            saved = [
                k
                for k, (_, saved_at) in app.store.story_states(app.reader).items()
                if saved_at and parse_arxiv_id(k)
            ]
            click.echo(bibtex(app.store.get_paper(k) for k in sorted(saved)), nl=False)
            return
        emit_json(user_export(app.store, app.reader))
