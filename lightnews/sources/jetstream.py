"""Jetstream: Bluesky's whole network as JSON events, filtered down to posts about papers.

Lightnews otherwise hears only the accounts a reader follows. Jetstream
(``wss://jetstream…/subscribe?wantedCollections=…&cursor=…``) sends every
public record as it is written, as one JSON object per websocket message:

* ``{"did", "time_us", "kind": "commit", "commit": {"rev", "operation":
  "create"|"update"|"delete", "collection", "rkey", "record"?, "cid"?}}``;
* ``{"did", "time_us", "kind": "identity", "identity": {"did", "handle", "seq", "time"}}``;
* ``{"did", "time_us", "kind": "account", "account": {"active", "did", "seq", "time", "status"?}}``.

``time_us`` (microseconds since the epoch) is the cursor: a client that
reconnects with ``cursor=T`` gets the events from T on again.

The network writes a few hundred posts a second and almost none names a
paper, so this module decides cheaply before any linking: substring tests
(:data:`NEEDLES`: arxiv and alphaxiv, doi, openreview, the paper pages of
Hugging Face and others) on a post's text and, when it has any, its facets
and embed, plus a few lookups (a quote or repost of a known paper post, a
post by a known scholar). Only posts that pass are read for papers, through
the Bluesky source's own reading (:func:`~lightnews.sources.bluesky.match_texts`:
links whole from facets, link cards, alt text) and the linker's identifier
finders. A quote or a repost of a post already known to name a paper names
that paper too.

Why decode first: a filter that tested the raw bytes before decoding (the same
needles over the whole event, case-folded) measured slower than orjson
decoding every event and testing only the post's own fields
(``bench/listen_replay.py``, docs/benchmarks.md: 0.69 against 0.81 times the
events per second of a bare ``json.loads``).

Sans-IO like every source: :class:`NetworkFilter` takes bytes and returns
:class:`Heard` objects; the listener (:mod:`lightnews.ingest.listen`) does the
websocket and the store. Nothing here raises on bad input: an event that is
not JSON, not an object, or lacks its fields is counted as malformed; a kind
this module does not know is counted as unknown.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlencode

import orjson

from lightnews.errors import ParseError
from lightnews.model import Item, NetworkMention, NetworkPost
from lightnews.normalize.identifiers import find_arxiv_mentions, find_dois, find_openreview_ids
from lightnews.normalize.text import iso_utc
from lightnews.sources.bluesky_parse import match_texts, post_item
from lightnews.sources.bluesky_protocol import SERVICE

__all__ = [
    "COLLECTIONS",
    "FOLLOW",
    "NEEDLES",
    "POST",
    "REPOST",
    "SERVICE",
    "Counts",
    "Heard",
    "NetworkFilter",
    "link_key",
    "subscribe_url",
]

POST = "app.bsky.feed.post"
REPOST = "app.bsky.feed.repost"
FOLLOW = "app.bsky.graph.follow"
#: What the listener asks Jetstream for: posts, reposts (of posts about papers) and
#: follows (a followed scholar's follows weigh on the Discussed page).
COLLECTIONS = (POST, REPOST, FOLLOW)
#: Lower-case strings one of which every post naming a paper by a link or an id contains
#: (in its case-folded text, facets or embed): ``xiv`` is in
#: arxiv and alphaxiv, ``/paper`` in the paper pages of Hugging Face (hf.co too),
#: Papers with Code and Semantic Scholar; arXiv's own DOIs are bare DOIs (below).
NEEDLES = ("xiv", "doi.org", "doi:", "openreview", "/paper")
#: A DOI written bare in a post ("10.1038/s41586-…"), tested only where "10." occurs.
_BARE_DOI = re.compile(r"\b10\.\d{4,9}/\S")
#: How many posts about papers are remembered for quotes and reposts of them.
REMEMBERED = 200_000


def subscribe_url(base: str, cursor: int | None, collections: tuple[str, ...] = COLLECTIONS) -> str:
    """The subscription address: ``base`` with the wanted collections and the cursor."""
    params: list[tuple[str, str]] = [("wantedCollections", c) for c in collections]
    if cursor:
        params.append(("cursor", str(cursor)))
    joiner = "&" if "?" in base else "?"
    return f"{base}{joiner}{urlencode(params)}"


@dataclass(slots=True)
class Counts:
    """What a listener has seen: every event is exactly one of kept, skipped (a post
    naming no paper), other (another record or kind of event), malformed or unknown;
    ``read`` posts passed the cheap tests and were read for papers."""

    events: int = 0
    read: int = 0
    kept: int = 0
    skipped: int = 0
    other: int = 0
    malformed: int = 0
    unknown: int = 0

    def to_json(self) -> dict[str, int]:
        return {
            "events": self.events,
            "read": self.read,
            "kept": self.kept,
            "skipped": self.skipped,
            "other": self.other,
            "malformed": self.malformed,
            "unknown": self.unknown,
        }


@dataclass(slots=True)
class Heard:
    """What one event means for the library (at most one of its fields is set)."""

    time_us: int
    post: NetworkPost | None = None
    #: The post as an item, for the linker's title matching (posts by known scholars).
    item: Item | None = None
    titles: bool = False
    deleted: str | None = None
    follow: tuple[str, str] | None = None
    handle: tuple[str, str] | None = None
    #: A post that names no paper.
    skipped: bool = False


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def link_key(url: str) -> str:
    """An address as articles are looked up by: no scheme, ``www.``, query, fragment or
    trailing slash, lower-cased host."""
    rest = url.split("://", 1)[-1].split("#", 1)[0].split("?", 1)[0].rstrip("/")
    host, _, path = rest.partition("/")
    return f"{host.lower().removeprefix('www.')}/{path}"


def _record_links(record: dict[str, Any]) -> list[str]:
    """The link facets' and link card's addresses of a raw post record."""
    found = []
    for facet in record.get("facets") or ():
        for feature in _obj(facet).get("features") or ():
            uri = _obj(feature).get("uri")
            if isinstance(uri, str):
                found.append(uri)
    external = _str(_obj(_obj(record.get("embed")).get("external")).get("uri"))
    if external:
        found.append(external)
    return found


def _quoted_uri(record: dict[str, Any]) -> str:
    """The URI of the post a record quotes (``embed.record`` or ``recordWithMedia``)."""
    embed = _obj(record.get("embed"))
    inner = _obj(embed.get("record"))
    if "record" in inner and isinstance(inner.get("record"), dict):  # recordWithMedia
        inner = _obj(inner["record"])
    return _str(inner.get("uri"))


@dataclass(slots=True)
class NetworkFilter:
    """Reads raw Jetstream events; keeps posts about papers, counts everything.

    ``scholars`` are DIDs whose posts are decoded even without a link (their
    titles are matched by the listener) and whose follows are kept.
    ``paper_posts`` maps the URIs of known posts about papers to those papers,
    so that quotes and reposts of them count; it keeps the newest
    ``REMEMBERED``.
    """

    scholars: frozenset[str] = frozenset()
    paper_posts: dict[str, tuple[str, ...]] = field(default_factory=dict)
    #: Articles and notes about papers, by :func:`link_key` of their address: a post
    #: linking one is about its papers (``via`` the article, which the mention names).
    articles: dict[str, tuple[str, tuple[str, ...]]] = field(default_factory=dict)
    counts: Counts = field(default_factory=Counts)
    remembered: int = REMEMBERED

    def remember(self, uri: str, papers: tuple[str, ...]) -> None:
        self.paper_posts[uri] = papers
        while len(self.paper_posts) > self.remembered:
            del self.paper_posts[next(iter(self.paper_posts))]

    def may_name_paper(self, did: str, record: dict[str, Any]) -> bool:
        """The cheap test: could this post name a paper? (False: skip it unread.)"""
        text = record.get("text")
        if isinstance(text, str):
            folded = text.lower()
            for needle in NEEDLES:
                if needle in folded:
                    return True
            if "10." in text and _BARE_DOI.search(text):
                return True
        facets, embed = record.get("facets"), record.get("embed")
        if facets or embed:
            folded = orjson.dumps([facets, embed]).decode().lower()
            for needle in NEEDLES:
                if needle in folded:
                    return True
            if self.paper_posts and _quoted_uri(record) in self.paper_posts:
                return True
            if self.articles and any(link_key(u) in self.articles for u in _record_links(record)):
                return True
        return did in self.scholars

    def read(self, raw: bytes) -> Heard | None:
        """One event: what it means, or None (skipped, another record, malformed, unknown)."""
        counts = self.counts
        counts.events += 1
        try:
            event = orjson.loads(raw)
        except orjson.JSONDecodeError:
            counts.malformed += 1
            return None
        if not isinstance(event, dict):
            counts.malformed += 1
            return None
        time_us = event.get("time_us")
        did = _str(event.get("did"))
        kind = event.get("kind")
        if not isinstance(time_us, int) or isinstance(time_us, bool) or time_us < 0:
            counts.malformed += 1
            return None
        if not did.startswith("did:") or not isinstance(kind, str):
            counts.malformed += 1
            return None
        if kind == "identity":
            counts.other += 1
            handle = _str(_obj(event.get("identity")).get("handle"))
            return Heard(time_us, handle=(did, handle) if handle else None)
        if kind == "account":
            counts.other += 1
            return Heard(time_us)
        if kind != "commit":
            counts.unknown += 1
            return None
        commit = event.get("commit")
        if not isinstance(commit, dict):
            counts.malformed += 1
            return None
        heard = self._commit(did, time_us, commit)
        if heard is None:
            counts.malformed += 1
            return None
        if heard.post is not None:
            counts.kept += 1
            self.remember(heard.post.uri, tuple(m.paper for m in heard.post.mentions))
        elif heard.skipped:
            counts.skipped += 1
        elif not heard.titles:
            counts.other += 1  # the listener counts a scholar's post once its titles are read
        return heard

    def _commit(self, did: str, time_us: int, commit: dict[str, Any]) -> Heard | None:
        operation = commit.get("operation")
        collection = commit.get("collection")
        rkey = commit.get("rkey")
        if not (isinstance(operation, str) and isinstance(collection, str)):
            return None
        if not isinstance(rkey, str) or not rkey or "/" in rkey:
            return None
        uri = f"at://{did}/{collection}/{rkey}"
        if operation == "delete":
            return Heard(time_us, deleted=uri if uri in self.paper_posts else None)
        if operation not in ("create", "update"):
            return None
        record = commit.get("record")
        if not isinstance(record, dict):
            return None
        if collection == POST:
            return self._post(did, time_us, uri, commit, record)
        if collection == REPOST:
            subject = _str(_obj(record.get("subject")).get("uri"))
            papers = self.paper_posts.get(subject)
            if not papers:
                return Heard(time_us)
            post = NetworkPost(
                uri,
                did,
                "repost",
                time_us,
                tuple(NetworkMention(p, "repost", 1.0, subject) for p in papers),
                subject=subject,
                created_at=_str(record.get("createdAt")) or None,
            )
            return Heard(time_us, post=post)
        if collection == FOLLOW and did in self.scholars:
            followed = _str(record.get("subject"))
            return Heard(time_us, follow=(did, followed) if followed.startswith("did:") else None)
        return Heard(time_us)

    def _post(
        self, did: str, time_us: int, uri: str, commit: dict[str, Any], record: dict[str, Any]
    ) -> Heard | None:
        if not self.may_name_paper(did, record):
            return Heard(time_us, skipped=True)
        self.counts.read += 1
        links, texts = match_texts(record)
        named = [*links, *texts]
        mentions = [
            NetworkMention(m.arxiv_id, m.method, m.confidence, m.evidence)
            for m in find_arxiv_mentions(named)
        ]
        mentions += [NetworkMention(f"doi:{d}", "doi", 1.0, d) for d in find_dois(named)]
        mentions += [
            NetworkMention(f"openreview:{i}", "openreview-url", 1.0, i)
            for i in find_openreview_ids(named)
        ]
        known = {m.paper for m in mentions}
        for link in links:
            label, papers = self.articles.get(link_key(link), ("", ()))
            mentions += [
                NetworkMention(p, "via-article", 0.9, label) for p in papers if p not in known
            ]
            known.update(papers)
        kind = "post"
        quoted = _quoted_uri(record)
        if quoted and quoted in self.paper_posts:
            kind = "quote"
            known = {m.paper for m in mentions}
            mentions += [
                NetworkMention(p, "quote", 0.95, quoted)
                for p in self.paper_posts[quoted]
                if p not in known
            ]
        titles = did in self.scholars
        if not mentions and not titles:
            return Heard(time_us, skipped=True)
        item = None
        if titles:  # the linker's title matching reads the post as an item
            try:
                item = post_item(
                    {"uri": uri, "cid": _str(commit.get("cid")), "record": record}, payload=record
                )
            except ParseError:
                return None
        post = NetworkPost(
            uri,
            did,
            kind,
            time_us,
            tuple(mentions),
            subject=quoted if kind == "quote" else None,
            text=_str(record.get("text")),
            created_at=iso_utc(record.get("createdAt")),
            payload=orjson.dumps(record).decode(),
        )
        return Heard(time_us, post=post if mentions else None, item=item, titles=titles)
