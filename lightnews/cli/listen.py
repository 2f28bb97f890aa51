"""Commands of the whole conversation: ``listen``, ``discussed``, ``watch``, ``push``, ``suggest``.

Registered on the ``lightnews`` command group by :mod:`lightnews.cli`, kept
together because they share one job: hearing the
whole Bluesky network (:mod:`lightnews.ingest.listen`), ranking what it discusses
(:mod:`lightnews.rank.discussed`) and telling a reader what happens to the
papers they watch (:mod:`lightnews.deliver.watch`), and whom else to follow
(:mod:`lightnews.rank.suggest`).
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections import Counter
from pathlib import Path

import click
from rich.markup import escape

from lightnews.cli.common import (
    EXIT_FAILED,
    EXIT_PARTIAL,
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
from lightnews.normalize.arxiv_ids import ArxivId

__all__ = ["discussed", "listen", "push", "suggest", "unwatch", "watch", "watches"]


def _jetstream_url(text: str) -> str:
    value = text.strip()
    if not value.startswith(("ws://", "wss://")):
        raise UsageError(f"a Jetstream address starts with ws:// or wss://, got {value[:60]!r}")
    return value


@click.command()
@click.option(
    "--from-file",
    "path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="Replay recorded events (one JSON event a line) instead of the network.",
)
@click.option(
    "--url",
    callback=checked(_jetstream_url),
    help="Jetstream address (default: the jetstream_url setting).",
)
@click.option(
    "--max-connections",
    type=click.IntRange(min=1),
    hidden=True,
    help="Stop after this many connections (tests).",
)
@click.option("--json", "as_json", is_flag=True, help="Print the report as JSON at the end.")
@pass_app
def listen(
    app: App, path: Path | None, url: str | None, max_connections: int | None, as_json: bool
) -> None:
    """Hear every Bluesky post about a paper, network-wide, from Jetstream.

    Keeps each post that names a paper (arXiv, alphaXiv, Hugging Face,
    OpenReview or DOI links and ids, link cards, quotes and reposts of such
    posts; titles too for the scholars you follow). The cursor is saved with
    the posts, so a restart resumes where it stopped, with no gap and no post
    stored twice; a dropped connection is reconnected with a backoff.
    Ctrl-C or SIGTERM stops it after saving what it heard.
    """
    from lightnews.ingest.listen import Listener, listen_websocket, replay_file

    with errors_as_exit():
        settings = app.settings
        if path is not None:
            report = replay_file(app.store, settings, path)
        else:
            address = url or str(settings.jetstream_url)
            listener = Listener(app.store, settings, address)
            if not as_json:
                start = listener.resume_from
                err.print(
                    f"listening to {escape(address)}" + (f" from cursor {start}" if start else "")
                )

            async def run() -> None:
                stop = asyncio.Event()
                loop = asyncio.get_running_loop()
                for signum in (signal.SIGINT, signal.SIGTERM):
                    loop.add_signal_handler(signum, stop.set)
                await listen_websocket(
                    listener,
                    address,
                    stop=stop,
                    max_backoff=float(settings.listen_max_backoff),
                    max_connections=max_connections,
                )

            asyncio.run(run())
            report = listener.report
    if as_json:
        emit_json(report.to_json())
        return
    c = report.counts
    out.print(
        f"{c.events} events: {c.kept} about papers ({report.stored} new), {c.skipped} skipped "
        f"undecoded, {c.other} other, {c.malformed} malformed, {c.unknown} of unknown kinds; "
        f"cursor {report.cursor}"
    )
    if c.events and c.malformed + c.unknown == c.events:
        sys.exit(EXIT_FAILED)


@click.command()
@click.option(
    "--since",
    default="24h",
    show_default=True,
    callback=checked(moment_typed),
    help="How far back: 24h, 7d, today, yesterday or a date (2026-12-01).",
)
@click.option(
    "--limit", default=30, show_default=True, type=click.IntRange(1, 500), help="How many papers."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def discussed(app: App, since: str, limit: int, as_json: bool) -> None:
    """Papers the network discusses now, by the people who post about them.

    Each account counts once per paper, weighed by its reach (followers,
    log-scaled and capped) and more when it is a scholar you follow or one
    they follow; bots, mirrors and listing accounts weigh almost nothing. Each
    entry says who and how many.
    """
    from lightnews.rank.discussed import discussed_papers

    with errors_as_exit():
        moment = validate.moment(since, app.settings.now())
        entries = discussed_papers(
            app.store,
            app.reader,
            moment,
            limit=limit,
            bot_weight=float(app.settings.discussed_bot_weight),
        )
    if as_json:
        emit_json({"since": moment.isoformat(), "papers": [e.to_json() for e in entries]})
        return
    if not entries:
        out.print("nothing discussed in that time (is `lightnews listen` running?)")
        return
    for entry in entries:
        out.print(f"[bold]{escape(entry.title or entry.paper)}[/bold]  {escape(entry.paper)}")
        out.print(f"  {entry.score:.1f} · {escape(entry.why)}")


@click.command()
@click.option(
    "--limit", default=30, show_default=True, type=click.IntRange(1, 500), help="How many accounts."
)
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def suggest(app: App, limit: int, as_json: bool) -> None:
    """Accounts you might follow, each with why.

    Accounts the scholars you follow repost, quote, reply to or follow,
    co-authors of their papers and authors of papers you saved whose Bluesky
    account is known, and accounts discussing papers you saved. Accounts you
    follow or muted, bots and mirrors are left out. Follow one with
    `lightnews follow HANDLE`.
    """
    from lightnews.rank.suggest import follow_suggestions

    with errors_as_exit():
        found = follow_suggestions(
            app.store, app.reader, limit=limit, bar=float(app.settings.attribution_bar)
        )
    if as_json:
        emit_json({"suggestions": [s.to_json() for s in found]})
        return
    if not found:
        out.print("no suggestions yet: follow a scholar, save papers, or run `lightnews listen`")
        return
    for entry in found:
        handle = f"  @{entry.handle}" if entry.handle and entry.name else ""
        out.print(f"[bold]{escape(entry.label)}[/bold]{escape(handle)}  {escape(entry.did)}")
        out.print(f"  {escape(' · '.join(r.text for r in entry.reasons))}")
        onto = f" --scholar {entry.scholar_id}" if entry.scholar_id else ""  # not a second one
        out.print(f"  lightnews follow {escape(entry.follow_as)}{onto}")


def _reader(app: App) -> str:
    """The key of the reader the watches and push targets belong to (``--as``)."""
    from lightnews.store.readers import reader_key

    return reader_key(app.reader)


@click.command()
@click.argument("arxiv_id", callback=checked(validate.paper_id))
@click.option("--json", "as_json", is_flag=True, help="Print what is watched as JSON.")
@pass_app
def watch(app: App, arxiv_id: ArxivId, as_json: bool) -> None:
    """Be told when a paper is discussed again, gets a new version or its code.

    New mentions by the scholars you follow (or accounts they repost), new
    versions and code releases go to your push targets (`lightnews push add`)
    and the next digest, one message per event. Bots never trigger one.
    """
    from lightnews.deliver.watch import start_watching, watching

    with errors_as_exit():
        changed = start_watching(app.store, _reader(app), arxiv_id.base)
        watched = watching(app.store, _reader(app))
    if as_json:
        emit_json({"watching": watched, "added": changed})
        return
    out.print(f"watching {arxiv_id.base}" if changed else f"already watching {arxiv_id.base}")


@click.command()
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def watches(app: App, as_json: bool) -> None:
    """The papers you watch, each with when you began, and where news of them goes."""
    with errors_as_exit():
        since = app.store.watches_since(_reader(app))
        papers = app.store.papers_by_ids([arxiv_id for arxiv_id, _ in since])
        targets = app.store.push_targets(_reader(app))
    listed = [
        {
            "paper": arxiv_id,
            "title": papers[arxiv_id].title if arxiv_id in papers else None,
            "since": began,
        }
        for arxiv_id, began in since
    ]
    if as_json:
        told_at = [{"kind": t.kind, "address": t.address} for t in targets]
        emit_json({"watching": listed, "targets": told_at})
        return
    if not listed:
        out.print("no watched papers: watch one with `lightnews watch ID`")
        return
    for entry in listed:
        title = f"  {escape(str(entry['title']))}" if entry["title"] else ""
        out.print(f"[bold]{entry['paper']}[/bold]{title}  (since {str(entry['since'])[:10]})")
    told = ", ".join(f"{t.kind} {escape(t.address)}" for t in targets)
    if not told:
        told = "the digest only (add a target with `lightnews push add`)"
    out.print(f"news goes to: {told}")


@click.command()
@click.argument("arxiv_id", callback=checked(validate.paper_id))
@pass_app
def unwatch(app: App, arxiv_id: ArxivId) -> None:
    """Stop watching a paper."""
    from lightnews.deliver.watch import stop_watching

    with errors_as_exit():
        changed = stop_watching(app.store, _reader(app), arxiv_id.base)
    out.print(
        f"no longer watching {arxiv_id.base}" if changed else f"{arxiv_id.base} was not watched"
    )


@click.group()
def push() -> None:
    """Where news of watched papers is pushed: webhooks, ntfy topics, e-mail."""


@push.command("add")
@click.argument("kind", type=click.Choice(["webhook", "ntfy", "email"]))
@click.argument("address")
@pass_app
def push_add(app: App, kind: str, address: str) -> None:
    """Add a target: `webhook URL` (JSON POST), `ntfy TOPIC-URL`, `email ADDRESS`."""
    from lightnews.deliver.watch import check_target
    from lightnews.normalize.times import now_iso

    with errors_as_exit():
        target = check_target(kind, address, _reader(app), app.settings)
        app.store.set_push_target(target, now_iso())
    out.print(f"{kind} {target.address} added")


@push.command("remove")
@click.argument("kind", type=click.Choice(["webhook", "ntfy", "email"]))
@click.argument("address")
@pass_app
def push_remove(app: App, kind: str, address: str) -> None:
    """Remove a target."""
    from lightnews.normalize.times import now_iso
    from lightnews.store.network import PushTarget

    with errors_as_exit():
        app.store.set_push_target(
            PushTarget(kind, address.strip(), _reader(app)), now_iso(), present=False
        )
    out.print(f"{kind} {address.strip()} removed")


@push.command("list")
@click.option("--json", "as_json", is_flag=True, help="Print JSON.")
@pass_app
def push_list(app: App, as_json: bool) -> None:
    """The push targets."""
    with errors_as_exit():
        targets = app.store.push_targets(_reader(app))
    if as_json:
        emit_json([{"kind": t.kind, "address": t.address} for t in targets])
        return
    for target in targets:
        out.print(f"{target.kind:<8} {escape(target.address)}")


@push.command("send")
@click.option("--json", "as_json", is_flag=True, help="Print what was sent as JSON.")
@pass_app
def push_send(app: App, as_json: bool) -> None:
    """Find what happened to watched papers and deliver it (run it from cron, or a worker).

    Each event is delivered once per target, however often this runs: it is
    marked sent only after the target took it, and a failed delivery is
    tried again next time. Each failure is printed with its target and why;
    the exit status is 3 when some deliveries failed, 4 when none went.
    """
    from lightnews.deliver.watch import notify

    with errors_as_exit():
        report = notify(app.store, app.settings)
    if as_json:
        emit_json(report.to_json())
    else:
        out.print(
            f"{report.events} new events, {report.sent} messages sent, {report.failed} failed"
        )
        for error, times in Counter(report.errors).items():  # one line per target and why
            again = f" ({times} messages)" if times > 1 else ""
            err.print(f"[red]failed:[/red] {escape(error)}{again}", soft_wrap=True)
    if report.failed:
        sys.exit(EXIT_PARTIAL if report.sent else EXIT_FAILED)
