"""The daily digest: the top stories since a moment, with why each is there.

Its "Watched papers" section tells what happened to the papers the reader
watches (new mentions by followed scholars, a new version, code released, a
venue decision: :mod:`lightnews.deliver.watch`) since their last digest, each event
once: an event counts as told only when the digest was delivered, so a
digest that failed leaves its events for the next. Under the events, each
watched paper's new posts on the network (:class:`WatchedTalk`, shaped as
the story page shows its conversation: followed scholars first, by name,
threads folded, replies and quotes under what they answer, bots folded away)
are told the same way, each post once.

Every link is absolute, since an e-mail has no address of its own: a story
links to its page on this instance when the ``public_url`` setting says where
that is, else to arXiv (or the item's own page), and ``lightnews digest``
says so.

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

from lightnews.errors import FetchError, NotFound, UsageError
from lightnews.normalize.tex import tex_to_text
from lightnews.rank import Story, rank_stories
from lightnews.rank.conversation import Conversation, ConversationUnit, SaidPost, conversation_of
from lightnews.settings import Schedule, Settings, parse_schedule
from lightnews.sources import network
from lightnews.store import ReaderId, Store
from lightnews.store.network import WatchEvent
from lightnews.store.readers import LOCAL_READER, reader_key

__all__ = [
    "CLAIM_TIMEOUT",
    "ComposedDigest",
    "DigestOutcome",
    "Recipient",
    "Schedule",
    "WatchedTalk",
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
    "story_link",
    "unlinked_note",
    "watched_talk",
]

#: A claim on a digest older than this is taken for a worker that died while sending.
CLAIM_TIMEOUT = timedelta(minutes=10)
#: Threads and lone posts a watched paper shows in one digest (the rest: on its story page).
TALK_UNITS = 10


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
    #: New network posts on watched papers it told (by people; bots' folded away).
    posts: int = 0
    #: Said when the public_url setting is unset (stories link to arXiv, see the module).
    note: str = ""

    def __str__(self) -> str:
        if self.status == "delivered":
            told = f", {self.events} watched-paper events" if self.events else ""
            told += f", {self.posts} new posts on watched papers" if self.posts else ""
            note = f" ({self.note})" if self.note else ""
            return (
                f"digest for {self.period} sent to {self.recipient}: "
                f"{self.stories} stories{told}{note}"
            )
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
        earlier = [
            d.period
            for d in store.digest_deliveries(recipient.key)
            if d.sent_at and d.period < period
        ]
        since = (
            datetime.fromisoformat(earlier[0].replace("Z", "+00:00"))
            if earlier
            else due - recipient.schedule.every
        )
        made = compose_digest(store, recipient.reader, settings, since, limit=15, now=now)
        news = bool(made.stories or made.events or made.posts)
        if news:
            send_digest(
                settings,
                recipient.address,
                made.subject,
                made.markdown,
                made.html,
                message_id=_message_id(settings, recipient.key, period),
            )
    except BaseException:
        store.release_digest(recipient.key, period)
        raise
    # Accepted by the SMTP server: recorded, its stories count as read, its events and
    # posts as told.
    with store.transaction():
        store.digest_delivered(recipient.key, period, _stamp(now), len(made.stories))
        mark_digested(
            store, recipient.reader, made.stories, made.events, _stamp(now), talk=made.talk
        )
    return DigestOutcome(
        recipient.key,
        period,
        "delivered" if news else "nothing new",
        len(made.stories),
        len(made.events),
        made.posts,
        unlinked_note(settings) if news else "",
    )


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
    ranked = rank_stories(
        store,
        reader,
        limit=None,
        half_life_hours=settings.half_life_hours,
        bar=settings.attribution_bar,
        now=now,
        settings=settings,
    )
    # Read (or already digested) stories stay out unless something new brought them back.
    return [s for s in ranked if (s.time or "") >= start and "read" not in s.why][:limit]


def digest_events(store: Store, reader: ReaderId, *, refresh: bool = True) -> list[WatchEvent]:
    """What happened to the papers ``reader`` watches that no digest of theirs told yet.

    ``refresh`` first records what the library knows now (as the watch job
    does: idempotent, and it queues the push messages of anything new).
    """
    from lightnews.deliver.watch import find_events, record

    key = reader_key(reader)
    if refresh and (watched := sorted(store.watched(key))):
        record(store, find_events(store, watched))
    return store.undigested_events(key)


@dataclass(frozen=True, slots=True)
class WatchedTalk:
    """A watched paper's new posts on the network since the reader's last digest.

    ``talk`` is shaped as the story page shows a conversation (followed
    scholars first, threads folded, bots folded away), cut to ``TALK_UNITS``;
    ``uris`` are all its new posts, bots' too, told once the digest is delivered.
    """

    arxiv_id: str
    title: str
    #: Absolute: the story's page here (``public_url``), else the paper on arXiv.
    link: str
    talk: Conversation
    uris: tuple[str, ...]


def story_link(settings: Settings, arxiv_id: str) -> str | None:
    """A paper's story page on this instance, absolute; None when ``public_url`` is unset."""
    base = str(settings.public_url).rstrip("/")
    return f"{base}/paper/{arxiv_id}" if base else None


