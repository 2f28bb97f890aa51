"""Bots and mirrors: accounts that repost arXiv listings rather than speak.

About a fifth of the accounts that post arXiv links are automated: they post
every new listing of a category, or only repost such feeds. Their posts are
kept (they still link papers to stories) but marked, so that ranking weighs
them little as a scholar signal. An account is a bot when it says so, or when
nearly everything it posts is a listing: an arXiv link with the paper's title
and little else, or a repost of one.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Protocol

from rapidfuzz import fuzz

from lightnews.model import Item
from lightnews.normalize.identifiers import find_arxiv_mentions

__all__ = ["Profile", "bot_reason", "is_listing"]

_SELF_DESCRIBED = re.compile(
    r"\b(?:bot|automated|auto-?post(?:s|ed|ing)?|mirror(?:s|ing)?|unofficial feed|"
    r"(?:posts?|feed of|tracks?) (?:every |all )?(?:new )?(?:arxiv|papers)|rss)\b",
    re.I,
)
_CATEGORY_TAG = re.compile(r"\[?\b(?:cs|stat|math|eess|q-bio|physics|astro-ph)\.[A-Z]{2}\b\]?")
_URL = re.compile(r"\S+\.\S+/\S*|https?://\S+")
MIN_POSTS = 5
SHARE = 0.8


def is_listing(item: Item) -> bool:
    """A post that only announces a paper: its link plus its title, category or authors."""
    if not find_arxiv_mentions([*item.links, item.text]):
        return False
    rest = _URL.sub(" ", item.text)
    rest = _CATEGORY_TAG.sub(" ", rest)
    words = rest.split()
    if _CATEGORY_TAG.search(item.text):
        return True
    title = item.post.card.title if item.post and item.post.card else ""
    if title and fuzz.partial_ratio(title.lower(), " ".join(words).lower()) >= 90:
        return len(words) <= len(title.split()) + 25
    return len(words) <= 3


class Profile(Protocol):
    """What an account says about itself (a stored account or a parsed one)."""

    @property
    def name(self) -> str: ...

    @property
    def handle(self) -> str: ...

    @property
    def description(self) -> str: ...


def bot_reason(account: Profile, items: Sequence[Item]) -> str | None:
    """Why this account looks automated, or None for a person."""
    about = " ".join((account.name, account.handle, account.description))
    if _SELF_DESCRIBED.search(about.replace(".bsky.social", "")):
        return "describes itself as automated"
    if len(items) < MIN_POSTS:
        return None
    reposts = [i for i in items if i.kind == "repost"]
    own = [i for i in items if i.kind == "post"]
    listings = sum(1 for i in own if is_listing(i))
    if own and len(own) >= MIN_POSTS and listings / len(own) >= SHARE:
        return f"{listings} of its {len(own)} posts only announce arXiv listings"
    if len(reposts) / len(items) >= 0.9:
        repost_listings = sum(1 for i in reposts if is_listing(i))
        if repost_listings / len(reposts) >= SHARE:
            return "only reposts arXiv listings"
    return None
