"""Resolve: the papers a page names, found as ingesting it would find them, not stored.

``lightnews resolve`` and the MCP server's resolve tool parse a page with the
source that reads its format (sniffed when not given) and run the one linker
(:func:`~lightnews.link.link_titles`) on its items, so they find the same
links ingestion finds.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime

from lightnews.ingest.cited import MAX_TITLE_LOOKUPS, fetch_cited_papers
from lightnews.link import link_titles
from lightnews.model import (
    Item,
    Mention,
    SourceState,
)
from lightnews.normalize.times import utc_now
from lightnews.settings import Settings
from lightnews.sources import get_source_class
from lightnews.sources.http import HttpClient
from lightnews.store import Store

__all__ = [
    "Resolved",
    "resolve_bytes",
    "resolve_input",
    "sniff_kind",
]


@dataclass(frozen=True, slots=True)
class Resolved:
    """What ``resolve`` found on a page: how it was read, the papers it names, what went wrong."""

    kind: str
    mentions: tuple[Mention, ...]
    warnings: tuple[str, ...] = ()


def sniff_kind(body: bytes) -> str:
    """The source that reads these bytes: bluesky, feed, arxiv-api, notes, or plain text."""
    head = body[:4096].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    if head.startswith((b"{", b"[")):
        if b"jsonfeed.org" in head:
            return "feed"
        return "bluesky"
    if head.startswith((b"<?xml", b"<rss", b"<feed", b"<rdf")):
        return "arxiv-api" if b"arxiv.org/schemas/atom" in body[:8192].lower() else "feed"
    if re.search(rb"<h[1-4][\s>]|^#{1,4}\s+\S", body[:200_000], re.I | re.M):
        return "notes"
    return "text"


def resolve_bytes(
    store: Store,
    body: bytes,
    settings: Settings,
    *,
    kind: str | None = None,
    address: str = "",
    client: HttpClient | None = None,
    clock: Callable[[], datetime] = utc_now,
) -> Resolved:
    """The papers a page names, found as ingesting it would find them, without storing it.

    The page is parsed by the source that reads its format (``kind``, or
    sniffed) and its items go through the same linker as ingestion; plain
    text is one note. With a ``client``, papers cited as "Surname: short
    title" that the library lacks are fetched from arXiv first (and stored,
    as a refresh would).
    """
    from lightnews.link import link_item, merge_mentions
    from lightnews.normalize.text import html_to_text

    kind = kind or sniff_kind(body)
    warnings: list[str] = []
    if kind == "text":
        text = body.decode("utf-8", errors="replace")
        if re.search(r"<(?:p|div|br|a|span)\b", text[:20000], re.I):
            text = html_to_text(text)
        item = Item(key=address or "text", kind="note", text=text, url=address or None)
        item.mentions = link_item(item)
        items = [item]
    else:
        source = get_source_class(kind)(address or "resolve:", {}, settings)
        batch = source.read(body, SourceState(), url=address or None)
        items = batch.items
        warnings += batch.warnings
    link_titles(items, store, bar=settings.link_bar, semantic=settings.semantic)
    if client is not None:
        unresolved = [i for i in items if i.references and len(i.mentions) < len(i.references)][
            :MAX_TITLE_LOOKUPS
        ]
        if unresolved:
            warnings += fetch_cited_papers(store, settings, client, unresolved, clock)
            link_titles(unresolved, store, bar=settings.link_bar, semantic=settings.semantic)
    mentions = merge_mentions(*(i.mentions for i in items))
    return Resolved(kind, tuple(sorted(mentions, key=lambda m: -m.confidence)), tuple(warnings))


def resolve_input(
    store: Store, body: bytes, settings: Settings, *, kind: str | None = None, fetch: bool = True
) -> Resolved:
    """The papers a text, a page or an address names (``lightnews resolve``).

    An address alone is fetched (unless ``fetch`` is off) and its page read as
    :func:`resolve_bytes` reads one; with ``fetch`` and the resolve_online
    setting, papers it cites that the library lacks are looked up on arXiv.
    """
    online = fetch and bool(settings.resolve_online)
    stripped = body.strip()
    address = ""
    with HttpClient(settings) as client:
        if fetch and stripped.startswith((b"http://", b"https://")) and b" " not in stripped:
            address = stripped.decode("utf-8", errors="replace")
            body, kind = client.get(address).body, None
        return resolve_bytes(
            store, body, settings, kind=kind, address=address, client=client if online else None
        )
