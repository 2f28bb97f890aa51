"""Threads: a scholar's chain of replies to themself, read as one unit, in order.

A self-thread ("🧵1/9 … 9/9", "[1/10] … [10/10]", or unnumbered replies to
self) is a root post plus replies whose root and parent are by the same
author. It is ordered root first by following parent links. Where a parent is
missing (the feed did not carry it and it could not be fetched) the thread
keeps a *gap* in its place, and the numbers authors write place the pieces
that hang below gaps. Everything any post of the thread links to is the
thread's.

Works on :class:`~lightnews.model.Item` objects from a parse or from the
store alike; pure, no I/O. Authors are read from the AT URI authority
(``at://DID/...``), so a missing post's author is known too.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass, field

from lightnews.model import Item
from lightnews.sources.bluesky_protocol import author_of, is_self_reply, item_uri

__all__ = [
    "Thread",
    "assemble_threads",
    "author_of",
    "is_self_reply",
    "item_uri",
    "thread_number",
]

_NUMBERING = (
    re.compile(r"🧵\s*(\d{1,3})\s*/\s*(\d{1,3})?"),
    re.compile(r"(?<![\w/.])(\d{1,3})\s*/\s*(\d{1,3})?\s*🧵"),
    re.compile(r"[\[(]\s*(\d{1,3})\s*/\s*(\d{1,3})?\s*[\])]"),
    re.compile(r"^\s*(\d{1,3})\s*/\s*(\d{1,3})?(?=\s|$)"),
    re.compile(r"(?<![\w/.:])(\d{1,3})\s*/\s*(\d{1,3})?[^\w/]*$"),
)


def thread_number(text: str) -> tuple[int, int | None] | None:
    """The position a thread post gives itself: ``🧵3/9``, ``[3/10]``, ``3/`` -> ``(3, 9)``."""
    for pattern in _NUMBERING:
        for match in pattern.finditer(text or ""):
            number = int(match[1])
            total = int(match[2]) if match[2] else None
            if number >= 1 and (total is None or number <= total):
                return number, total
    return None


@dataclass(slots=True)
class Thread:
    """A self-thread, root first. ``entries`` holds ``None`` where a post is missing.

    ``root_key`` is the root post's URI (known even when the root itself is
    missing); ``gaps`` are the URIs of the missing parents, in thread order;
    ``author`` is the author's DID.
    """

    root_key: str
    author: str
    entries: list[Item | None] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)

    @property
    def items(self) -> list[Item]:
        return [e for e in self.entries if e is not None]

    @property
    def complete(self) -> bool:
        return not self.gaps

    @property
    def latest(self) -> str:
        return max((i.published or "" for i in self.items), default="")

    def links(self) -> list[str]:
        """Everything any post of the thread links to, once, in order."""
        return list(dict.fromkeys(link for i in self.items for link in i.links))


def _order_key(item: Item) -> tuple[int, str]:
    number = thread_number(item.text)
    return (number[0] if number else 1 << 20, item.published or "")


def _segment(head: Item, children: dict[str, list[Item]]) -> list[Item]:
    """``head`` and every post below it, depth first, siblings by number then time."""
    ordered: list[Item] = []
    stack, seen = [head], set()
    while stack:
        item = stack.pop()
        if item_uri(item) in seen:
            continue
        seen.add(item_uri(item))
        ordered.append(item)
        stack.extend(sorted(children.get(item_uri(item), []), key=_order_key, reverse=True))
    return ordered


def _estimated_position(segment: list[Item]) -> int | None:
    for offset, item in enumerate(segment):
        number = thread_number(item.text)
        if number:
            return number[0] - offset
    return None


def assemble_threads(items: Iterable[Item]) -> list[Thread]:
    """Group self-threads root first, with a gap where a parent is missing; newest first.

    Where parents are missing, the pieces are put in order by the numbers their
    authors wrote when every piece has one, else by time. Reposts and replies
    to other people are not part of any thread.
    """
    posts: dict[str, Item] = {}
    for item in items:
        if item.kind == "post":
            posts.setdefault(item_uri(item), item)
    groups: dict[tuple[str, str], list[Item]] = {}
    for item in posts.values():
        if is_self_reply(item) and item.thread_root:
            groups.setdefault((author_of(item.thread_root), item.thread_root), []).append(item)
    threads = []
    for (author, root_uri), replies in groups.items():
        root = posts.get(root_uri)
        member_uris = {item_uri(m) for m in replies} | ({root_uri} if root else set())
        children: dict[str, list[Item]] = {}
        heads = []
        for reply in replies:
            if reply.reply_parent in member_uris:
                children.setdefault(reply.reply_parent or "", []).append(reply)
            else:
                heads.append(reply)
        segments = [_segment(h, children) for h in heads]
        positions = [_estimated_position(s) for s in segments]
        if all(p is not None for p in positions):
            order = sorted(
                range(len(segments)),
                key=lambda n: (positions[n] or 0, segments[n][0].published or ""),
            )
        else:
            order = sorted(range(len(segments)), key=lambda n: segments[n][0].published or "")
        thread = Thread(root_uri, author)
        if root is not None:
            thread.entries.extend(_segment(root, children))
        for n in order:
            parent = segments[n][0].reply_parent
            if parent and parent not in posts and parent not in thread.gaps:
                thread.gaps.append(parent)
                thread.entries.append(None)
            elif parent == root_uri and root is None and root_uri not in thread.gaps:
                thread.gaps.append(root_uri)
                thread.entries.append(None)
            thread.entries.extend(segments[n])
        placed = {item_uri(i) for i in thread.items}
        # Replies whose parent links go round in a circle (broken data) go last, by time.
        for reply in sorted(replies, key=lambda i: i.published or ""):
            if item_uri(reply) not in placed:
                segment = _segment(reply, children)
                placed.update(item_uri(i) for i in segment)
                thread.entries.extend(segment)
        threads.append(thread)
    threads.sort(key=lambda t: t.latest, reverse=True)
    return threads
