"""Watch a paper, and be told: new mentions by scholars, new versions, code, pushed once.

A reader watches papers (``lightnews watch ID``, the Watch button of a story
page). Things that happen to a watched paper are *events* (:class:`WatchEvent`):

* a mention by a followed scholar, or by an account a followed scholar
  reposted: from the scholars' own feeds (items) and from the network
  (``lightnews listen``); an automated account (a bot, a mirror) never makes one;
* a new version of the paper, and its code released: from the paper's record.
  Other parts of Lightnews that learn such facts (versions, venues, code
  links) hand them over as :class:`WatchEvent` objects to :func:`record`,
  with keys made by :func:`version_event` / :func:`code_event` /
  :func:`venue_event`; the key is the event's idempotency key.

Each event is kept once (by its key) and queued for every target of every
reader watching the paper when it is first recorded (what was known when a
reader began to watch is recorded then, so only news is told): a webhook (JSON POST with
an ``Idempotency-Key`` header), an ntfy topic (a POST of the text), an
e-mail. :func:`notify` finds the new events and delivers what is queued; a
delivery is marked sent only after the target took it, so a run that fails
halfway is completed by the next, and running twice sends nothing twice.
"""

from __future__ import annotations

import smtplib
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.message import EmailMessage

import httpx

from lightnews.errors import Blocked, LightnewsError, NotFound, UsageError
from lightnews.normalize import validate
from lightnews.normalize.times import now_iso
from lightnews.settings import Settings
from lightnews.sources.bluesky import post_url
from lightnews.sources.jetstream import SERVICE
from lightnews.store import Store
from lightnews.store.network import Delivery, PushTarget, WatchEvent

__all__ = [
    "NotifyReport",
    "PushTarget",
    "WatchEvent",
    "check_target",
    "code_event",
    "deliver",
    "find_events",
    "is_watching",
    "mention_event",
    "notify",
    "record",
    "start_watching",
    "stop_watching",
    "venue_event",
    "version_event",
    "watching",
]

#: Deliveries tried at most this many times (a target gone for good stops being tried).
MAX_ATTEMPTS = 10
TIMEOUT = 15.0


def version_event(arxiv_id: str, version: str, happened: str) -> WatchEvent:
    """A new version of a paper (``version`` like ``v3``)."""
    return WatchEvent(
        f"version:{arxiv_id}:{version}",
        arxiv_id,
        "version",
        f"arXiv {arxiv_id} has a new version ({version})",
        f"https://arxiv.org/abs/{arxiv_id}{version}",
        happened,
    )


def code_event(arxiv_id: str, url: str, happened: str) -> WatchEvent:
    """A paper's code released (a repository linked to it)."""
    return WatchEvent(
        f"code:{arxiv_id}:{url}",
        arxiv_id,
        "code",
        f"code for arXiv {arxiv_id}: {url}",
        url,
        happened,
    )


def venue_event(arxiv_id: str, venue: str, decision: str, happened: str) -> WatchEvent:
    """A venue's decision on a paper ("ICLR 2026", "accepted")."""
    return WatchEvent(
        f"venue:{arxiv_id}:{venue}:{decision}",
        arxiv_id,
        "venue",
        f"arXiv {arxiv_id} at {venue}: {decision}",
        None,
        happened,
    )


def mention_event(
    arxiv_id: str,
    where: str,
    who: str,
    url: str | None,
    happened: str,
    *,
    reposted_by: str | None = None,
) -> WatchEvent:
    """A mention of a paper by ``who`` (``where`` identifies the post or item)."""
    said = f"{who} posted about arXiv {arxiv_id}"
    if reposted_by:
        said = f"{reposted_by} reposted a post about arXiv {arxiv_id}"
    return WatchEvent(f"mention:{arxiv_id}:{where}", arxiv_id, "mention", said, url, happened)


def start_watching(store: Store, reader: str, arxiv_id: str) -> bool:
    """Watch a paper; what is already known of it is recorded first, so only news is told
    (by push, and in the reader's digest).

    Returns False when the reader already watched it.
    """
    record(store, find_events(store, [arxiv_id]))
    now = now_iso()
    started = store.set_watch(reader, arxiv_id, now)
    if started:  # known before the watch began: not news for this reader's digest
        known = [e.key for e in store.watch_events(arxiv_id, limit=100_000)]
        store.mark_events_digested(reader, known, now)
        store.mark_posts_digested(reader, now, paper=arxiv_id)  # nor what was said of it
    return started


