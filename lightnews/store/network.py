"""Store queries about the whole conversation: network posts, the listener's cursor, watches.

Part of the store (mixed into :class:`~lightnews.store.common.CommonStore`, so
both backends run the same SQL), kept in its own module because it has its own
job: what ``lightnews listen`` hears on Bluesky's Jetstream (posts that mention
a paper, kept once per ``at://`` URI), where it stopped (its cursor, saved in
the same transaction as the posts, so a restart resumes with no gap and no
duplicate), who follows whom, and what a reader watches and has been told.

Every call a reader's watches make is in :class:`WatchQueries`, taking the
``reader`` ('' is the one local reader): per-user accounts key them by user.

A post naming an arXiv paper the library lacks makes the paper a stub at once
(in the same transaction): the stubs are what ``resolve_stubs`` fetches, so a
paper the network discusses gets its title on the next refresh. Until then
its posts' link cards (:class:`LinkCard`) say what it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import orjson

from lightnews.model import NetworkPost, PostDetails
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.store.connection import Queries, retried

__all__ = [
    "ConversationPost",
    "Delivery",
    "LinkCard",
    "ListenCursor",
    "NetworkQueries",
    "PushTarget",
    "Spoken",
    "WatchEvent",
    "WatchQueries",
    "article_label",
]


#: The columns of a :class:`Spoken` row, in its fields' order.
_SPOKEN = (
    "m.paper, p.did, p.kind, p.uri, p.created_at, p.time_us, COALESCE(a.handle, '') AS handle, "
    "a.followers, COALESCE(a.bot, 0) AS bot, m.method, m.evidence"
)


def article_label(source: object, title: object) -> str:
    """How a second-order mention names its article: ``Source’s “Title”``."""
    return f"{source}’s “{title}”" if title else str(source)


def _spoken(r: Any) -> Spoken:
    return Spoken(
        r[0],
        r[1],
        r[2],
        r[3],
        r[4],
        int(r[5]),
        r[6],
        None if r[7] is None else int(r[7]),
        bool(r[8]),
        r[9],
        r[10],
    )


@dataclass(frozen=True, slots=True)
class ListenCursor:
    """Where a listener stopped, and what it has counted so far."""

    name: str
    time_us: int
    events: int = 0
    kept: int = 0
    malformed: int = 0
    unknown: int = 0
    updated_at: str = ""


@dataclass(frozen=True, slots=True)
class Spoken:
    """One account speaking about one paper in a network post (a row of the Discussed count)."""

    paper: str
    did: str
    kind: str
    uri: str
    created_at: str | None
    time_us: int
    handle: str
    followers: int | None
    bot: bool
    method: str = ""
    #: For a second-order mention, the article it came through.
    evidence: str = ""


@dataclass(frozen=True, slots=True)
class LinkCard:
    """A post's link card (``app.bsky.embed.external``): what the linked page says it is."""

    uri: str
    title: str
    description: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"uri": self.uri, "title": self.title, "description": self.description}


@dataclass(frozen=True, slots=True)
class ConversationPost:
    """A network post about one paper, with who wrote it and what it answers.

    ``reply_root`` and ``reply_parent`` are the thread it replies in and the
    post it answers; ``subject`` the post a quote quotes or a repost reposts.
    ``scholar`` is the name of the scholar whose account it is (any reader's),
    ``name`` the account's display name.
    """

    uri: str
    did: str
    kind: str
    text: str
    created_at: str | None
    time_us: int
    handle: str
    name: str
    bot: bool
    method: str
    confidence: float
    reply_root: str | None = None
    reply_parent: str | None = None
    subject: str | None = None
    scholar_id: int | None = None
    scholar: str | None = None
    card: LinkCard | None = None


def _payload(text: str) -> dict[str, Any]:
    try:
        value = orjson.loads(text) if text else {}
    except orjson.JSONDecodeError:
        return {}
    return value if isinstance(value, dict) else {}


def _uri_of(value: Any) -> str | None:
    uri = value.get("uri") if isinstance(value, dict) else None
    return uri if isinstance(uri, str) and uri.startswith("at://") else None


def _micros(moment: str | None) -> int:
    """An ISO 8601 moment in microseconds since the epoch (0 when it cannot be read)."""
    if not moment:
        return 0
    try:
        parsed = datetime.fromisoformat(moment.replace("Z", "+00:00"))
    except ValueError:
        return 0
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp() * 1_000_000)


