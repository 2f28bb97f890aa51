"""The daily digest: the top stories since a moment, with why each is there.

Its "Watched papers" section tells what happened to the papers the reader
watches (new mentions by followed scholars, a new version, code released, a
venue decision: :mod:`lightnews.deliver.watch`) since their last digest, each event
once: an event counts as told only when the digest was delivered, so a
digest that failed leaves its events for the next.

As Markdown for a terminal or a notes app, as HTML for a browser, or e-mailed
through the SMTP settings (both parts in one message, so any mail client shows
it well). Sending raises when the server did not accept the message, so the
caller marks the stories read only once the digest was delivered.

Scheduled digests (the ``digest_schedule`` setting: ``daily 07:00`` or
``weekly mon 07:00``, UTC) are sent by workers: every ``worker_tick`` one of
them calls :func:`deliver_due_digest` for each recipient. A digest goes out
once per recipient and period however many workers look and however often a
job is retried: the period is claimed in the database before sending and
marked delivered only once the SMTP server accepted the message (see
``lightnews.store.digests``); a refused message releases the claim, so the
next look tries again. Its Message-ID is derived from recipient and period,
so the one case left (a worker dying between the server's acceptance and the
mark, its claim taken over ``CLAIM_TIMEOUT`` later) is one that mail servers
can recognise as the same message.
"""

from __future__ import annotations

import hashlib
import os
import smtplib
import socket
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from email.message import EmailMessage
from html import escape

from lightnews.errors import FetchError, UsageError
from lightnews.rank import Story, rank_stories
from lightnews.settings import Schedule, Settings, parse_schedule
from lightnews.store import ReaderId, Store
from lightnews.store.network import WatchEvent
from lightnews.store.readers import LOCAL_READER

__all__ = [
    "CLAIM_TIMEOUT",
    "ComposedDigest",
    "DigestOutcome",
    "Recipient",
    "Schedule",
    "compose_digest",
    "deliver_due_digest",
    "digest_events",
    "digest_recipient",
    "digest_stories",
    "digest_subject",
    "library_recipient",
    "mark_digested",
    "parse_schedule",
    "render_html",
    "render_markdown",
    "scheduled_recipients",
    "send_digest",
]

#: A claim on a digest older than this is taken for a worker that died while sending.
CLAIM_TIMEOUT = timedelta(minutes=10)


@dataclass(frozen=True, slots=True)
class Recipient:
    """Who gets a scheduled digest, where, and when.

    ``key`` names the recipient in the record of deliveries: ``library`` for
    the library's own (the ``digest_to`` setting); a user's key when each user
    has their own.
    """

    key: str
    address: str
    schedule: Schedule
    #: Whose feed the digest is made of, and whose stories it marks read.
    reader: ReaderId = LOCAL_READER


def library_recipient(settings: Settings) -> Recipient | None:
    """The library's scheduled digest (``digest_to`` on ``digest_schedule``), if it has one."""
    schedule = parse_schedule(str(settings.digest_schedule))
    if schedule is None or not settings.digest_to:
        return None
    return Recipient("library", str(settings.digest_to), schedule)


def scheduled_recipients(store: Store, settings: Settings) -> list[Recipient]:
    """Everyone whose digest is scheduled: each account with its own ``digest_to``, or the
    library's reader (its own address, else the library's) when there are no accounts."""
    schedule = parse_schedule(str(settings.digest_schedule))
    if schedule is None:
        return []
    users = store.list_users()
    if not users:
        own = store.reader_settings(LOCAL_READER).get("digest_to") or settings.digest_to
        return [Recipient("library", str(own), schedule)] if own else []
    found = []
    for user in users:
        address = store.reader_settings(ReaderId(user.id)).get("digest_to")
        if address:
            found.append(Recipient(f"user:{user.id}", address, schedule, ReaderId(user.id)))
    return found


@dataclass(frozen=True, slots=True)
class DigestOutcome:
    """What one look at a recipient's digest did."""

    recipient: str
    period: str
    status: str  # "delivered", "nothing new", "already delivered", "being sent"
    stories: int = 0
    events: int = 0

    def __str__(self) -> str:
        if self.status == "delivered":
            told = f", {self.events} watched-paper events" if self.events else ""
            return (f"digest for {self.period} sent to {self.recipient}: "
                    f"{self.stories} stories{told}")  # fmt: skip
        return f"digest for {self.period} to {self.recipient}: {self.status}"


