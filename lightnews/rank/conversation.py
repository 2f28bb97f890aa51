"""The conversation on a story: what the network says about a paper, not only how many.

The store gives every network post about a paper
(:meth:`~lightnews.store.base.Store.paper_conversation`: what ``listen``
heard) and every post about it read from the network's own feeds, a followed
scholar's (:meth:`~lightnews.store.base.Store.paper_feed_posts`), each post
once; this module shapes them the way the story page, ``/api/paper``,
``lightnews show`` and the digest's watched papers all show them, so they
cannot disagree:

* a self-thread (an author replying to their own post) is one unit, in
  reading order;
* replies by others and quotes sit under the unit they answer, reposts are
  counted there (who reposted it);
* posts by bots, mirrors and listing accounts are folded away with a count;
* units of scholars the reader follows come first, named as the reader knows
  them, then the rest, newest first; every post of the newest week is marked;
* a popular paper pages its units (``PAGE_SIZE`` a page).

:func:`conversation_of` is pure (rows in, frozen dataclasses out);
:func:`read_conversation` is the one read every surface makes.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from lightnews.sources import Network, all_traits, network
from lightnews.store import Store
from lightnews.store.network import ConversationPost
from lightnews.store.readers import ReaderId

__all__ = [
    "PAGE_SIZE",
    "Conversation",
    "ConversationUnit",
    "Reposter",
    "SaidPost",
    "conversation_of",
    "read_conversation",
]

#: Units (threads, lone posts) a page of the conversation shows.
PAGE_SIZE = 20
#: How far back "the newest week" reaches.
RECENT = timedelta(days=7)


@dataclass(frozen=True, slots=True)
class SaidPost:
    """One post as a story shows it: who, when, what, and where to read it."""

    uri: str
    url: str | None
    did: str
    handle: str
    #: Who wrote it, for people: a followed scholar's name, else the display name or handle.
    author: str
    scholar_id: int | None
    followed: bool
    kind: str
    text: str
    created_at: str | None
    #: Posted in the newest week.
    recent: bool
    #: For a reply, the post it answers; for a quote or a repost, the post quoted.
    answers: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "uri": self.uri,
            "url": self.url,
            "did": self.did,
            "handle": self.handle or None,
            "author": self.author,
            "scholar_id": self.scholar_id,
            "followed": self.followed,
            "kind": self.kind,
            "text": self.text,
            "created_at": self.created_at,
            "recent": self.recent,
            "answers": self.answers,
        }


@dataclass(frozen=True, slots=True)
class Reposter:
    """Who shared a unit's post, named as a post's author is: a followed scholar by the
    name the reader knows, anyone else by their display name, else their handle."""

    did: str
    handle: str
    name: str | None
    scholar_id: int | None
    followed: bool

    @property
    def label(self) -> str:
        """``Mara Lindqvist (@maralindqvist.bsky.social)``, ``@someone.bsky.social``."""
        at = f"@{self.handle}" if self.handle else self.did
        return f"{self.name} ({at})" if self.name else at

    def to_json(self) -> dict[str, Any]:
        return {
            "did": self.did,
            "handle": self.handle or None,
            "name": self.name,
            "scholar_id": self.scholar_id,
            "followed": self.followed,
        }


@dataclass(frozen=True, slots=True)
class ConversationUnit:
    """A thread (or a lone post) and what answers it: replies, quotes and reposts."""

    posts: tuple[SaidPost, ...]
    replies: tuple[SaidPost, ...] = ()
    quotes: tuple[SaidPost, ...] = ()
    #: Followed scholars first, each account once.
    reposters: tuple[Reposter, ...] = ()

    @property
    def reposted_by(self) -> tuple[str, ...]:
        """The reposters' handles (a DID where the handle is unknown), as the API gives them."""
        return tuple(r.handle or r.did for r in self.reposters)

    @property
    def first(self) -> SaidPost:
        return self.posts[0]

    @property
    def thread(self) -> bool:
        return len(self.posts) > 1

    @property
    def recent(self) -> bool:
        return any(p.recent for p in (*self.posts, *self.replies, *self.quotes))

    def to_json(self) -> dict[str, Any]:
        return {
            "thread": self.thread,
            "recent": self.recent,
            "posts": [p.to_json() for p in self.posts],
            "replies": [p.to_json() for p in self.replies],
            "quotes": [p.to_json() for p in self.quotes],
            "reposted_by": list(self.reposted_by),
            "reposters": [r.to_json() for r in self.reposters],
        }