def link_card(record: dict[str, Any]) -> LinkCard | None:
    """The link card of a post record (also inside ``recordWithMedia``), if it has a title."""
    embed = record.get("embed")
    if not isinstance(embed, dict):
        return None
    external = embed.get("external")
    if not isinstance(external, dict):
        media = embed.get("media")
        external = media.get("external") if isinstance(media, dict) else None
    if not isinstance(external, dict):
        return None
    uri, title = external.get("uri"), external.get("title")
    description = external.get("description")
    if not isinstance(uri, str) or not isinstance(title, str) or not title.strip():
        return None
    text = description.strip() if isinstance(description, str) else ""
    return LinkCard(uri, " ".join(title.split())[:500], text[:2000])


def card_names(card: LinkCard, paper: str) -> bool:
    """Whether a card is the paper's own (its address names the paper's id)."""
    return paper in card.uri


def _arxiv_papers(posts: Iterable[NetworkPost]) -> list[str]:
    """The arXiv ids these posts name (not DOIs or OpenReview forums), once each."""
    found = (m.paper for p in posts for m in p.mentions)
    return list(dict.fromkeys(p for p in found if _is_arxiv(p)))


def _is_arxiv(paper: str) -> bool:
    """An arXiv id as papers are stored by (versionless), not ``doi:…`` or ``openreview:…``."""
    parsed = parse_arxiv_id(paper) if ":" not in paper else None
    return parsed is not None and parsed.base == paper


@dataclass(frozen=True, slots=True)
class PushTarget:
    kind: str
    address: str
    reader: str = ""


@dataclass(frozen=True, slots=True)
class WatchEvent:
    """Something that happened to a paper; ``key`` is its idempotency key."""

    key: str
    arxiv_id: str
    kind: str
    summary: str
    url: str | None
    happened: str

    def to_json(self) -> dict[str, Any]:
        return {
            "key": self.key,
            "arxiv_id": self.arxiv_id,
            "kind": self.kind,
            "summary": self.summary,
            "url": self.url,
            "happened": self.happened,
        }


@dataclass(frozen=True, slots=True)
class Delivery:
    """An event still to be delivered to one target."""

    event: WatchEvent
    target: PushTarget
    attempts: int


