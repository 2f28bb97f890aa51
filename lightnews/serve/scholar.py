"""A scholar's page: the profile, their posts with threads as units, their papers.

Two halves, like the product's scholar tabs: what the scholar *posts*
(pinned first, then newest; self-threads as one unit in order, reposts with
who reposted, counts, every link in full and the papers they point to) and
what the scholar *wrote* (publications attributed above the confidence bar,
newest first, paged, with "at least N records").
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from lightnews.link.threads import assemble_threads, item_uri
from lightnews.model import Item
from lightnews.store import Store
from lightnews.store.views import ScholarPaper, ScholarView

__all__ = ["PaperEntry", "PostView", "Profile", "ScholarPage", "scholar_page"]

MAX_POSTS = 400


@dataclass(frozen=True, slots=True)
class Profile:
    """The scholar's social account as their page shows it."""

    name: str
    handle: str
    did: str
    description: str
    avatar: str | None
    followers: int | None
    following: int | None
    posts: int | None
    bot: bool
    bot_reason: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "name": self.name, "handle": self.handle, "did": self.did,
            "description": self.description, "avatar": self.avatar,
            "followers": self.followers, "following": self.following, "posts": self.posts,
            "bot": self.bot, "bot_reason": self.bot_reason,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class PostView:
    """One post of the page, or a ``gap`` where a post of a thread is missing.

    ``thread_links`` and ``thread_papers`` gather what the whole thread links to.
    """

    gap: bool
    uri: str | None
    thread_root: str | None
    position: int
    thread_size: int
    text: str = ""
    links: tuple[str, ...] = ()
    papers: tuple[str, ...] = ()
    pinned: bool = False
    reposted_by: dict[str, Any] | None = None
    created_at: str | None = None
    url: str | None = None
    kind: str = "post"
    author: str | None = None
    handle: str | None = None
    reply_count: int = 0
    repost_count: int = 0
    like_count: int = 0
    quote_count: int = 0
    card: dict[str, Any] | None = None
    quote: dict[str, Any] | None = None
    thread_links: tuple[str, ...] = ()
    thread_papers: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        thread = {"thread_links": list(self.thread_links),
                  "thread_papers": list(self.thread_papers)}  # fmt: skip
        if self.gap:
            return {
                "gap": True, "uri": self.uri, "thread_root": self.thread_root,
                "position": self.position, "thread_size": self.thread_size, "text": "",
                "links": [], "papers": [], "pinned": False, "reposted_by": None,
                "created_at": None, **thread,
            }  # fmt: skip
        return {
            "gap": False, "uri": self.uri, "url": self.url, "kind": self.kind,
            "author": self.author, "handle": self.handle, "text": self.text,
            "created_at": self.created_at, "pinned": self.pinned,
            "reposted_by": self.reposted_by, "thread_root": self.thread_root,
            "position": self.position, "thread_size": self.thread_size,
            "reply_count": self.reply_count, "repost_count": self.repost_count,
            "like_count": self.like_count, "quote_count": self.quote_count,
            "links": list(self.links), "card": self.card, "quote": self.quote,
            "papers": list(self.papers), **thread,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class PaperEntry:
    """A record attributed to the scholar, as the papers tab lists it."""

    arxiv_id: str
    title: str
    year: int | None
    primary_category: str | None
    categories: tuple[str, ...]
    abstract: str
    url: str
    confidence: float
    name_as_written: str
    withdrawn: bool

    @classmethod
    def of(cls, row: ScholarPaper) -> PaperEntry:
        return cls(
            arxiv_id=row.arxiv_id,
            title=row.title,
            year=int(row.published[:4]) if row.published else None,
            primary_category=row.primary_category,
            categories=tuple(row.categories.split()),
            abstract=row.abstract,
            url=f"https://arxiv.org/abs/{row.arxiv_id}",
            confidence=row.confidence,
            name_as_written=row.name_as_written,
            withdrawn=row.withdrawn,
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "arxiv_id": self.arxiv_id, "title": self.title, "year": self.year,
            "primary_category": self.primary_category, "categories": list(self.categories),
            "abstract": self.abstract, "url": self.url, "confidence": self.confidence,
            "name_as_written": self.name_as_written, "withdrawn": self.withdrawn,
        }  # fmt: skip


@dataclass(frozen=True, slots=True)
class ScholarPage:
    """Everything a scholar's page shows."""

    scholar: ScholarView
    profile: Profile | None
    posts: tuple[PostView, ...]
    papers: tuple[PaperEntry, ...]
    records_at_least: int
    page: int
    per_page: int
    pages: int

    def to_json(self) -> dict[str, Any]:
        return {
            "scholar": self.scholar.to_json(),
            "profile": self.profile.to_json() if self.profile else None,
            "posts": [p.to_json() for p in self.posts],
            "papers": [p.to_json() for p in self.papers],
            "records_at_least": self.records_at_least,
            "page": self.page,
            "per_page": self.per_page,
            "pages": self.pages,
        }


def _post(
    item: Item | None,
    unit: list[Item | None],
    root: str | None,
    position: int,
    pinned_key: str | None,
    missing: str | None,
    thread_links: tuple[str, ...],
    thread_papers: tuple[str, ...],
) -> PostView:
    size = len(unit)
    if item is None:
        return PostView(gap=True, uri=missing, thread_root=root, position=position,
                        thread_size=size, thread_links=thread_links,
                        thread_papers=thread_papers)  # fmt: skip
    counts = item.engagement
    return PostView(
        gap=False,
        uri=item_uri(item),
        url=item.url,
        kind=item.kind,
        author=item.author,
        handle=item.extra.get("handle"),
        text=item.text,
        created_at=item.published,
        pinned=bool(item.extra.get("pinned")) or item.key == pinned_key,
        reposted_by=item.extra.get("reposted_by") or None,
        thread_root=root if size > 1 else item.thread_root,
        position=position,
        thread_size=size,
        reply_count=counts.get("replies", 0),
        repost_count=counts.get("reposts", 0),
        like_count=counts.get("likes", 0),
        quote_count=counts.get("quotes", 0),
        links=tuple(item.links),
        card=item.extra.get("card"),
        quote=item.extra.get("quote"),
        papers=tuple(m.arxiv_id for m in item.mentions),
        thread_links=thread_links,
        thread_papers=thread_papers,
    )


def _posts(store: Store, did: str, pinned_key: str | None) -> list[PostView]:
    """Pinned unit first, then units newest first; a self-thread is one unit in order."""
    items = store.account_items([did], limit=MAX_POSTS)
    threads = assemble_threads(items)
    in_threads = {item_uri(i) for t in threads for i in t.items}
    units: list[tuple[str | None, list[Item | None], list[str]]] = [
        (t.root_key, t.entries, t.gaps) for t in threads
    ]
    units += [(None, [i], []) for i in items if i.kind != "post" or item_uri(i) not in in_threads]

    def latest(unit: tuple[str | None, list[Item | None], list[str]]) -> str:
        times = [(i.extra.get("reposted_at") or i.published or "") for i in unit[1] if i]
        return max(times, default="")

    def pinned(unit: tuple[str | None, list[Item | None], list[str]]) -> bool:
        return any(i.kind == "post" and (i.key == pinned_key or i.extra.get("pinned"))
                   for i in unit[1] if i)  # fmt: skip

    units.sort(key=lambda u: (pinned(u), latest(u)), reverse=True)
    posts = []
    for root, entries, gaps in units:
        missing = iter(gaps)
        # A thread links to everything any of its posts links to.
        links = tuple(dict.fromkeys(link for e in entries if e for link in e.links))
        papers = tuple(dict.fromkeys(m.arxiv_id for e in entries if e for m in e.mentions))
        for position, entry in enumerate(entries, start=1):
            gap = next(missing, None) if entry is None else None
            posts.append(_post(entry, entries, root, position, pinned_key, gap, links, papers))
    return posts


def scholar_page(
    store: Store,
    who: str,
    *,
    page: int = 1,
    per_page: int = 20,
    bar: float = 0.6,
    tab: str | None = None,
) -> ScholarPage:
    """Everything a scholar's page shows (raises NotFound for an unknown scholar).

    ``tab="papers"`` leaves the posts out (the papers tab does not show them).
    """
    scholar_id = store.find_scholar(who)
    scholar = store.get_scholar(scholar_id)
    keys = [i.value for i in scholar.identities
            if i.kind in ("bluesky-did", "bluesky-handle")]  # fmt: skip
    account = next(
        (a for a in (store.get_account("bluesky", k) for k in keys) if a is not None), None
    )
    profile = None
    posts: list[PostView] = []
    if account is not None:
        profile = Profile(
            name=account.name or account.handle,
            handle=account.handle,
            did=account.id,
            description=account.description,
            avatar=account.avatar,
            followers=account.followers,
            following=account.following,
            posts=account.posts,
            bot=account.bot,
            bot_reason=account.bot_reason,
        )
        if tab != "papers":
            posts = _posts(store, account.id, account.pinned)
    page = max(page, 1)
    total, rows = store.scholar_papers(scholar_id, bar, per_page, (page - 1) * per_page)
    return ScholarPage(
        scholar=scholar,
        profile=profile,
        posts=tuple(posts),
        papers=tuple(PaperEntry.of(r) for r in rows),
        records_at_least=total,
        page=page,
        per_page=per_page,
        pages=max(1, math.ceil(total / per_page)),
    )
