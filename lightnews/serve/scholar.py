"""A scholar's page: the profile, their posts with threads as units, their papers.

Two halves, like the product's scholar tabs: what the scholar *posts*
(pinned first, then newest; self-threads as one unit in order, reposts with
who reposted, counts, every link in full and the papers they point to) and
what the scholar *wrote* (publications attributed above the confidence bar,
newest first, paged, with "at least N records").
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from lightnews.errors import UsageError
from lightnews.link.threads import assemble_threads, item_uri
from lightnews.model import Actor, Item, LinkCard, QuotedPost
from lightnews.normalize.validate import page_in_range
from lightnews.store import ReaderId, Store
from lightnews.store.views import ScholarPaper, ScholarView

__all__ = [
    "THREAD_SHOWN",
    "PaperEntry",
    "PostView",
    "Profile",
    "ScholarPage",
    "numbers_itself",
    "post_units",
    "scholar_page",
]

#: Posts of a thread shown before the rest fold under "show all N".
THREAD_SHOWN = 3
_OWN_NUMBER = re.compile(r"(?:🧵\s*\d+\s*/\s*\d+|\[\d+\s*/\s*\d+\]|(?:^|\s)\d+\s*/\s*\d+\s*$)")


def numbers_itself(text: str) -> bool:
    """The post carries its own place in the thread ("🧵1/9", "[1/10]", a closing "2/5")."""
    return bool(_OWN_NUMBER.search(text.strip()))


def post_units(posts: Sequence[PostView]) -> list[list[PostView]]:
    """Posts as the page shows them: a thread's posts (and gaps) together, others alone."""
    units: list[list[PostView]] = []
    for post in posts:
        if (
            units
            and post.thread_size > 1
            and post.thread_root
            and units[-1][0].thread_root == post.thread_root
        ):
            units[-1].append(post)
        else:
            units.append([post])
    return units


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
            "name": self.name,
            "handle": self.handle,
            "did": self.did,
            "description": self.description,
            "avatar": self.avatar,
            "followers": self.followers,
            "following": self.following,
            "posts": self.posts,
            "bot": self.bot,
            "bot_reason": self.bot_reason,
        }


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
    reposted_by: Actor | None = None
    created_at: str | None = None
    url: str | None = None
    kind: str = "post"
    author: str | None = None
    handle: str | None = None
    reply_count: int = 0
    repost_count: int = 0
    like_count: int = 0
    quote_count: int = 0
    card: LinkCard | None = None
    quote: QuotedPost | None = None
    thread_links: tuple[str, ...] = ()
    thread_papers: tuple[str, ...] = ()

    def to_json(self) -> dict[str, Any]:
        thread = {
            "thread_links": list(self.thread_links),
            "thread_papers": list(self.thread_papers),
        }
        if self.gap:
            return {
                "gap": True,
                "uri": self.uri,
                "thread_root": self.thread_root,
                "position": self.position,
                "thread_size": self.thread_size,
                "text": "",
                "links": [],
                "papers": [],
                "pinned": False,
                "reposted_by": None,
                "created_at": None,
                **thread,
            }
        return {
            "gap": False,
            "uri": self.uri,
            "url": self.url,
            "kind": self.kind,
            "author": self.author,
            "handle": self.handle,
            "text": self.text,
            "created_at": self.created_at,
            "pinned": self.pinned,
            "reposted_by": self.reposted_by.to_json() if self.reposted_by else None,
            "thread_root": self.thread_root,
            "position": self.position,
            "thread_size": self.thread_size,
            "reply_count": self.reply_count,
            "repost_count": self.repost_count,
            "like_count": self.like_count,
            "quote_count": self.quote_count,
            "links": list(self.links),
            "card": self.card.to_json() if self.card else None,
            "quote": self.quote.to_json() if self.quote else None,
            "papers": list(self.papers),
            **thread,
        }


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
            "arxiv_id": self.arxiv_id,
            "title": self.title,
            "year": self.year,
            "primary_category": self.primary_category,
            "categories": list(self.categories),
            "abstract": self.abstract,
            "url": self.url,
            "confidence": self.confidence,
            "name_as_written": self.name_as_written,
            "withdrawn": self.withdrawn,
        }


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
    #: Other scholars known by this one's name: maybe one person known twice, to merge.
    namesakes: tuple[tuple[int, str], ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "scholar": self.scholar.to_json(),
            "namesakes": [{"id": i, "name": name} for i, name in self.namesakes],
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
        return PostView(
            gap=True,
            uri=missing,
            thread_root=root,
            position=position,
            thread_size=size,
            thread_links=thread_links,
            thread_papers=thread_papers,
        )
    counts = item.engagement
    post = item.post
    return PostView(
        gap=False,
        uri=item_uri(item),
        url=item.url,
        kind=item.kind,
        author=item.author,
        handle=post.handle if post else None,
        text=item.text,
        created_at=item.published,
        pinned=bool(post and post.pinned) or item.key == pinned_key,
        reposted_by=post.reposted_by if post else None,
        thread_root=root if size > 1 else item.thread_root,
        position=position,
        thread_size=size,
        reply_count=counts.get("replies", 0),
        repost_count=counts.get("reposts", 0),
        like_count=counts.get("likes", 0),
        quote_count=counts.get("quotes", 0),
        links=tuple(item.links),
        card=post.card if post else None,
        quote=post.quote if post else None,
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
        times = [((i.post and i.post.reposted_at) or i.published or "") for i in unit[1] if i]
        return max(times, default="")

    def pinned(unit: tuple[str | None, list[Item | None], list[str]]) -> bool:
        return any(
            i.kind == "post" and (i.key == pinned_key or bool(i.post and i.post.pinned))
            for i in unit[1]
            if i
        )

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
    reader: ReaderId,
) -> ScholarPage:
    """Everything a scholar's page shows to ``reader`` (raises NotFound for an unknown scholar):
    ``followed`` says whether *this* reader follows them, never whether anyone does.

    ``who`` may be part of a name (several scholars matching raise Ambiguous);
    a page past the last is a UsageError saying how many there are.
    ``tab="papers"`` leaves the posts out (the papers tab does not show them).
    """
    scholar_id = store.find_scholar(who)
    scholar = store.get_scholar(scholar_id)
    scholar = replace(scholar, followed=scholar_id in store.follows(reader))
    # An account is known by its id or its handle (identities ``<service>-did`` or ``-handle``).
    keys: list[tuple[str, str]] = []
    for identity in scholar.identities:
        service, _, end = identity.kind.rpartition("-")
        if service and end in ("did", "handle"):
            keys.append((service, identity.value))
    account = next(
        (a for a in (store.get_account(service, k) for service, k in keys) if a is not None), None
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
    if page < 1 or per_page < 1:
        raise UsageError(f"pages and their sizes count from 1, got page {page} of {per_page}")
    total, rows = store.scholar_papers(scholar_id, bar, per_page, (page - 1) * per_page)
    pages = max(1, math.ceil(total / per_page))
    page_in_range(page, pages, f"papers attributed to {scholar.name}")
    return ScholarPage(
        scholar=scholar,
        profile=profile,
        posts=tuple(posts),
        papers=tuple(PaperEntry.of(r) for r in rows),
        records_at_least=total,
        page=page,
        per_page=per_page,
        pages=pages,
        namesakes=tuple(store.namesakes(scholar_id)),
    )
