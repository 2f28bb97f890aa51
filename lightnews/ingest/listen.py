"""Listen: the whole Bluesky network's posts about papers, from Jetstream, into the store.

``lightnews listen`` subscribes to Jetstream (the ``jetstream_url`` setting)
and keeps every post that names a paper (see
:mod:`lightnews.sources.jetstream` for what counts and how the filter stays
cheap). ``lightnews listen --from-file events.jsonl`` replays a recorded file,
one event a line, through the same code.

No gap, no duplicate. The posts heard and the cursor (the ``time_us`` of the
last event read) are written in one transaction, every ``FLUSH_EVENTS`` events
or ``FLUSH_SECONDS`` seconds; a listener killed between two writes resumes
from the saved cursor and hears the unsaved events again, and a post is stored
once per ``at://`` URI whatever it hears twice. A dropped connection is
reconnected with a backoff that doubles from one second up to
``listen_max_backoff``; a good connection resets it.

Posts by followed scholars are also matched by title (the linker's title
matching, which is precise only for people who write about their field);
DOIs are mapped to stored arXiv papers; a post linking a stored article or
notes page about papers is about those papers too (a second-order mention,
``via-article``, naming the article). Accounts heard are classified as
bots by what they post (:mod:`lightnews.link.bots`), so that the Discussed
page weighs them little.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace
from pathlib import Path

from lightnews.link import link_titles
from lightnews.link.bots import MIN_POSTS, bot_reason
from lightnews.model import Item, NetworkMention, NetworkPost
from lightnews.normalize.times import now_iso
from lightnews.settings import Settings
from lightnews.sources.bluesky import post_item
from lightnews.sources.jetstream import (
    COLLECTIONS,
    SERVICE,
    Counts,
    Heard,
    NetworkFilter,
    link_key,
    subscribe_url,
)
from lightnews.store import BACKEND_ERRORS, Store, unavailable
from lightnews.store.network import ListenCursor

__all__ = [
    "FLUSH_EVENTS",
    "FLUSH_SECONDS",
    "ListenReport",
    "Listener",
    "listen_websocket",
    "replay_file",
]

FLUSH_EVENTS = 5_000
FLUSH_SECONDS = 1.0
#: Posts about papers remembered at start (so quotes and reposts of them count).
REMEMBER_AT_START = 100_000
#: Articles and notes about papers whose links make second-order mentions.
ARTICLES = 20_000
#: An account judged by its posts is judged again every this many of them.
RECLASSIFY = 10
#: Largest websocket message accepted (a Jetstream event is a few kilobytes).
MAX_MESSAGE = 1 << 20

log = logging.getLogger("lightnews.ingest.listen")


@dataclass(slots=True)
class ListenReport:
    """What a listening run did: the filter's counts, new posts, reconnections."""

    name: str
    counts: Counts
    stored: int = 0
    cursor: int | None = None
    connections: int = 0
    errors: list[str] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "name": self.name,
            **self.counts.to_json(),
            "stored": self.stored,
            "cursor": self.cursor,
            "connections": self.connections,
            "errors": self.errors[-10:],
        }