class NetworkQueries(Queries):
    """Network posts, their mentions, the listener's cursors and the follow graph."""

    def listen_cursor(self, name: str) -> ListenCursor | None:
        row = self.db.execute(
            "SELECT name, time_us, events, kept, malformed, unknown, updated_at "
            "FROM listen_cursors WHERE name = ?",
            (name,),
        ).fetchone()
        return ListenCursor(*row) if row else None

    @retried
    def save_network(
        self,
        posts: Sequence[NetworkPost],
        deleted: Sequence[str],
        cursor: ListenCursor,
        now: str,
    ) -> int:
        """Store posts (each URI once), forget deleted ones, move the cursor: one transaction.

        Returns how many posts were new. A post heard again (the listener
        resumed from a cursor it had partly stored past) changes nothing.
        """
        new = 0
        with self.transaction():
            # Rows in one order (URIs, ids): two listeners hearing the same posts wait for
            # each other's rows in turn rather than each holding what the other needs.
            for post in sorted(posts, key=lambda p: p.uri):
                row = self.db.execute(
                    "INSERT INTO network_posts (uri, did, kind, subject, text, created_at, "
                    "time_us, payload, first_seen) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?) "
                    "ON CONFLICT(uri) DO NOTHING RETURNING uri",
                    (
                        post.uri,
                        post.did,
                        post.kind,
                        post.subject,
                        post.text,
                        post.created_at,
                        post.time_us,
                        post.payload,
                        now,
                    ),
                ).fetchone()
                if row is None:
                    continue
                new += 1
                self.db.executemany(
                    "INSERT INTO network_mentions (uri, paper, method, confidence, evidence) "
                    "VALUES (?, ?, ?, ?, ?) ON CONFLICT(uri, paper) DO NOTHING",
                    [
                        (post.uri, m.paper, m.method, m.confidence, m.evidence[:300])
                        for m in post.mentions
                    ],
                )
            stubs = sorted(_arxiv_papers(posts))
            if stubs:
                known = self.db.execute(
                    f"SELECT arxiv_id FROM papers WHERE {self.sql.in_list('arxiv_id')}",
                    (self.sql.list_param(stubs),),
                )
                held = {r[0] for r in known}
                stubs = [paper for paper in stubs if paper not in held]
            if stubs:  # a paper the library lacks is a stub now, fetched on the next refresh
                self.db.executemany(
                    "INSERT INTO papers (arxiv_id, first_seen, modified) VALUES (?, ?, ?) "
                    "ON CONFLICT DO NOTHING",
                    [(paper, now, now) for paper in stubs],
                )
            for uri in deleted:
                self.db.execute("DELETE FROM network_mentions WHERE uri = ?", (uri,))
                self.db.execute("DELETE FROM network_posts WHERE uri = ?", (uri,))
            self.db.execute(
                "INSERT INTO listen_cursors (name, time_us, events, kept, malformed, unknown, "
                "updated_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(name) DO UPDATE SET "
                "time_us = excluded.time_us, events = excluded.events, kept = excluded.kept, "
                "malformed = excluded.malformed, unknown = excluded.unknown, "
                "updated_at = excluded.updated_at",
                (
                    cursor.name,
                    cursor.time_us,
                    cursor.events,
                    cursor.kept,
                    cursor.malformed,
                    cursor.unknown,
                    now,
                ),
            )
        return new

    def network_paper_posts(self, limit: int) -> dict[str, tuple[str, ...]]:
        """The newest ``limit`` stored posts and the papers each names (quotes and reposts of
        them name those papers too)."""
        rows = self.db.execute(
            f"SELECT p.uri, {self.sql.concat('m.paper')} FROM (SELECT uri FROM network_posts "
            "ORDER BY time_us DESC LIMIT ?) AS p JOIN network_mentions m ON m.uri = p.uri "
            "GROUP BY p.uri",
            (limit,),
        )
        return {r[0]: tuple(str(r[1]).split()) for r in rows}

    def article_papers(self, limit: int) -> list[tuple[str, str, tuple[str, ...]]]:
        """``(url, "Source's “title”", papers)`` of the newest articles and notes naming papers
        (a post linking one is about its papers: a second-order mention)."""
        rows = self.db.execute(
            "SELECT i.url, COALESCE(s.title, s.address), i.title, "
            f"{self.sql.concat('p.arxiv_id')} FROM items i JOIN sources s ON s.id = i.source_id "
            "JOIN mentions m ON m.item_id = i.id JOIN papers p ON p.id = m.paper_id "
            "WHERE i.kind IN ('article', 'note') AND i.url IS NOT NULL "
            "GROUP BY i.id, i.url, s.title, s.address, i.title ORDER BY i.id DESC LIMIT ?",
            (limit,),
        )
        return [
            (r[0], article_label(r[1], r[2]), tuple(dict.fromkeys(str(r[3]).split()))) for r in rows
        ]

    def articles_about(self, arxiv_id: str, limit: int = 200) -> list[tuple[str, int, str]]:
        """``(label, item id, url)`` of the articles and notes naming a paper, labelled as
        :meth:`article_papers` labels them (a second-order mention's evidence)."""
        rows = self.db.execute(
            "SELECT COALESCE(s.title, s.address), i.title, i.id, i.url FROM items i "
            "JOIN sources s ON s.id = i.source_id JOIN mentions m ON m.item_id = i.id "
            "JOIN papers p ON p.id = m.paper_id WHERE p.arxiv_id = ? AND "
            "i.kind IN ('article', 'note') AND i.url IS NOT NULL ORDER BY i.id DESC LIMIT ?",
            (arxiv_id, limit),
        )
        return [(article_label(r[0], r[1]), int(r[2]), r[3]) for r in rows]

    def network_authors(self, limit: int) -> list[str]:
        """DIDs of the accounts heard most recently (whose handles are worth keeping)."""
        rows = self.db.execute(
            "SELECT did FROM network_posts GROUP BY did ORDER BY max(time_us) DESC LIMIT ?",
            (limit,),
        )
        return [r[0] for r in rows]

    def network_posts_of(
        self, dids: Sequence[str], limit: int = 50
    ) -> dict[str, list[tuple[str, str]]]:
        """``(uri, record)`` of each account's newest ``limit`` posts (bots show in them)."""
        found: dict[str, list[tuple[str, str]]] = {}
        for did in dids:
            rows = self.db.execute(
                "SELECT uri, payload FROM network_posts WHERE did = ? AND kind != 'repost' "
                "ORDER BY time_us DESC LIMIT ?",
                (did, limit),
            )
            found[did] = [(r[0], r[1]) for r in rows]
        return found

    def posted_about(self, account: str, arxiv_ids: Sequence[str]) -> dict[str, list[str]]:
        """When this account posted about each of these papers (items from its sources and
        its posts heard on the network, reposts left out), oldest first: a scholar's post
        about a paper they told of days before is less likely to announce it again."""
        if not account or not arxiv_ids:
            return {}
        ids = self.sql.list_param(sorted(set(arxiv_ids)))
        rows = self.db.execute(
            "SELECT p.arxiv_id, i.published FROM items i JOIN mentions m ON m.item_id = i.id "
            "JOIN papers p ON p.id = m.paper_id WHERE i.account = ? AND i.published IS NOT NULL "
            f"AND {self.sql.in_list('p.arxiv_id')} "
            "UNION SELECT m.paper, p.created_at FROM network_mentions m "
            "JOIN network_posts p ON p.uri = m.uri WHERE p.did = ? AND p.kind != 'repost' "
            f"AND p.created_at IS NOT NULL AND {self.sql.in_list('m.paper')}",
            (account, ids, account, ids),
        )
        found: dict[str, list[str]] = {}
        for arxiv_id, when in rows:
            found.setdefault(arxiv_id, []).append(when)
        return {a: sorted(times) for a, times in found.items()}

    def network_post_counts(self, dids: Sequence[str]) -> dict[str, int]:
        """How many posts (not reposts) of each account are stored."""
        if not dids:
            return {}
        rows = self.db.execute(
            "SELECT did, count(*) FROM network_posts WHERE kind != 'repost' AND "
            f"{self.sql.in_list('did')} GROUP BY did",
            (self.sql.list_param(dids),),
        )
        return {r[0]: int(r[1]) for r in rows}

    @retried
    def note_accounts(self, service: str, handles: dict[str, str], now: str) -> None:
        """Make sure these accounts are known; a non-empty handle replaces the old."""
        with self.transaction():
            for did, handle in sorted(handles.items()):
                self.db.execute(
                    "INSERT INTO accounts (service, id, handle, updated_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT(service, id) DO UPDATE SET "
                    "handle = COALESCE(NULLIF(excluded.handle, ''), accounts.handle)",
                    (service, did, handle, now),
                )

    def network_post_count(self) -> int:
        return int(self.db.execute("SELECT count(*) FROM network_posts").fetchone()[0])

    def spoken_since(self, service: str, since_us: int, limit: int = 200_000) -> list[Spoken]:
        """Every account speaking about a paper since ``since_us``, with what is known of it."""
        rows = self.db.execute(
            f"SELECT {_SPOKEN} "
            "FROM network_posts p JOIN network_mentions m ON m.uri = p.uri "
            "LEFT JOIN accounts a ON a.service = ? AND a.id = p.did "
            "WHERE p.time_us >= ? ORDER BY p.time_us LIMIT ?",
            (service, since_us, limit),
        )
        return [_spoken(r) for r in rows]

    def most_discussed(self, since_us: int, limit: int) -> list[str]:
        """arXiv papers the most accounts posted about since ``since_us``, most first."""
        rows = self.db.execute(
            "SELECT m.paper, count(DISTINCT p.did) AS people FROM network_posts p "
            "JOIN network_mentions m ON m.uri = p.uri "
            "WHERE p.time_us >= ? AND m.paper NOT LIKE '%:%' "
            "GROUP BY m.paper ORDER BY people DESC, m.paper LIMIT ?",
            (since_us, limit),
        )
        return [r[0] for r in rows]

    def discussed_by(self, dids: Sequence[str], since_us: int, limit: int) -> list[str]:
        """arXiv papers these accounts posted about since ``since_us``, newest first."""
        if not dids:
            return []
        rows = self.db.execute(
            "SELECT m.paper, max(p.time_us) AS newest FROM network_posts p "
            "JOIN network_mentions m ON m.uri = p.uri "
            f"WHERE {self.sql.in_list('p.did')} AND p.time_us >= ? AND m.paper NOT LIKE '%:%' "
            "GROUP BY m.paper ORDER BY newest DESC LIMIT ?",
            (self.sql.list_param(sorted(dids)), since_us, limit),
        )
        return [r[0] for r in rows]

    def spoken_about(self, service: str, papers: Sequence[str], since_us: int) -> list[Spoken]:
        """:meth:`spoken_since` for some papers only (the feed's candidates)."""
        if not papers:
            return []
        rows = self.db.execute(
            f"SELECT {_SPOKEN} "
            "FROM network_mentions m JOIN network_posts p ON p.uri = m.uri "
            "LEFT JOIN accounts a ON a.service = ? AND a.id = p.did "
            f"WHERE {self.sql.in_list('m.paper')} AND p.time_us >= ? ORDER BY p.time_us",
            (service, self.sql.list_param(papers), since_us),
        )
        return [_spoken(r) for r in rows]

    def network_mentions_of(self, service: str, paper: str, limit: int = 200) -> list[Spoken]:
        """Who spoke about one paper on the network, newest first."""
        rows = self.db.execute(
            f"SELECT {_SPOKEN} "
            "FROM network_mentions m JOIN network_posts p ON p.uri = m.uri "
            "LEFT JOIN accounts a ON a.service = ? AND a.id = p.did "
            "WHERE m.paper = ? ORDER BY p.time_us DESC LIMIT ?",
            (service, paper, limit),
        )
        return [_spoken(r) for r in rows]

    def paper_conversation(
        self, service: str, paper: str, limit: int = 5_000
    ) -> list[ConversationPost]:
        """Every network post about one paper (newest ``limit``), newest first: who wrote it
        (handle, display name, the scholar it is, whether it is a bot), what it says, and
        the thread, post or quote it answers."""
        rows = self.db.execute(
            "SELECT p.uri, p.did, p.kind, p.text, p.created_at, p.time_us, "
            "COALESCE(a.handle, ''), COALESCE(a.name, ''), COALESCE(a.bot, 0), m.method, "
            "m.confidence, p.subject, p.payload FROM network_mentions m "
            "JOIN network_posts p ON p.uri = m.uri "
            "LEFT JOIN accounts a ON a.service = ? AND a.id = p.did "
            "WHERE m.paper = ? ORDER BY p.time_us DESC, p.uri LIMIT ?",
            (service, paper, limit),
        ).fetchall()
        scholars = self._scholars_of({r[1] for r in rows})
        found = []
        for r in rows:
            record = _payload(r[12])
            reply = record.get("reply")
            if not isinstance(reply, dict):
                reply = {}
            scholar_id, scholar = scholars.get(r[1], (None, None))
            found.append(
                ConversationPost(
                    uri=r[0],
                    did=r[1],
                    kind=r[2],
                    text=r[3] or "",
                    created_at=r[4],
                    time_us=int(r[5]),
                    handle=r[6],
                    name=r[7] or "",
                    bot=bool(r[8]),
                    method=r[9],
                    confidence=float(r[10]),
                    reply_root=_uri_of(reply.get("root")),
                    reply_parent=_uri_of(reply.get("parent")),
                    subject=r[11],
                    scholar_id=scholar_id,
                    scholar=scholar,
                    card=link_card(record),
                )
            )
        return found

    def _scholars_of(self, dids: Iterable[str]) -> dict[str, tuple[int, str]]:
        """The scholar (id, name) each of these accounts is, for those that are one."""
        wanted = sorted(set(dids))
        scholars: dict[str, tuple[int, str]] = {}
        if wanted:
            for did, scholar_id, name in self.db.execute(
                "SELECT d.value, s.id, s.name FROM identities d JOIN scholars s "
                "ON s.id = d.scholar_id WHERE d.kind LIKE '%-did' AND "
                f"{self.sql.in_list('d.value')} ORDER BY s.id",
                (self.sql.list_param(wanted),),
            ):
                scholars.setdefault(did, (int(scholar_id), name))
        return scholars

    def paper_feed_posts(
        self, service: str, kinds: Sequence[str], paper: str, limit: int = 5_000
    ) -> list[ConversationPost]:
        """The posts about one paper the library read from the network's own feeds
        (sources of these ``kinds``: a followed account's posts, replies and reposts), as
        conversation posts, newest first: what the reader follows is part of the
        conversation though ``listen`` never heard it. A repost gives the post it shares
        and the repost (keyed by the repost's item key, its ``subject`` the post)."""
        if not kinds:
            return []
        rows = self.db.execute(
            "SELECT i.key, i.kind, i.text, i.published, i.account, i.thread_root, "
            "i.reply_parent, i.extra, m.method, m.confidence FROM mentions m "
            "JOIN papers p ON p.id = m.paper_id JOIN items i ON i.id = m.item_id "
            "JOIN sources s ON s.id = i.source_id WHERE p.arxiv_id = ? "
            f"AND i.kind IN ('post', 'repost') AND {self.sql.in_list('s.kind')} "
            "ORDER BY i.published DESC, i.id DESC LIMIT ?",
            (paper, self.sql.list_param(list(kinds)), limit),
        ).fetchall()
        shaped = [(r, PostDetails.from_json(_payload(r[7]))) for r in rows]
        # Only network posts (a feed's item of another kind has no ``at://`` address).
        shaped = [(r, d) for r, d in shaped if d.uri.startswith("at://")]
        dids = {d.did or r[4] or "" for r, d in shaped}
        dids |= {d.reposted_by.did for r, d in shaped if r[1] == "repost" and d.reposted_by}
        dids.discard("")
        people: dict[str, tuple[str, str, bool]] = {}
        if dids:
            for did, handle, name, bot in self.db.execute(
                "SELECT id, COALESCE(handle, ''), COALESCE(name, ''), COALESCE(bot, 0) "
                f"FROM accounts WHERE service = ? AND {self.sql.in_list('id')}",
                (service, self.sql.list_param(sorted(dids))),
            ):
                people[did] = (handle, name, bool(bot))
        scholars = self._scholars_of(dids)

        def post(did: str, handle: str, **fields: Any) -> ConversationPost:
            known_handle, name, bot = people.get(did, ("", "", False))
            scholar_id, scholar = scholars.get(did, (None, None))
            return ConversationPost(
                did=did,
                handle=handle or known_handle,
                name=name,
                bot=bot,
                scholar_id=scholar_id,
                scholar=scholar,
                **fields,
            )

        found = []
        for r, details in shaped:
            sharer = details.reposted_by if r[1] == "repost" else None
            quoted = (details.quote.uri or None) if details.quote else None
            card = details.card
            found.append(
                post(
                    details.did or r[4] or "",
                    details.handle,
                    uri=details.uri,
                    kind="quote" if quoted else "post",
                    text=details.text_full or r[2] or "",
                    created_at=r[3],
                    time_us=_micros(r[3]),
                    method=r[8],
                    confidence=float(r[9]),
                    reply_root=None if sharer else r[5],
                    reply_parent=None if sharer else r[6],
                    subject=quoted,
                    card=LinkCard(card.uri, card.title, card.description)
                    if card and card.uri and card.title
                    else None,
                )
            )
            if sharer:
                shared_at = details.reposted_at or r[3]
                found.append(
                    post(
                        sharer.did,
                        sharer.handle,
                        uri=r[0],
                        kind="repost",
                        text="",
                        created_at=shared_at,
                        time_us=_micros(shared_at),
                        method=r[8],
                        confidence=float(r[9]),
                        subject=details.uri,
                    )
                )
        return found

    def paper_cards(self, papers: Sequence[str], limit: int = 2_000) -> dict[str, LinkCard]:
        """For each of these papers, the newest link card of a network post about it whose
        address names it (what a stub is, before its metadata is fetched)."""
        if not papers:
            return {}
        rows = self.db.execute(
            "SELECT m.paper, p.payload FROM network_mentions m JOIN network_posts p "
            f"ON p.uri = m.uri WHERE {self.sql.in_list('m.paper')} "
            "AND p.payload LIKE '%app.bsky.embed.external%' ORDER BY p.time_us DESC LIMIT ?",
            (self.sql.list_param(papers), limit),
        )
        found: dict[str, LinkCard] = {}
        for paper, payload in rows:
            if paper in found:
                continue
            card = link_card(_payload(payload))
            if card is not None and card_names(card, paper):
                found[paper] = card
        return found

    @retried
    def add_network_stubs(self, now: str, limit: int = 5_000) -> int:
        """Make a stub of every arXiv paper network posts name that the library lacks (the
        posts stored before posts made stubs at once); how many were made."""
        rows = self.db.execute(
            "SELECT DISTINCT m.paper FROM network_mentions m WHERE m.paper NOT LIKE '%:%' "
            "AND NOT EXISTS (SELECT 1 FROM papers p WHERE p.arxiv_id = m.paper) LIMIT ?",
            (limit,),
        ).fetchall()
        stubs = [r[0] for r in rows if _is_arxiv(r[0])]
        if not stubs:
            return 0
        with self.transaction():
            self.db.executemany(
                "INSERT INTO papers (arxiv_id, first_seen, modified) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                [(paper, now, now) for paper in stubs],
            )
        return len(stubs)

    @retried
    def save_follows(self, follower: str, follows: Iterable[str], now: str) -> int:
        """Record that ``follower`` follows each of ``follows`` (idempotent)."""
        rows = [(follower, f, now) for f in dict.fromkeys(follows) if f and f != follower]
        with self.transaction():
            self.db.executemany(
                "INSERT INTO network_follows (follower, follows, seen_at) VALUES (?, ?, ?) "
                "ON CONFLICT(follower, follows) DO NOTHING",
                rows,
            )
        return len(rows)

    def forget_follow(self, follower: str, follows: str) -> None:
        with self.transaction():
            self.db.execute(
                "DELETE FROM network_follows WHERE follower = ? AND follows = ?",
                (follower, follows),
            )

    def follows_of(self, followers: Sequence[str]) -> dict[str, set[str]]:
        """Whom each of ``followers`` follows: ``followed DID -> {follower DIDs}``."""
        if not followers:
            return {}
        rows = self.db.execute(
            "SELECT follower, follows FROM network_follows WHERE " + self.sql.in_list("follower"),
            (self.sql.list_param(followers),),
        )
        found: dict[str, set[str]] = {}
        for follower, follows in rows:
            found.setdefault(follows, set()).add(follower)
        return found