def unlinked_note(settings: Settings) -> str:
    """What a digest says of its links when ``public_url`` is unset ('' when it is set)."""
    if settings.public_url:
        return ""
    return (
        "public_url is not set: the digest links stories to arXiv (or the item's own "
        "page), not to their pages here; set it to this instance's address "
        "(`lightnews settings set public_url https://news.example.org`)"
    )


def watched_talk(
    store: Store, reader: ReaderId, settings: Settings, now: datetime
) -> list[WatchedTalk]:
    """The new network posts about each paper ``reader`` watches that no digest of theirs
    told yet, shaped as each story shows its conversation (their scholars first)."""
    fresh = store.undigested_posts(reader_key(reader))
    if not fresh:
        return []
    followed = store.followed_accounts(reader)
    service = network().service
    found = []
    for arxiv_id, uris in sorted(fresh.items()):
        wanted = set(uris)
        posts = [p for p in store.paper_conversation(service, arxiv_id) if p.uri in wanted]
        try:
            title = tex_to_text(store.get_paper(arxiv_id).title or "")
        except NotFound:
            title = ""
        talk = conversation_of(arxiv_id, posts, followed=followed, now=now, page_size=TALK_UNITS)
        link = story_link(settings, arxiv_id) or f"https://arxiv.org/abs/{arxiv_id}"
        found.append(WatchedTalk(arxiv_id, title or f"arXiv {arxiv_id}", link, talk, tuple(uris)))
    return found


def _told_posts(talk: Sequence[WatchedTalk]) -> int:
    """New posts by people a digest shows (bots' are folded away, not counted)."""
    return sum(t.talk.posts for t in talk)


def digest_subject(
    stories: Sequence[Story], events: Sequence[WatchEvent], talk: Sequence[WatchedTalk] = ()
) -> str:
    told = f", {len(events)} on papers you watch" if events else ""
    if posts := _told_posts(talk):
        where = " about them" if events else " on papers you watch"
        told += f", {posts} new {'post' if posts == 1 else 'posts'}{where}"
    return f"Lightnews digest: {len(stories)} stories{told}"


def mark_digested(
    store: Store,
    reader: ReaderId,
    stories: Sequence[Story],
    events: Sequence[WatchEvent],
    stamp: str,
    *,
    talk: Sequence[WatchedTalk] = (),
) -> None:
    """A delivered digest: its stories count as read, its watch events and the watched
    papers' posts as told (once)."""
    key = reader_key(reader)
    with store.transaction():
        for story in stories:
            store.mark_story(reader, story.key, stamp, read=True)
        store.mark_events_digested(key, [e.key for e in events], stamp)
        store.mark_posts_digested(key, stamp, [uri for t in talk for uri in t.uris])


_EVENT_KINDS = {"mention": "mentioned", "version": "new version", "code": "code", "venue": "venue"}


def _event_markdown(event: WatchEvent) -> str:
    said = event.summary if not event.url else f"[{event.summary}]({event.url})"
    return f"- {_EVENT_KINDS.get(event.kind, event.kind)}: {said}"


