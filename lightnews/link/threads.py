"""Threads: a scholar's chain of replies to themself read as one unit, in order.

A self-thread ("🧵1/9 … 9/9", "[1/10] … [10/10]", or unnumbered replies to
self) is a root post plus replies whose root and parent are by the same
author. It is ordered root first by following parent links; where a parent
is missing (the feed did not carry it, and it could not be fetched) the
thread keeps a *gap* in its place, and numbering markers place the pieces
that hang below a gap. Everything any post of the thread links to is the
thread's.

Works on :class:`~lightnews.model.Item` objects, from a parse or from the
store alike; pure, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field

from lightnews.model import Item

__all__ = ["Thread", "assemble_threads", "author_of", "numbering"]

_NUMBER_RE = re.compile(r"(?:^|[\s\[(🧵])(\d{1,3})\s*/\s*(\d{1,3})?(?=$|[\s\])🧵.,:])")


def numbering(text: str) -> tuple[int, int | None] | None:
    """The "n/m" marker of a thread post (``🧵1/9``, ``[3/10]``, ``2/``), if any."""
    for match in _NUMBER_RE.finditer(text or ""):
        number, total = int(match[1]), int(match[2]) if match[2] else None
        if number >= 1 and (total is None or number <= total):
            return number, total
    return None


def author_of(key: str | None, known: dict[str, Item]) -> str | None:
    """Who wrote the item with ``key``: from the AT URI authority, else from the item itself."""
    if not key:
        return None
    if key.startswith("at://"):
        return key[5:].split("/", 1)[0]
    item = known.get(key)
    return item.account if item else None


@dataclass(slots=True)
class Thread:
    """One unit of a feed: a single post, or a self-thread in order with its gaps.

    ``entries`` holds the items in reading order, ``None`` where a post is
    missing; ``gaps`` are the keys of the missing parents.
    """

    root: str
    account: str | None
    entries: list[Item | None] = field(default_factory=list)
    gaps: list[str] = field(default_factory=list)

    @property
    def items(self) -> list[Item]:
        return [e for e in self.entries if e is not None]

    @property
    def size(self) -> int:
        return len(self.entries)

    @property
    def latest(self) -> str:
        return max((i.published or "" for i in self.items), default="")

    def links(self) -> list[str]:
        return list(dict.fromkeys(link for i in self.items for link in i.links))


def _is_self_reply(item: Item, known: dict[str, Item]) -> bool:
    if not item.thread_root or not item.reply_parent or not item.account:
        return False
    return (author_of(item.thread_root, known) == item.account
            and author_of(item.reply_parent, known) == item.account)  # fmt: skip


def assemble_threads(items: Sequence[Item]) -> list[Thread]:
    """Group items into threads (self-threads joined, everything else alone), newest first."""
    known = {i.key: i for i in items if i.kind == "post"}
    members: dict[str, list[Item]] = {}
    units: list[Thread] = []
    for item in items:
        if item.kind == "post" and _is_self_reply(item, known):
            members.setdefault(item.thread_root or "", []).append(item)
    roots_in_threads = set(members)
    for item in items:
        if item.kind == "post" and _is_self_reply(item, known):
            continue
        if item.kind == "post" and item.key in roots_in_threads:
            continue  # placed with its thread below
        units.append(Thread(item.key, item.account, [item]))
    for root_key, replies in members.items():
        units.append(_order(root_key, known.get(root_key), replies))
    units.sort(key=lambda t: t.latest, reverse=True)
    return units


def _order(root_key: str, root: Item | None, replies: list[Item]) -> Thread:
    """Root first, then each chain of replies by parent links; gaps where parents are missing."""
    present = {r.key for r in replies} | ({root_key} if root else set())
    children: dict[str, list[Item]] = {}
    for reply in replies:
        children.setdefault(reply.reply_parent or "", []).append(reply)
    for siblings in children.values():
        siblings.sort(key=lambda i: i.published or "")

    def chain(start: Item) -> list[Item]:
        out, seen, stack = [], set(), [start]
        while stack:
            node = stack.pop()
            if node.key in seen:
                continue
            seen.add(node.key)
            out.append(node)
            stack.extend(reversed(children.get(node.key, [])))
        return out

    thread = Thread(root_key, root.account if root else replies[0].account)
    pieces: list[tuple[tuple[int, str], list[Item | None], str | None]] = []
    if root is not None:
        pieces.append(((0, ""), list(chain(root)), None))
    else:
        thread.gaps.append(root_key)
        pieces.append(((0, ""), [None], root_key))
    for parent, orphans in children.items():
        if parent in present:
            continue
        for orphan in orphans:
            marker = numbering(orphan.text)
            rank = (marker[0] if marker else 10_000, orphan.published or "")
            if parent != root_key:
                thread.gaps.append(parent)
                pieces.append((rank, [None, *chain(orphan)], parent))
            else:
                pieces.append((rank, list(chain(orphan)), None))
    pieces.sort(key=lambda p: p[0])
    for _, entries, _ in pieces:
        thread.entries.extend(entries)
    return thread