def stop_watching(store: Store, reader: str, arxiv_id: str) -> bool:
    return store.set_watch(reader, arxiv_id, now_iso(), watched=False)


def watching(store: Store, reader: str) -> list[str]:
    """The papers a reader watches."""
    return sorted(store.watched(reader))


def is_watching(store: Store, reader: str, arxiv_id: str) -> bool:
    return reader in store.watched(reader).get(arxiv_id, set())


def record(store: Store, events: Sequence[WatchEvent]) -> list[WatchEvent]:
    """Hand events over (from any part of Lightnews); returns those not known before."""
    return store.record_events(events, now_iso())


def _iso_us(time_us: int) -> str:
    moment = datetime.fromtimestamp(time_us / 1_000_000, tz=UTC)
    return moment.isoformat(timespec="seconds").replace("+00:00", "Z")


def find_events(store: Store, arxiv_ids: Sequence[str]) -> list[WatchEvent]:
    """What the library knows happened to these papers: mentions, versions, code."""
    followed = store.any_followed_accounts()  # whoever watches: every reader's scholars
    names = store.scholar_names(set(followed.values()))
    events: list[WatchEvent] = []
    for arxiv_id in arxiv_ids:
        try:
            paper = store.get_paper(arxiv_id)
        except NotFound:
            paper = None
        if paper is not None:
            for version in paper.versions:
                events.append(version_event(arxiv_id, version.version, version.date or ""))
            for url in paper.code:
                events.append(code_event(arxiv_id, url, now_iso()))
            for mention in paper.mentions:
                if mention.kind not in ("post", "repost", "article", "note") or not mention.scholar:
                    continue
                account = store.get_account(SERVICE, mention.account) if mention.account else None
                if account is not None and account.bot:
                    continue  # bots never trigger a message
                reposted = mention.kind == "repost"
                events.append(
                    mention_event(
                        arxiv_id,
                        f"item:{mention.item_id}",
                        mention.author or mention.scholar,
                        mention.url,
                        mention.published or "",
                        reposted_by=mention.scholar if reposted else None,
                    )
                )
        for spoken in store.network_mentions_of(SERVICE, arxiv_id):
            if spoken.bot or spoken.did not in followed:
                continue
            name = names.get(followed[spoken.did], spoken.handle or spoken.did)
            events.append(
                mention_event(
                    arxiv_id,
                    spoken.uri,
                    name,
                    post_url(spoken.uri, spoken.handle),
                    _iso_us(spoken.time_us),
                    reposted_by=name if spoken.kind == "repost" else None,
                )
            )
    return events


def check_target(kind: str, address: str, reader: str, settings: Settings) -> PushTarget:
    """A push target as typed, checked (a UsageError says what is wrong)."""
    value = address.strip()
    if kind in ("webhook", "ntfy"):
        try:
            host = httpx.URL(value).host
        except httpx.InvalidURL as error:
            raise UsageError(f"{value[:60]!r} is not a URL: {error}") from None
        if not value.startswith(("https://", "http://")) or not host:
            raise UsageError(f"a {kind} target is an http(s) URL, got {value[:60]!r}")
        if not settings.allow_private_addresses:
            from lightnews.sources.http import refuse_non_public

            try:
                refuse_non_public(value)
            except Blocked as error:
                raise UsageError(
                    f"{error}; a {kind} target must be on the public Internet "
                    "(or set allow_private_addresses)"
                ) from None
        return PushTarget(kind, value, reader)
    if kind == "email":
        if not_an_address(value):
            raise UsageError(f"{value[:60]!r} is not an e-mail address (one line, no blanks)")
        if not settings.smtp_host:
            raise UsageError("set smtp_host (and smtp_from) to be told by e-mail")
        return PushTarget(kind, value, reader)
    raise UsageError(f"a push target is a webhook, ntfy or email, not {kind!r}")