def _stamp(moment: datetime) -> str:
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def deliver_due_digest(
    store: Store, settings: Settings, recipient: Recipient, now: datetime
) -> DigestOutcome:
    """Send ``recipient``'s digest for the latest period due by ``now``, unless it went out.

    Safe to call from any number of workers at once and again after any
    failure (see the module's docstring). The digest holds the stories since
    the previous delivered period (one period back for the first); a period
    with nothing new is recorded as done without a message. Raises
    :class:`FetchError` when the SMTP server did not accept the message (the
    period stays due), :class:`UsageError` without SMTP settings.
    """
    if not settings.smtp_host:
        raise UsageError("set smtp_host (and smtp_from) to send scheduled digests")
    due = recipient.schedule.last_due(now)
    period = _stamp(due)
    worker = f"{socket.gethostname()}-{os.getpid()}"
    if not store.claim_digest(
        recipient.key, period, _stamp(now), _stamp(now - CLAIM_TIMEOUT), worker
    ):
        done = any(d.period == period and d.sent_at for d in store.digest_deliveries(recipient.key))
        return DigestOutcome(recipient.key, period, "already delivered" if done else "being sent")
    try:
        earlier = [d.period for d in store.digest_deliveries(recipient.key)
                   if d.sent_at and d.period < period]  # fmt: skip
        since = (datetime.fromisoformat(earlier[0].replace("Z", "+00:00")) if earlier
                 else due - recipient.schedule.every)  # fmt: skip
        stories = digest_stories(store, recipient.reader, settings, since, now=now)
        events = digest_events(store, recipient.reader)
        if stories or events:
            send_digest(settings, recipient.address, digest_subject(stories, events),
                        render_markdown(stories, since, events),
                        render_html(stories, since, events),
                        message_id=_message_id(settings, recipient.key, period))  # fmt: skip
    except BaseException:
        store.release_digest(recipient.key, period)
        raise
    # Accepted by the SMTP server: recorded, its stories count as read, its events as told.
    with store.transaction():
        store.digest_delivered(recipient.key, period, _stamp(now), len(stories))
        mark_digested(store, recipient.reader, stories, events, _stamp(now))
    return DigestOutcome(
        recipient.key, period, "delivered" if stories or events else "nothing new",
        len(stories), len(events),
    )  # fmt: skip


def _message_id(settings: Settings, recipient: str, period: str) -> str:
    """One Message-ID per recipient and period: a digest sent twice is recognisably one."""
    digest = hashlib.sha256(f"{recipient}\n{period}".encode()).hexdigest()[:32]
    sender = str(settings.smtp_from or "")
    domain = sender.rpartition("@")[2] or str(settings.smtp_host) or "lightnews"
    return f"<digest-{digest}@{domain.strip('<> ')}>"


def digest_stories(
    store: Store,
    reader: ReaderId,
    settings: Settings,
    since: datetime,
    *,
    limit: int = 15,
    now: datetime | None = None,
) -> list[Story]:
    """``reader``'s best-ranked stories with activity since ``since`` (their feed's order, cut)."""
    start = since.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    ranked = rank_stories(store, reader, limit=None, half_life_hours=settings.half_life_hours,
                          bar=settings.attribution_bar, now=now, settings=settings)  # fmt: skip
    # Read (or already digested) stories stay out unless something new brought them back.
    return [s for s in ranked if (s.time or "") >= start and "read" not in s.why][:limit]


def digest_events(store: Store, reader: ReaderId, *, refresh: bool = True) -> list[WatchEvent]:
    """What happened to the papers ``reader`` watches that no digest of theirs told yet.

    ``refresh`` first records what the library knows now (as the watch job
    does: idempotent, and it queues the push messages of anything new).
    """
    from lightnews.deliver.watch import find_events, record
    from lightnews.store.readers import reader_key

    key = reader_key(reader)
    if refresh and (watched := sorted(store.watched(key))):
        record(store, find_events(store, watched))
    return store.undigested_events(key)


def digest_subject(stories: Sequence[Story], events: Sequence[WatchEvent]) -> str:
    told = f", {len(events)} on papers you watch" if events else ""
    return f"Lightnews digest: {len(stories)} stories{told}"


def mark_digested(
    store: Store, reader: ReaderId, stories: Sequence[Story], events: Sequence[WatchEvent],
    stamp: str,
) -> None:  # fmt: skip
    """A delivered digest: its stories count as read, its watch events as told (once)."""
    from lightnews.store.readers import reader_key

    with store.transaction():
        for story in stories:
            store.mark_story(reader, story.key, stamp, read=True)
        store.mark_events_digested(reader_key(reader), [e.key for e in events], stamp)


_EVENT_KINDS = {"mention": "mentioned", "version": "new version", "code": "code",
                "venue": "venue"}  # fmt: skip