@dataclass(frozen=True, slots=True)
class Conversation:
    """One page of a paper's conversation, with the counts of all of it."""

    paper: str
    units: tuple[ConversationUnit, ...]
    page: int
    pages: int
    #: Units over every page.
    total_units: int
    #: Posts, quotes and reposts by people (bots' not counted), and how many people.
    posts: int
    people: int
    #: Of them, posted in the newest week.
    this_week: int
    #: Posts by bots, mirrors and listing accounts, folded away; and how many accounts.
    bot_posts: int
    bots: int

    def __bool__(self) -> bool:
        return bool(self.posts or self.bot_posts)

    @property
    def why(self) -> str:
        """``5 posts by 3 people, 2 this week; 4 posts by 2 bots folded away``."""
        words = (
            f"{_plural(self.posts, 'post', 'posts')} by {_plural(self.people, 'person', 'people')}"
        )
        if self.this_week:
            words += f", {self.this_week} this week"
        if self.bot_posts:
            bots = _plural(self.bots, "bot or mirror", "bots and mirrors")
            words += f"; {_plural(self.bot_posts, 'post', 'posts')} by {bots} folded away"
        return words

    def to_json(self) -> dict[str, Any]:
        return {
            "paper": self.paper,
            "why": self.why,
            "posts": self.posts,
            "people": self.people,
            "this_week": self.this_week,
            "bot_posts": self.bot_posts,
            "bots": self.bots,
            "page": self.page,
            "pages": self.pages,
            "total_units": self.total_units,
            "units": [u.to_json() for u in self.units],
        }


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _moment(post: ConversationPost) -> datetime:
    """When it was posted: its record's date, else when it was heard."""
    if post.created_at:
        try:
            moment = datetime.fromisoformat(post.created_at.replace("Z", "+00:00"))
        except ValueError:
            pass
        else:
            return moment if moment.tzinfo else moment.replace(tzinfo=UTC)
    return datetime.fromtimestamp(post.time_us / 1_000_000, UTC)


def _said(
    post: ConversationPost,
    followed: Mapping[str, int],
    now: datetime,
    answers: str | None,
    net: Network,
) -> SaidPost:
    is_followed = post.did in followed
    if is_followed and post.scholar:
        author = post.scholar
    else:
        author = post.name or (f"@{post.handle}" if post.handle else post.scholar or post.did)
    return SaidPost(
        post.uri,
        net.post_url(post.uri, post.handle),
        post.did,
        post.handle,
        author,
        post.scholar_id,
        is_followed,
        post.kind,
        post.text,
        post.created_at,
        now - RECENT <= _moment(post),
        answers,
    )


def _reposters(
    posts: Sequence[ConversationPost], followed: Mapping[str, int]
) -> tuple[Reposter, ...]:
    """Who reposted a unit's post, each account once, followed scholars first."""
    seen: dict[str, Reposter] = {}
    for post in posts:
        is_followed = post.did in followed
        name = (post.scholar if is_followed else None) or post.name or post.scholar or None
        seen.setdefault(
            post.did, Reposter(post.did, post.handle, name, post.scholar_id, is_followed)
        )
    return tuple(sorted(seen.values(), key=lambda r: not r.followed))


def _self_thread(post: ConversationPost, author_of: Callable[[str], str]) -> str | None:
    """The root of the self-thread a post belongs to (its author replying to themself)."""
    if post.kind == "repost" or not post.reply_root:
        return None
    if author_of(post.reply_root) != post.did:
        return None
    if post.reply_parent and author_of(post.reply_parent) != post.did:
        return None
    return post.reply_root