class Listener:
    """Feeds raw events through the filter and writes what it keeps, with the cursor.

    ``name`` keys the saved cursor: the Jetstream address for a live
    listener, the file for a replay.
    """

    def __init__(
        self,
        store: Store,
        settings: Settings,
        name: str,
        *,
        flush_events: int = FLUSH_EVENTS,
        flush_seconds: float = FLUSH_SECONDS,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.store = store
        self.settings = settings
        self.name = name
        self.flush_events = flush_events
        self.flush_seconds = flush_seconds
        self.clock = clock
        saved = store.listen_cursor(name)
        self.cursor = saved
        scholars = frozenset(store.any_followed_accounts())
        self.filter = NetworkFilter(scholars=scholars)
        for uri, papers in reversed(list(store.network_paper_posts(REMEMBER_AT_START).items())):
            self.filter.remember(uri, papers)
        self.filter.articles = {
            link_key(url): (label, papers) for url, label, papers in store.article_papers(ARTICLES)
        }
        self.report = ListenReport(
            name, self.filter.counts, cursor=saved.time_us if saved else None
        )
        self._base = saved or ListenCursor(name, 0)
        self._posts: list[NetworkPost] = []
        self._titled: list[tuple[NetworkPost | None, Item, int]] = []
        self._deleted: list[str] = []
        self._follows: list[tuple[str, str]] = []
        self._handles: dict[str, str] = {}
        self._last: int | None = None
        self._since_flush = 0
        self._flushed_at = clock()

    @property
    def resume_from(self) -> int | None:
        """The cursor to subscribe from: the last event stored (heard again, harmlessly)."""
        return self._last if self._last is not None else self.report.cursor

    def feed(self, raw: bytes) -> None:
        """One raw event. Written out when enough have come or enough time has passed."""
        heard = self.filter.read(raw)
        if heard is not None:
            self._take(heard)
        self._since_flush += 1
        if self._since_flush >= self.flush_events or (
            self.clock() - self._flushed_at >= self.flush_seconds
        ):
            self.flush()

    def _take(self, heard: Heard) -> None:
        if self._last is None or heard.time_us > self._last:
            self._last = heard.time_us
        if heard.titles and heard.item is not None:
            self._titled.append((heard.post, heard.item, heard.time_us))
        elif heard.post is not None:
            self._posts.append(heard.post)
        if heard.deleted:
            self._deleted.append(heard.deleted)
        if heard.follow:
            self._follows.append(heard.follow)
        if heard.handle:
            self._handles[heard.handle[0]] = heard.handle[1]

    def flush(self) -> None:
        """Write the posts kept since the last flush together with the cursor."""
        self._since_flush = 0
        self._flushed_at = self.clock()
        if self._last is None:
            return
        try:
            posts = self._linked(self._posts) + self._with_titles(self._titled)
            counts = self.filter.counts
            base = self._base
            cursor = ListenCursor(
                self.name,
                self._last,
                base.events + counts.events,
                base.kept + counts.kept,
                base.malformed + counts.malformed,
                base.unknown + counts.unknown,
            )
            now = now_iso()
            new = self.store.save_network(posts, self._deleted, cursor, now)
            self.report.stored += new
            self.report.cursor = self._last
            if self._follows:
                for follower, follows in self._follows:
                    self.store.save_follows(follower, [follows], now)
            authors = {p.did: "" for p in posts}
            known = {d: h for d, h in self._handles.items() if d in authors}
            self.store.note_accounts(SERVICE, {**authors, **known}, now)
            if posts:
                self._classify(sorted(authors))
        except BACKEND_ERRORS as error:
            raise unavailable(error) from error
        self._posts, self._titled, self._deleted, self._follows = [], [], [], []
        self._handles = {}

    def _linked(self, posts: list[NetworkPost]) -> list[NetworkPost]:
        """DOIs of stored papers become their arXiv ids."""
        dois = [
            m.paper.removeprefix("doi:")
            for p in posts
            for m in p.mentions
            if m.paper.startswith("doi:")
        ]
        if not dois:
            return posts
        known = self.store.papers_by_doi(dois)
        if not known:
            return posts
        linked = []
        for post in posts:
            mentions = tuple(
                replace(m, paper=known[m.paper[4:]])
                if m.paper.startswith("doi:") and m.paper[4:] in known
                else m
                for m in post.mentions
            )
            linked.append(replace(post, mentions=_unique(mentions)))
        return linked

    def _with_titles(self, titled: list[tuple[NetworkPost | None, Item, int]]) -> list[NetworkPost]:
        """Posts by followed scholars: their titles matched too (and kept when one is)."""
        if not titled:
            return []
        link_titles(
            [item for _, item, _ in titled],
            self.store,
            bar=self.settings.link_bar,
            semantic=self.settings.semantic,
        )
        kept = []
        for post, item, time_us in titled:
            found = tuple(
                NetworkMention(m.arxiv_id, m.method, m.confidence, m.evidence)
                for m in item.mentions
            )
            if post is None:
                if not found:
                    self.filter.counts.skipped += 1
                    continue
                self.filter.counts.kept += 1
                post = NetworkPost(
                    item.post.uri if item.post else item.key,
                    item.account or "",
                    "post",
                    time_us,
                    (),
                    text=item.text,
                    created_at=item.published,
                    payload=item.payload,
                )
            post = replace(post, mentions=_unique((*post.mentions, *found)))
            self.filter.remember(post.uri, tuple(m.paper for m in post.mentions))
            kept.append(post)
        return self._linked(kept)

    def _classify(self, dids: list[str]) -> None:
        """Mark accounts whose posts are nearly all listings (bots, mirrors).

        An account is judged when it says something of itself or has posted
        enough to be judged by (``MIN_POSTS``), then again as it posts more
        (every ``RECLASSIFY`` posts: a listing bot posts all day).
        """
        counts = self.store.network_post_counts(dids)
        wanted = []
        for did in dids:
            account = self.store.get_account(SERVICE, did)
            count = counts.get(did, 0)
            if account is None:
                continue
            described = bool(account.description or account.name)
            due = count >= MIN_POSTS and (count < 2 * MIN_POSTS or count % RECLASSIFY == 0)
            if (described and count <= 1) or due:
                wanted.append(account)
        if not wanted:
            return
        records_of = self.store.network_posts_of([a.id for a in wanted])
        for account in wanted:
            did, records = account.id, records_of.get(account.id, [])
            items = []
            for uri, payload in records:
                try:
                    items.append(post_item({"uri": uri, "record": _record(payload)}))
                except Exception:  # a stored record that no longer reads: not evidence
                    continue
            reason = bot_reason(account, items)
            if bool(reason) != account.bot or reason != account.bot_reason:
                self.store.mark_bot(SERVICE, did, reason)


def _record(payload: str) -> dict[str, object]:
    import orjson

    value = orjson.loads(payload)
    return value if isinstance(value, dict) else {}


def _unique(mentions: Iterable[NetworkMention]) -> tuple[NetworkMention, ...]:
    best: dict[str, NetworkMention] = {}
    for mention in mentions:
        known = best.get(mention.paper)
        if known is None or mention.confidence > known.confidence:
            best[mention.paper] = mention
    return tuple(best.values())


def replay_file(store: Store, settings: Settings, path: Path) -> ListenReport:
    """Feed a recorded file (one JSON event a line) through the listener; blank lines skipped."""
    listener = Listener(store, settings, path.resolve().as_uri())
    with path.open("rb") as lines:
        for line in lines:
            line = line.strip()
            if line:
                listener.feed(line)
    listener.flush()
    return listener.report


async def listen_websocket(
    listener: Listener,
    url: str,
    *,
    max_backoff: float = 60.0,
    first_backoff: float = 1.0,
    stop: asyncio.Event | None = None,
    max_connections: int | None = None,
    collections: tuple[str, ...] = COLLECTIONS,
    on_event: Callable[[ListenReport], None] | None = None,
) -> ListenReport:
    """Listen until ``stop`` is set (or ``max_connections`` connections have ended).

    Each connection subscribes from the listener's cursor. A connection that
    drops, refuses or sends an unreadable frame is reconnected after a backoff
    (``first_backoff``, doubling to ``max_backoff``; reset by a connection that delivered).
    """
    import websockets
    from websockets.exceptions import WebSocketException

    report = listener.report
    backoff = first_backoff
    stop = stop or asyncio.Event()
    while not stop.is_set():
        if max_connections is not None and report.connections >= max_connections:
            break
        report.connections += 1
        address = subscribe_url(url, listener.resume_from, collections)
        delivered = False
        try:
            async with websockets.connect(
                address,
                max_size=MAX_MESSAGE,
                open_timeout=10,
                ping_interval=20,
                user_agent_header="lightnews (Jetstream listener)",
            ) as socket:
                while not stop.is_set():
                    receive = asyncio.ensure_future(socket.recv())
                    halt = asyncio.ensure_future(stop.wait())
                    done, _ = await asyncio.wait(
                        {receive, halt},
                        return_when=asyncio.FIRST_COMPLETED,
                        timeout=listener.flush_seconds,
                    )
                    halt.cancel()
                    if receive not in done:
                        receive.cancel()
                        listener.flush()  # quiet: what was heard is saved anyway
                        continue
                    message = receive.result()
                    raw = message.encode() if isinstance(message, str) else message
                    listener.feed(raw)
                    delivered = True
                    if on_event:
                        on_event(report)
        except (OSError, TimeoutError, WebSocketException) as error:
            report.errors.append(f"{type(error).__name__}: {error}")
            log.warning("Jetstream connection ended: %s", error)
        listener.flush()
        if stop.is_set():
            break
        if delivered:
            backoff = first_backoff
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), timeout=backoff)
        backoff = min(backoff * 2, max_backoff)
    listener.flush()
    return report