def _event_markdown(event: WatchEvent) -> str:
    said = event.summary if not event.url else f"[{event.summary}]({event.url})"
    return f"- {_EVENT_KINDS.get(event.kind, event.kind)}: {said}"


def _event_html(event: WatchEvent) -> str:
    said = escape(event.summary)
    if event.url and event.url.startswith(("https://", "http://")):
        said = f'<a href="{escape(event.url)}">{said}</a>'
    return f"<li>{escape(_EVENT_KINDS.get(event.kind, event.kind))}: {said}</li>"


def _link(story: Story) -> str:
    return story.url or ""


def render_markdown(
    stories: list[Story], since: datetime, events: Sequence[WatchEvent] = ()
) -> str:
    lines = [f"# Lightnews digest since {since:%Y-%m-%d %H:%M} UTC", ""]
    if not stories:
        lines.append("Nothing new from the scholars and sources you follow.")
    for n, story in enumerate(stories, start=1):
        lines.append(f"{n}. **[{story.title}]({_link(story)})**")
        lines.append(f"   {' · '.join(dict.fromkeys(story.why))}")
    if events:
        lines += ["", "## Watched papers", ""]
        lines += [_event_markdown(e) for e in events]
    return "\n".join(lines) + "\n"


def render_html(stories: list[Story], since: datetime, events: Sequence[WatchEvent] = ()) -> str:
    items = (
        "".join(
            f'<li><p><a href="{escape(_link(s))}"><strong>{escape(s.title)}</strong></a></p>'
            f"<p>{escape(' · '.join(dict.fromkeys(s.why)))}</p></li>"
            for s in stories
        )
        or "<li>Nothing new from the scholars and sources you follow.</li>"
    )
    watched = ""
    if events:
        watched = f"<h2>Watched papers</h2><ul>{''.join(_event_html(e) for e in events)}</ul>"
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        f"<title>Lightnews digest</title></head><body><main>"
        f"<h1>Lightnews digest since {since:%Y-%m-%d %H:%M} UTC</h1><ol>{items}</ol>"
        f"{watched}</main></body></html>"
    )


def send_digest(
    settings: Settings,
    to: str,
    subject: str,
    markdown: str,
    html: str,
    *,
    message_id: str | None = None,
) -> None:
    """E-mail the digest through the SMTP settings (plain text and HTML parts)."""
    if not settings.smtp_host:
        raise UsageError("set smtp_host (and smtp_from) to send the digest by e-mail")
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = settings.smtp_from or f"lightnews@{settings.smtp_host}"
    message["To"] = to
    if message_id:
        message["Message-ID"] = message_id
    message.set_content(markdown)
    message.add_alternative(html, subtype="html")
    try:
        with smtplib.SMTP(settings.smtp_host, int(settings.smtp_port), timeout=30) as smtp:
            if settings.smtp_starttls:
                smtp.starttls()
            if settings.smtp_user:
                smtp.login(settings.smtp_user, settings.smtp_password)
            smtp.send_message(message)
    except (OSError, smtplib.SMTPException) as error:
        raise FetchError(
            f"could not send the digest through {settings.smtp_host}: {error}"
        ) from None


@dataclass(frozen=True, slots=True)
class ComposedDigest:
    """A digest made and not yet delivered: its stories and watch events, in both forms."""

    stories: list[Story]
    events: list[WatchEvent]
    markdown: str
    html: str
    subject: str


def compose_digest(
    store: Store, reader: ReaderId, settings: Settings, since: datetime, *, limit: int,
    now: datetime, refresh: bool = True,
) -> ComposedDigest:  # fmt: skip
    """``reader``'s digest of the stories since ``since`` and the events of the papers they
    watch (``refresh``: recorded first; see :func:`digest_events`), ready to print or send.
    Nothing is marked: :func:`mark_digested` once it is delivered."""
    stories = digest_stories(store, reader, settings, since, limit=limit, now=now)
    events = digest_events(store, reader, refresh=refresh)
    return ComposedDigest(
        stories, events, render_markdown(stories, since, events),
        render_html(stories, since, events), digest_subject(stories, events),
    )  # fmt: skip


def digest_recipient(settings: Settings, email: str | None, *, dry_run: bool) -> str | None:
    """Where an asked-for digest goes: ``email`` (``""``: the digest_to setting), or None to
    print it; a digest to e-mail needs an address, and SMTP settings unless it is a dry run."""
    if email is None:
        return None
    to = email or settings.digest_to
    if not to:
        raise UsageError("give --email ADDRESS or set digest_to")
    if not settings.smtp_host and not dry_run:
        raise UsageError("set smtp_host (and smtp_from) to send the digest by e-mail")
    return str(to)