def _event_html(event: WatchEvent) -> str:
    said = escape(event.summary)
    if event.url and event.url.startswith(("https://", "http://")):
        said = f'<a href="{escape(event.url)}">{said}</a>'
    return f"<li>{escape(_EVENT_KINDS.get(event.kind, event.kind))}: {said}</li>"


def _link(story: Story, public_url: str) -> str | None:
    """Where a story's title leads, absolute: its page here, else arXiv or the item's page."""
    base = public_url.rstrip("/")
    if base and story.arxiv_id:
        return f"{base}/paper/{story.arxiv_id}"
    url = story.url or ""
    return url if url.startswith(("https://", "http://")) else None


def _time(post: SaidPost) -> str:
    """``2026-12-06 16:50 UTC``: when a post was written, as its record says."""
    text = post.created_at or ""
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return text[:16]
    moment = moment.astimezone(UTC) if moment.tzinfo else moment
    return f"{moment:%Y-%m-%d %H:%M} UTC"


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _talk_summary(watched: WatchedTalk) -> str:
    """``3 new posts by 2 people; 1 post by a bot or mirror folded away``."""
    talk = watched.talk
    words = (
        f"{_plural(talk.posts, 'new post', 'new posts')} by "
        f"{_plural(talk.people, 'person', 'people')}"
    )
    if talk.bot_posts:
        bots = _plural(talk.bots, "bot or mirror", "bots and mirrors")
        words += f"; {_plural(talk.bot_posts, 'post', 'posts')} by {bots} folded away"
    return words


def _talk_rest(watched: WatchedTalk) -> int:
    """Threads and posts left out of the digest (they are on the story's page)."""
    return watched.talk.total_units - len(watched.talk.units)


def _unit_posts(unit: ConversationUnit) -> list[tuple[str, SaidPost]]:
    """A unit's posts as a digest lists them, each with how it stands to the first."""
    listed = [("", unit.first)]
    listed += [
        (f"thread, {n} of {len(unit.posts)}", p) for n, p in enumerate(unit.posts[1:], start=2)
    ]
    listed += [("reply", p) for p in unit.replies]
    listed += [("quote", p) for p in unit.quotes]
    return listed


def _byline(post: SaidPost) -> str:
    return f"{post.author} (you follow)" if post.followed else post.author


def _reposters(unit: ConversationUnit) -> str:
    return ", ".join(r.label + (" (you follow)" if r.followed else "") for r in unit.reposters)


def _post_markdown(how: str, post: SaidPost, indent: str) -> list[str]:
    said = f"**{_byline(post)}**" + (f" ({how})" if how else "")
    lines = [f"{indent}- {said} · {_time(post)}" + (f" · [post]({post.url})" if post.url else "")]
    lines += [f"{indent}  > {line}".rstrip() for line in (post.text or "").splitlines() or [""]]
    return lines


def _talk_markdown(watched: WatchedTalk) -> list[str]:
    lines = ["", f"### [{watched.title}]({watched.link})", "", _talk_summary(watched), ""]
    for unit in watched.talk.units:
        for n, (how, post) in enumerate(_unit_posts(unit)):
            lines += _post_markdown(how, post, "  " if n else "")
        if unit.reposters:
            lines.append(f"  - reposted by {_reposters(unit)}")
    if rest := _talk_rest(watched):
        lines.append(
            f"- and {_plural(rest, 'more thread or post', 'more threads and posts')}"
            f" on [its page]({watched.link})"
        )
    return lines


def _safe_href(url: str | None) -> str | None:
    return url if url and url.startswith(("https://", "http://")) else None


def _post_html(how: str, post: SaidPost) -> str:
    said = f"<strong>{escape(_byline(post))}</strong>" + (f" ({escape(how)})" if how else "")
    link = _safe_href(post.url)
    read = f' · <a href="{escape(link)}">post</a>' if link else ""
    text = "<br>".join(escape(line) for line in (post.text or "").splitlines())
    return f"<p>{said} · {escape(_time(post))}{read}</p><blockquote>{text}</blockquote>"


