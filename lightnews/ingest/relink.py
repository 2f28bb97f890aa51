"""Relinking: links by title made again when a new version changes a paper's title.

The store queues retitled papers (:mod:`lightnews.store.relink`); each page
stored runs a round first (:func:`~lightnews.ingest.page.store_page`), so the
library's links by title always read its titles as they are now.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import partial

from lightnews.errors import UsageError
from lightnews.link import link_titles
from lightnews.model import Item, QueryTerm
from lightnews.store import Store
from lightnews.store.relink import RELINKED_METHODS, Retitled

__all__ = [
    "RELINK_CANDIDATES",
    "RELINK_PAPERS",
    "RelinkReport",
    "relink_retitled",
]


#: Retitled papers one relinking round takes, and items a new title's words may find.
RELINK_PAPERS = 50

RELINK_CANDIDATES = 200


@dataclass(slots=True)
class RelinkReport:
    """What one relinking pass did: papers checked, items read, links dropped and made."""

    papers: int = 0
    items: int = 0
    unlinked: int = 0
    linked: int = 0


def relink_retitled(store: Store, *, bar: float, limit: int = RELINK_PAPERS) -> RelinkReport:
    """Links by title made again for papers whose title changed (``relink_queue``).

    A new version that changes a paper's title queues the paper (a trigger, as
    for re-embedding; :mod:`lightnews.store.relink`). Each item linked to it by
    title, and each item whose text holds the new title's telling words, is read
    by the one linker again (:func:`~lightnews.link.link_titles`) against the
    library as it is now: a mention whose text no longer names the paper, and
    names no other, is dropped; one that names another paper now is linked to
    it; one that still names it records the new version; an item naming the new
    title is linked. Reading happens outside the write transaction (it reads the
    library's titles); the rewrite of each item's links by title and the
    queue's removal are one short transaction per round. Costs a one-row
    lookup when no title changed.
    """
    report = RelinkReport()
    while queued := store.retitled_papers(limit):
        items = dict(store.title_linked_items([p.paper_id for p in queued]))
        found: set[int] = set()
        for paper in queued:
            terms = _telling_terms(paper.title)
            if not terms:
                continue
            try:
                found.update(m.item_id for m in store.search_items(terms, RELINK_CANDIDATES))
            except UsageError:
                continue  # a search too expensive here: the links by title are still checked
        items.update(store.items_to_relink(sorted(found - set(items))))
        for item in items.values():
            item.mentions = [m for m in item.mentions if m.method not in RELINKED_METHODS]
        link_titles(list(items.values()), store, bar=bar)
        # One transaction, run again whole if PostgreSQL gives it up (a deadlock).
        unlinked, linked = store.write(partial(_write_links, store, items, queued))
        report.unlinked += unlinked
        report.linked += linked
        report.papers += len(queued)
        report.items += len(items)
    return report


def _write_links(
    store: Store, items: dict[int, Item], queued: Sequence[Retitled]
) -> tuple[int, int]:
    """The items' title links replaced and the papers marked relinked: (unlinked, linked)."""
    unlinked = linked = 0
    for item_id, item in sorted(items.items()):
        removed, added = store.replace_title_links(item_id, item.mentions)
        unlinked += removed
        linked += added
    store.relinked([p.paper_id for p in queued])
    return unlinked, linked


def _telling_terms(title: str) -> list[QueryTerm]:
    """The longest words of a title (up to three), each a term a text naming it must hold."""
    words = sorted(
        {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z0-9]{3,}", title)},
        key=lambda w: (-len(w), w),
    )
    return [QueryTerm(w) for w in words[:3]]