def conversation_of(
    paper: str,
    posts: Sequence[ConversationPost],
    *,
    followed: Mapping[str, int],
    now: datetime,
    page: int = 1,
    page_size: int = PAGE_SIZE,
) -> Conversation:
    """Shape a paper's network posts into units, followed scholars first, then page them.

    ``followed`` maps the accounts (DIDs) of the scholars the reader follows to
    the scholars' ids.
    """
    net = network()  # whose posts these are: the author in a URI, a post's web page
    author_of = net.author
    people = [p for p in posts if not p.bot]
    bots = [p for p in posts if p.bot]
    by_uri = {p.uri: p for p in people}
    # Each own post (not a repost) is in a unit, keyed by its thread's root or its own URI.
    unit_key: dict[str, str] = {}
    for post in people:
        if post.kind != "repost":
            unit_key[post.uri] = _self_thread(post, author_of) or post.uri

    def answered(post: ConversationPost) -> str | None:
        """The post this one answers, when it is by someone else (a reply or a quote)."""
        if post.kind in ("quote", "repost") and post.subject:
            return post.subject
        if post.reply_parent and author_of(post.reply_parent) != post.did:
            return post.reply_parent
        if post.reply_root and author_of(post.reply_root) != post.did:
            return post.reply_root
        return None

    def top(uri: str) -> str | None:
        """The unit a post ends up under: follow what it answers up to a unit's own post."""
        seen: set[str] = set()
        current: str | None = uri
        while current is not None and current not in seen:
            seen.add(current)
            post = by_uri.get(current)
            if post is None:
                return None
            target = answered(post)
            if target is None or target not in by_uri:
                return unit_key.get(current)
            current = target
        return None

    own: dict[str, list[ConversationPost]] = {}
    under: dict[str, list[tuple[ConversationPost, str]]] = {}
    reposts: dict[str, list[ConversationPost]] = {}
    for post in people:
        target = answered(post)
        home = top(target) if target else None
        if post.kind == "repost":
            if home is not None:  # a repost of what was not heard says nothing to show
                reposts.setdefault(home, []).append(post)
            continue
        if target is not None and home is not None and home != unit_key[post.uri]:
            under.setdefault(home, []).append((post, target))
        else:
            own.setdefault(unit_key[post.uri], []).append(post)
    # Rank every unit by its raw posts; only the page shown is shaped (a popular paper's
    # conversation has hundreds of units, and shaping a post builds its links).
    ranked: list[tuple[tuple[int, float], str]] = []
    for key, mine in own.items():  # every unit's own posts were heard (see ``top``)
        mine.sort(key=_moment)
        newest = max(_moment(p) for p in (*mine, *(p for p, _ in under.get(key, []))))
        by_followed = any(p.did in followed for p in mine)
        known = 0 if by_followed else 1 if any(p.scholar_id for p in mine) else 2
        ranked.append(((known, -newest.timestamp()), key))
    ranked.sort(key=lambda pair: pair[0])
    pages = max(1, -(-len(ranked) // page_size))
    page = min(max(page, 1), pages)

    def shaped(key: str) -> ConversationUnit:
        answers = sorted(under.get(key, []), key=lambda pair: _moment(pair[0]))
        return ConversationUnit(
            tuple(_said(p, followed, now, answered(p), net) for p in own[key]),
            tuple(_said(p, followed, now, t, net) for p, t in answers if p.kind != "quote"),
            tuple(_said(p, followed, now, t, net) for p, t in answers if p.kind == "quote"),
            _reposters(reposts.get(key, ()), followed),
        )

    week = now - RECENT
    return Conversation(
        paper=paper,
        units=tuple(shaped(key) for _, key in ranked[(page - 1) * page_size : page * page_size]),
        page=page,
        pages=pages,
        total_units=len(ranked),
        posts=len(people),
        people=len({p.did for p in people}),
        this_week=sum(1 for p in people if _moment(p) >= week),
        bot_posts=len(bots),
        bots=len({p.did for p in bots}),
    )


def read_conversation(
    store: Store, paper: str, reader: ReaderId, now: datetime, page: int = 1
) -> Conversation:
    """A page of a paper's conversation as ``reader`` sees it (their scholars first)."""
    net = network()
    heard = store.paper_conversation(net.service, paper)
    # What the library read from the network's own feeds (a followed scholar's posts)
    # is part of the conversation too, once: a post ``listen`` heard as well is kept as heard.
    kinds = [k for k, t in all_traits().items() if t.network == net]
    posts = list(heard)
    known = {p.uri for p in heard}
    for post in store.paper_feed_posts(net.service, kinds, paper):
        if post.uri not in known:  # a post two followed accounts reposted is read twice
            known.add(post.uri)
            posts.append(post)
    posts.sort(key=lambda p: (-p.time_us, p.uri))
    if not posts:
        return conversation_of(paper, (), followed={}, now=now, page=page)
    return conversation_of(
        paper, posts, followed=store.followed_accounts(reader), now=now, page=page
    )
