"""Discussed now: papers ranked by the people posting about them across the whole network.

arxiv-sanity's "Top Hype" summed ``min(log10(followers + 1), 4)`` over every
tweet about a paper. Here each *account* counts once per paper (ten posts by
one enthusiast are one voice), weighed by:

* reach: ``1 + min(log10(followers + 1), 4)`` (followers unknown: 1);
* who it is: a scholar the reader follows counts ×3, an account one of
  them follows ×2 (the follower graph, ``network_follows``);
* what it is: a bot, a mirror or a listing account (marked by
  :mod:`lightnews.link.bots`) counts ``bot_weight`` (0.05 by default),
  whatever its reach; an account that only reposted counts half.

Each entry says who and how many ("12 people incl. 2 you follow, 1 followed by
scholars you follow; 3 bots ignored"). The same counts feed the home feed's
"N people discuss it" (:func:`discussion_of`). Plain functions over rows the
store gives; no I/O of their own.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any

from lightnews.sources import network
from lightnews.store import Store
from lightnews.store.network import Spoken
from lightnews.store.readers import ReaderId

__all__ = [
    "DiscussedPaper",
    "SecondOrder",
    "Speaker",
    "account_weight",
    "discussed_papers",
    "discussion_of",
    "rank_discussion",
    "reach",
    "second_order_of",
    "titles_of",
]

#: Most rows read for one ranking (a busy day on the network is far below it).
MAX_ROWS = 200_000
REACH_CAP = 4.0


@dataclass(frozen=True, slots=True)
class Speaker:
    """One account speaking about a paper, with what it counts for and why."""

    did: str
    handle: str
    weight: float
    role: str  # followed, friend (followed by a followed scholar), person, bot
    followers: int | None
    reposted_only: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "did": self.did,
            "handle": self.handle or None,
            "weight": round(self.weight, 3),
            "role": self.role,
            "followers": self.followers,
            "reposted_only": self.reposted_only,
        }


@dataclass(frozen=True, slots=True)
class DiscussedPaper:
    """A paper with the weighted count of the accounts discussing it, explained."""

    paper: str
    title: str
    score: float
    people: int
    followed: int
    friends: int
    bots: int
    why: str
    speakers: tuple[Speaker, ...]
    #: Known only by its id so far (its metadata is fetched on the next refresh): the
    #: title is then a post's link card's, or the id's.
    stub: bool = False

    @property
    def arxiv_id(self) -> str | None:
        return None if ":" in self.paper else self.paper

    @property
    def url(self) -> str:
        if self.paper.startswith("doi:"):
            return "https://doi.org/" + self.paper[4:]
        if self.paper.startswith("openreview:"):
            return "https://openreview.net/forum?id=" + self.paper[11:]
        return "https://arxiv.org/abs/" + self.paper

    def to_json(self) -> dict[str, Any]:
        return {
            "paper": self.paper,
            "arxiv_id": self.arxiv_id,
            "title": self.title,
            "url": self.url,
            "score": round(self.score, 3),
            "people": self.people,
            "followed": self.followed,
            "friends": self.friends,
            "bots": self.bots,
            "why": self.why,
            "stub": self.stub,
            "speakers": [s.to_json() for s in self.speakers[:50]],
        }


def reach(followers: int | None) -> float:
    """``min(log10(followers + 1), 4)``: a million followers count 4, ten count 1."""
    if followers is None or followers < 0:
        return 0.0
    return min(math.log10(followers + 1), REACH_CAP)


def account_weight(
    followers: int | None,
    *,
    bot: bool,
    followed: bool,
    friend: bool,
    reposted_only: bool,
    bot_weight: float,
) -> float:
    """What one account counts for on one paper."""
    if bot:
        return bot_weight
    weight = 1.0 + reach(followers)
    if followed:
        weight *= 3.0
    elif friend:
        weight *= 2.0
    return weight / 2 if reposted_only else weight


def _plural(count: int, one: str, many: str) -> str:
    return f"{count} {one if count == 1 else many}"


def _explain(people: int, followed: int, friends: int, bots: int) -> str:
    words = _plural(people, "person", "people")
    extras = []
    if followed:
        extras.append(f"{followed} you follow")
    if friends:
        extras.append(f"{friends} followed by scholars you follow")
    if extras:
        words += " incl. " + ", ".join(extras)
    if bots:
        words += f"; {_plural(bots, 'bot', 'bots')} ignored"
    return words


def rank_discussion(
    rows: Sequence[Spoken],
    followed: set[str],
    friends: dict[str, set[str]],
    *,
    bot_weight: float = 0.05,
    titles: dict[str, str] | None = None,
) -> list[DiscussedPaper]:
    """Papers by the weighted count of distinct accounts speaking about them, best first."""
    by_paper: dict[str, dict[str, list[Spoken]]] = {}
    for row in rows:
        by_paper.setdefault(row.paper, {}).setdefault(row.did, []).append(row)
    ranked = []
    for paper, accounts in by_paper.items():
        speakers = []
        for did, said in accounts.items():
            first = said[0]
            reposted_only = all(s.kind == "repost" for s in said)
            is_followed = did in followed
            is_friend = not is_followed and bool(friends.get(did))
            weight = account_weight(
                first.followers,
                bot=first.bot,
                followed=is_followed,
                friend=is_friend,
                reposted_only=reposted_only,
                bot_weight=bot_weight,
            )
            role = (
                "bot"
                if first.bot
                else "followed"
                if is_followed
                else "friend"
                if is_friend
                else "person"
            )
            speakers.append(
                Speaker(did, first.handle, weight, role, first.followers, reposted_only)
            )
        speakers.sort(key=lambda s: (-s.weight, s.handle or s.did))
        bots = sum(1 for s in speakers if s.role == "bot")
        people = len(speakers) - bots
        n_followed = sum(1 for s in speakers if s.role == "followed")
        n_friends = sum(1 for s in speakers if s.role == "friend")
        why = _explain(people, n_followed, n_friends, bots)
        via = [
            r.evidence
            for said in accounts.values()
            for r in said
            if r.method == "via-article" and r.evidence and not r.bot
        ]
        if via:  # second-order: posts that linked an article about the paper
            why += " · via " + max(sorted(set(via)), key=via.count)
        ranked.append(
            DiscussedPaper(
                paper,
                (titles or {}).get(paper, ""),
                sum(s.weight for s in speakers),
                people,
                n_followed,
                n_friends,
                bots,
                why,
                tuple(speakers),
            )
        )
    ranked.sort(key=lambda d: (-d.score, -d.people, d.paper))
    return ranked


def _micros(moment: datetime) -> int:
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=UTC)
    return int(moment.timestamp() * 1_000_000)


def _graph(store: Store, reader: ReaderId) -> tuple[set[str], dict[str, set[str]]]:
    """Accounts of the scholars ``reader`` follows, and whom each of them follows."""
    followed = set(store.followed_accounts(reader))
    return followed, store.follows_of(sorted(followed))


def discussed_papers(
    store: Store,
    reader: ReaderId,
    since: datetime,
    *,
    limit: int = 30,
    bot_weight: float = 0.05,
) -> list[DiscussedPaper]:
    """The Discussed page: papers discussed on the network since ``since``, best first.

    Who counts as "you follow" is ``reader``'s scholars.

    Papers no person discusses (only bots) are left out.
    """
    rows = store.spoken_since(network().service, _micros(since), MAX_ROWS)
    followed, friends = _graph(store, reader)
    ranked = [
        d for d in rank_discussion(rows, followed, friends, bot_weight=bot_weight) if d.people
    ]
    ranked = ranked[:limit]
    return [
        replace(d, title=title, stub=stub)
        for d, (title, stub) in zip(
            ranked, titles_of(store, [d.paper for d in ranked]), strict=True
        )
    ]


def titles_of(store: Store, papers: Sequence[str]) -> list[tuple[str, bool]]:
    """Each paper's title, never empty, and whether it is a stub still.

    A stored paper has its own title; a stub (an arXiv paper known only by its
    id until the next refresh fetches it) the title of a post's link card
    naming it, else ``arXiv:ID``; a DOI or an OpenReview forum, its name.
    """
    arxiv = [p for p in papers if ":" not in p]
    known = store.papers_by_ids(arxiv)
    untitled = [p for p in arxiv if not (p in known and known[p].title)]
    cards = store.paper_cards(untitled) if untitled else {}
    found = []
    for paper in papers:
        if ":" in paper:
            found.append((paper, False))
        elif paper in known and known[paper].title:
            found.append((known[paper].title, False))
        else:
            card = cards.get(paper)
            found.append((card.title if card else f"arXiv:{paper}", True))
    return found


def discussion_of(
    store: Store,
    reader: ReaderId,
    arxiv_ids: Sequence[str],
    since: datetime,
    *,
    bot_weight: float = 0.05,
) -> dict[str, DiscussedPaper]:
    """The same counts for given papers (the feed's "N people discuss it")."""
    wanted = set(arxiv_ids)
    if not wanted:
        return {}
    rows = store.spoken_about(network().service, sorted(wanted), _micros(since))
    if not rows:
        return {}
    followed, friends = _graph(store, reader)
    return {d.paper: d for d in rank_discussion(rows, followed, friends, bot_weight=bot_weight)}


@dataclass(frozen=True, slots=True)
class SecondOrder:
    """A network post about a paper through an article about it: the chain a story shows."""

    did: str
    handle: str
    post_url: str | None
    created_at: str | None
    #: The article as the listener named it (``Source’s “Title”``), its item and address.
    via: str
    item_id: int | None
    article_url: str | None

    def to_json(self) -> dict[str, Any]:
        return {
            "did": self.did,
            "handle": self.handle or None,
            "post": self.post_url,
            "created_at": self.created_at,
            "via": self.via,
            "item_id": self.item_id,
            "article": self.article_url,
        }


def second_order_of(store: Store, arxiv_id: str, limit: int = 50) -> list[SecondOrder]:
    """Posts that named ``arxiv_id`` only by linking an article about it, newest first,
    each with the article it came through (bots left out)."""
    posts = network()
    rows = [
        r
        for r in store.network_mentions_of(posts.service, arxiv_id, limit * 4)
        if r.method == "via-article" and not r.bot
    ][:limit]
    if not rows:
        return []
    articles: dict[str, tuple[int | None, str | None]] = {}
    for label, number, address in store.articles_about(arxiv_id):
        articles.setdefault(label, (number, address))
    found = []
    for row in rows:
        item_id, url = articles.get(row.evidence, (None, None))
        link = posts.post_url(row.uri, row.handle)
        via = row.evidence or "an article"
        found.append(SecondOrder(row.did, row.handle, link, row.created_at, via, item_id, url))
    return found