def _talk_html(watched: WatchedTalk) -> str:
    units = []
    for unit in watched.talk.units:
        (how, first), *rest = _unit_posts(unit)
        inner = "".join(f"<li>{_post_html(h, p)}</li>" for h, p in rest)
        if unit.reposters:
            inner += f"<li>reposted by {escape(_reposters(unit))}</li>"
        units.append(f"<li>{_post_html(how, first)}{f'<ul>{inner}</ul>' if inner else ''}</li>")
    if more := _talk_rest(watched):
        units.append(
            f"<li>and {_plural(more, 'more thread or post', 'more threads and posts')}"
            f' on <a href="{escape(watched.link)}">its page</a></li>'
        )
    return (
        f'<h3><a href="{escape(watched.link)}">{escape(watched.title)}</a></h3>'
        f"<p>{escape(_talk_summary(watched))}</p><ul>{''.join(units)}</ul>"
    )


def render_markdown(
    stories: list[Story],
    since: datetime,
    events: Sequence[WatchEvent] = (),
    talk: Sequence[WatchedTalk] = (),
    *,
    public_url: str = "",
) -> str:
    lines = [f"# Lightnews digest since {since:%Y-%m-%d %H:%M} UTC", ""]
    if not stories:
        lines.append("Nothing new from the scholars and sources you follow.")
    for n, story in enumerate(stories, start=1):
        link = _link(story, public_url)
        lines.append(f"{n}. **[{story.title}]({link})**" if link else f"{n}. **{story.title}**")
        lines.append(f"   {' · '.join(dict.fromkeys(story.why))}")
    shown = [t for t in talk if t.talk.posts]
    if events or shown:
        lines += ["", "## Watched papers"]
        if events:
            lines += ["", *(_event_markdown(e) for e in events)]
        for watched in shown:
            lines += _talk_markdown(watched)
    return "\n".join(lines) + "\n"


def render_html(
    stories: list[Story],
    since: datetime,
    events: Sequence[WatchEvent] = (),
    talk: Sequence[WatchedTalk] = (),
    *,
    public_url: str = "",
) -> str:
    def title(story: Story) -> str:
        strong = f"<strong>{escape(story.title)}</strong>"
        link = _link(story, public_url)
        return f'<a href="{escape(link)}">{strong}</a>' if link else strong

    items = (
        "".join(
            f"<li><p>{title(s)}</p><p>{escape(' · '.join(dict.fromkeys(s.why)))}</p></li>"
            for s in stories
        )
        or "<li>Nothing new from the scholars and sources you follow.</li>"
    )
    watched = ""
    shown = [t for t in talk if t.talk.posts]
    if events or shown:
        listed = f"<ul>{''.join(_event_html(e) for e in events)}</ul>" if events else ""
        watched = f"<h2>Watched papers</h2>{listed}{''.join(_talk_html(t) for t in shown)}"
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
    """A digest made and not yet delivered: its stories, watch events and the watched
    papers' new posts, in both forms."""

    stories: list[Story]
    events: list[WatchEvent]
    markdown: str
    html: str
    subject: str
    talk: list[WatchedTalk]

    @property
    def posts(self) -> int:
        """New posts by people on watched papers it shows."""
        return _told_posts(self.talk)


def compose_digest(
    store: Store,
    reader: ReaderId,
    settings: Settings,
    since: datetime,
    *,
    limit: int,
    now: datetime,
    refresh: bool = True,
) -> ComposedDigest:
    """``reader``'s digest of the stories since ``since``, the events of the papers they
    watch (``refresh``: recorded first; see :func:`digest_events`) and those papers' new
    posts, ready to print or send. Nothing is marked: :func:`mark_digested` once it is
    delivered."""
    stories = digest_stories(store, reader, settings, since, limit=limit, now=now)
    events = digest_events(store, reader, refresh=refresh)
    talk = watched_talk(store, reader, settings, now)
    base = str(settings.public_url)
    return ComposedDigest(
        stories,
        events,
        render_markdown(stories, since, events, talk, public_url=base),
        render_html(stories, since, events, talk, public_url=base),
        digest_subject(stories, events, talk),
        talk,
    )


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