class WatchQueries(Queries):
    """What a reader watches, where they are told, and what they were told (per ``reader``)."""

    def set_watch(self, reader: str, arxiv_id: str, now: str, watched: bool = True) -> bool:
        """Watch (or stop watching) a paper; returns whether anything changed."""
        with self.transaction():
            if watched:
                row = self.db.execute(
                    "INSERT INTO watches (reader, arxiv_id, created_at) VALUES (?, ?, ?) "
                    "ON CONFLICT(reader, arxiv_id) DO NOTHING RETURNING arxiv_id",
                    (reader, arxiv_id, now),
                ).fetchone()
                return row is not None
            cursor = self.db.execute(
                "DELETE FROM watches WHERE reader = ? AND arxiv_id = ? RETURNING arxiv_id",
                (reader, arxiv_id),
            )
            return cursor.fetchone() is not None

    def watched(self, reader: str | None = None) -> dict[str, set[str]]:
        """Watched papers and who watches each (every reader's when ``reader`` is None)."""
        rows = (
            self.db.execute("SELECT arxiv_id, reader FROM watches")
            if reader is None
            else self.db.execute("SELECT arxiv_id, reader FROM watches WHERE reader = ?", (reader,))
        )
        found: dict[str, set[str]] = {}
        for arxiv_id, who in rows:
            found.setdefault(arxiv_id, set()).add(who)
        return found

    def watches_since(self, reader: str) -> list[tuple[str, str]]:
        rows = self.db.execute(
            "SELECT arxiv_id, created_at FROM watches WHERE reader = ? ORDER BY 2, 1", (reader,)
        )
        return [(str(arxiv_id), str(since)) for arxiv_id, since in rows]

    def set_push_target(self, target: PushTarget, now: str, present: bool = True) -> None:
        with self.transaction():
            if present:
                self.db.execute(
                    "INSERT INTO push_targets (reader, kind, address, created_at) "
                    "VALUES (?, ?, ?, ?) ON CONFLICT(reader, kind, address) DO NOTHING",
                    (target.reader, target.kind, target.address, now),
                )
            else:
                self.db.execute(
                    "DELETE FROM push_targets WHERE reader = ? AND kind = ? AND address = ?",
                    (target.reader, target.kind, target.address),
                )

    def push_targets(self, reader: str | None = None) -> list[PushTarget]:
        rows = (
            self.db.execute("SELECT kind, address, reader FROM push_targets ORDER BY 3, 1, 2")
            if reader is None
            else self.db.execute(
                "SELECT kind, address, reader FROM push_targets WHERE reader = ? ORDER BY 1, 2",
                (reader,),
            )
        )
        return [PushTarget(*r) for r in rows]

    def record_events(self, events: Sequence[WatchEvent], now: str) -> list[WatchEvent]:
        """Keep events (each key once) and queue a delivery per watcher's target; the new ones."""
        new: list[WatchEvent] = []
        with self.transaction():
            for event in events:
                row = self.db.execute(
                    "INSERT INTO watch_events (key, arxiv_id, kind, summary, url, happened, "
                    "created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(key) DO NOTHING "
                    "RETURNING key",
                    (
                        event.key,
                        event.arxiv_id,
                        event.kind,
                        event.summary,
                        event.url,
                        event.happened,
                        now,
                    ),
                ).fetchone()
                if row is None:
                    continue
                new.append(event)
                self.db.execute(
                    "INSERT INTO deliveries (event_key, reader, kind, address) "
                    "SELECT ?, t.reader, t.kind, t.address FROM watches w JOIN push_targets t "
                    "ON t.reader = w.reader WHERE w.arxiv_id = ? "
                    "ON CONFLICT(event_key, reader, kind, address) DO NOTHING",
                    (event.key, event.arxiv_id),
                )
        return new

    def pending_deliveries(self, max_attempts: int = 10, limit: int = 500) -> list[Delivery]:
        rows = self.db.execute(
            "SELECT e.key, e.arxiv_id, e.kind, e.summary, e.url, e.happened, d.kind, d.address, "
            "d.reader, d.attempts FROM deliveries d JOIN watch_events e ON e.key = d.event_key "
            "WHERE d.sent_at IS NULL AND d.attempts < ? ORDER BY e.happened, e.key LIMIT ?",
            (max_attempts, limit),
        )
        return [Delivery(WatchEvent(*r[:6]), PushTarget(r[6], r[7], r[8]), int(r[9])) for r in rows]

    def claim_delivery(self, delivery: Delivery) -> bool:
        """Take a delivery for sending: False when another run sent it or holds it now."""
        with self.transaction():
            row = self.db.execute(
                "UPDATE deliveries SET attempts = attempts + 1 WHERE event_key = ? AND "
                "reader = ? AND kind = ? AND address = ? AND sent_at IS NULL AND attempts = ? "
                "RETURNING event_key",
                (
                    delivery.event.key,
                    delivery.target.reader,
                    delivery.target.kind,
                    delivery.target.address,
                    delivery.attempts,
                ),
            ).fetchone()
        return row is not None

    def finish_delivery(self, delivery: Delivery, now: str, error: str | None = None) -> None:
        """Mark a delivery sent (only after the target took it), or record why it failed."""
        with self.transaction():
            self.db.execute(
                "UPDATE deliveries SET sent_at = ?, last_error = ? WHERE event_key = ? AND "
                "reader = ? AND kind = ? AND address = ?",
                (
                    None if error else now,
                    error,
                    delivery.event.key,
                    delivery.target.reader,
                    delivery.target.kind,
                    delivery.target.address,
                ),
            )

    def undigested_events(self, reader: str, limit: int = 200) -> list[WatchEvent]:
        """Events of papers ``reader`` watches, recorded since they began watching, that no
        digest of theirs has told yet (those known when the watch began are marked told
        then: see ``lightnews.deliver.watch.start_watching``); oldest first."""
        rows = self.db.execute(
            "SELECT e.key, e.arxiv_id, e.kind, e.summary, e.url, e.happened FROM watch_events e "
            "JOIN watches w ON w.arxiv_id = e.arxiv_id AND w.reader = ? "
            "WHERE e.created_at >= w.created_at AND NOT EXISTS (SELECT 1 FROM "
            "digest_watch_events d WHERE d.reader = w.reader AND d.event_key = e.key) "
            "ORDER BY e.happened, e.key LIMIT ?",
            (reader, limit),
        )
        return [WatchEvent(*r) for r in rows]

    def mark_events_digested(self, reader: str, keys: Sequence[str], now: str) -> None:
        """Record that ``reader``'s digest told these events (call once it was delivered)."""
        with self.transaction():
            self.db.executemany(
                "INSERT INTO digest_watch_events (reader, event_key, digested_at) "
                "VALUES (?, ?, ?) ON CONFLICT(reader, event_key) DO NOTHING",
                [(reader, key, now) for key in dict.fromkeys(keys)],
            )

    def undigested_posts(self, reader: str, limit: int = 5_000) -> dict[str, list[str]]:
        """For each paper ``reader`` watches, the network posts about it (by URI) first heard
        since the watch began that no digest of theirs has told yet (those known when the
        watch began are marked told then); oldest first."""
        rows = self.db.execute(
            "SELECT m.paper, p.uri FROM watches w "
            "JOIN network_mentions m ON m.paper = w.arxiv_id "
            "JOIN network_posts p ON p.uri = m.uri "
            "WHERE w.reader = ? AND p.first_seen >= w.created_at AND NOT EXISTS (SELECT 1 FROM "
            "digest_posts d WHERE d.reader = w.reader AND d.uri = p.uri) "
            "ORDER BY p.time_us, p.uri LIMIT ?",
            (reader, limit),
        )
        found: dict[str, list[str]] = {}
        for paper, uri in rows:
            found.setdefault(str(paper), []).append(str(uri))
        return found

    def mark_posts_digested(
        self, reader: str, now: str, uris: Sequence[str] = (), *, paper: str | None = None
    ) -> None:
        """Record that ``reader``'s digest told these network posts (call once it was
        delivered), or every post about ``paper`` (what was known when a watch began)."""
        with self.transaction():
            if paper is not None:
                self.db.execute(
                    "INSERT INTO digest_posts (reader, uri, digested_at) SELECT DISTINCT ?, "
                    "uri, ? FROM network_mentions WHERE paper = ? "
                    "ON CONFLICT(reader, uri) DO NOTHING",
                    (reader, now, paper),
                )
            self.db.executemany(  # a post forgotten meanwhile (deleted) is not recorded
                "INSERT INTO digest_posts (reader, uri, digested_at) SELECT ?, uri, ? "
                "FROM network_posts WHERE uri = ? ON CONFLICT(reader, uri) DO NOTHING",
                [(reader, now, uri) for uri in dict.fromkeys(uris)],
            )

    def watch_events(self, arxiv_id: str | None = None, limit: int = 100) -> list[WatchEvent]:
        where, args = ("WHERE arxiv_id = ? ", [arxiv_id]) if arxiv_id else ("", [])
        rows = self.db.execute(
            "SELECT key, arxiv_id, kind, summary, url, happened FROM watch_events "
            f"{where}ORDER BY happened DESC, key LIMIT ?",
            (*args, limit),
        )
        return [WatchEvent(*r) for r in rows]