def not_an_address(value: str) -> bool:
    """Whether ``value`` cannot be an e-mail address: no "@", too long, or a blank or a line
    break in it (which would add headers to the message: "x@y\nBcc: ...")."""
    return (
        "@" not in value
        or len(value) > 254
        or any(c.isspace() or ord(c) < 32 or ord(c) == 127 for c in value)
    )


def _client(settings: Settings) -> httpx.Client:
    from lightnews.sources.http import safe_transport, user_agent

    return httpx.Client(
        transport=safe_transport(bool(settings.allow_private_addresses)),
        timeout=TIMEOUT,
        headers={"User-Agent": user_agent(str(settings.contact))},
        follow_redirects=False,
    )


def deliver(delivery: Delivery, settings: Settings, client: httpx.Client) -> None:
    """Send one event to one target; raises LightnewsError when the target did not take it."""
    event, target = delivery.event, delivery.target
    try:
        if target.kind == "webhook":
            response = client.post(
                target.address,
                json={"event": event.to_json()},
                headers={"Idempotency-Key": event.key},
            )
        elif target.kind == "ntfy":
            headers = {"Title": f"Lightnews: arXiv {event.arxiv_id}", "Tags": event.kind}
            if event.url and validate_url(event.url):
                headers["Click"] = event.url
            response = client.post(target.address, content=event.summary.encode(), headers=headers)
        else:
            _mail(settings, target.address, event)
            return
    except (httpx.HTTPError, Blocked) as error:  # Blocked: the address is not public
        raise LightnewsError(f"{target.kind} {target.address}: {error}") from None
    if response.status_code >= 300:
        raise LightnewsError(f"{target.kind} {target.address}: HTTP {response.status_code}")


def validate_url(url: str) -> bool:
    try:
        validate.feed_address(url)
    except UsageError:
        return False
    return True


def _mail(settings: Settings, to: str, event: WatchEvent) -> None:
    if not settings.smtp_host:
        raise LightnewsError(f"e-mail to {to[:60]!r}: smtp_host is not set")
    if not_an_address(to):  # stored before it was checked: this one fails, the rest go on
        raise LightnewsError(f"e-mail to {to[:60]!r}: not an e-mail address (one line, no blanks)")
    message = EmailMessage()
    message["Subject"] = f"Lightnews: {event.summary}"[:200]
    message["From"] = settings.smtp_from or f"lightnews@{settings.smtp_host}"
    message["To"] = to
    message["Message-ID"] = f"<{abs(hash(event.key))}.{len(event.key)}@lightnews>"
    message.set_content(f"{event.summary}\n\n{event.url or ''}\n")
    try:
        with smtplib.SMTP(settings.smtp_host, int(settings.smtp_port), timeout=TIMEOUT) as smtp:
            if settings.smtp_starttls:
                smtp.starttls()
            if settings.smtp_user:
                smtp.login(settings.smtp_user, settings.smtp_password)
            smtp.send_message(message)
    except (OSError, smtplib.SMTPException) as error:
        raise LightnewsError(f"e-mail to {to}: {error}") from None


@dataclass(slots=True)
class NotifyReport:
    events: int = 0
    sent: int = 0
    failed: int = 0
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "events": self.events,
            "sent": self.sent,
            "failed": self.failed,
            "errors": self.errors[:20],
        }


def notify(
    store: Store,
    settings: Settings,
    *,
    send: Callable[[Delivery, Settings, httpx.Client], None] = deliver,
) -> NotifyReport:
    """Record what happened to watched papers, then deliver every queued message once."""
    report = NotifyReport()
    watched = sorted(store.watched())
    if watched:
        report.events = len(record(store, find_events(store, watched)))
    pending = store.pending_deliveries(MAX_ATTEMPTS)
    if not pending:
        return report
    with _client(settings) as client:
        for delivery in pending:
            if not store.claim_delivery(delivery):
                continue  # another run has it
            try:
                send(delivery, settings, client)
            except LightnewsError as error:
                report.failed += 1
                report.errors.append(str(error))
                store.finish_delivery(delivery, now_iso(), error=str(error))
                continue
            store.finish_delivery(delivery, now_iso())
            report.sent += 1
    return report
