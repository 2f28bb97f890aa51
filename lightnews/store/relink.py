"""Store: papers whose title changed, and the items whose links by title must be checked again.

A link by title (a mention whose method is one of :data:`TITLE_METHODS`)
names the title of the version it was linked against
(``mentions.paper_version``). When a new version changes a paper's title, the
link may now be wrong (the post named the old title, and the new one is
another's) and posts naming the new title are not linked yet. The same
mechanism that re-embeds a changed paper keeps track of it: a trigger on the
title fills ``relink_queue`` (migration 0019 / PostgreSQL 0010) as
``embed_queue`` is filled for vectors, and the linking pass
(:func:`lightnews.ingest.relink.relink_retitled`) takes its work from there, so a
library whose titles do not change pays nothing.

These reads rebuild the stored items as :class:`~lightnews.model.Item` objects,
so the one linker (:func:`lightnews.link.link_titles`) judges them again the
way it judged them at ingestion; :meth:`RelinkQueries.replace_title_links`
writes back what it found.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from lightnews.model import Item, Mention, read_extra
from lightnews.store.connection import Queries

__all__ = ["RELINKED_METHODS", "TITLE_METHODS", "RelinkQueries", "Retitled"]

#: How a mention linked by a paper's title was found (lightnews.link.titles and link).
TITLE_METHODS = ("exact-title", "fuzzy-title", "surname-title", "url-title")
#: What a relinking pass rewrites: links by title, and DOI links the same linker makes.
RELINKED_METHODS = (*TITLE_METHODS, "doi")


@dataclass(frozen=True, slots=True)
class Retitled:
    """A paper whose title changed since its links by title were made."""

    paper_id: int
    arxiv_id: str
    title: str
    old_title: str


class RelinkQueries(Queries):
    """The queue of retitled papers and the items linked to them by title."""

    def retitled_papers(self, limit: int) -> list[Retitled]:
        """Papers waiting for their links by title to be checked, in id order."""
        rows = self.db.execute(
            "SELECT q.paper_id, p.arxiv_id, p.title, q.old_title FROM relink_queue q "
            "JOIN papers p ON p.id = q.paper_id ORDER BY q.paper_id LIMIT ?",
            (limit,),
        )
        return [Retitled(int(r[0]), r[1], r[2], r[3]) for r in rows]

    def title_linked_items(self, paper_ids: Sequence[int]) -> list[tuple[int, Item]]:
        """``(item id, item)`` of every item linked to one of ``paper_ids`` by title."""
        if not paper_ids:
            return []
        methods = ", ".join(f"'{m}'" for m in TITLE_METHODS)
        rows = self.db.execute(
            f"SELECT DISTINCT item_id FROM mentions WHERE {self.sql.in_list('paper_id')} "
            f"AND method IN ({methods}) ORDER BY item_id",
            (self.sql.list_param(int(i) for i in paper_ids),),
        )
        return self.items_to_relink([int(r[0]) for r in rows])

    def items_to_relink(self, item_ids: Sequence[int]) -> list[tuple[int, Item]]:
        """Stored items as the linker reads them: their text, links, kind details and the
        mentions they hold now."""
        if not item_ids:
            return []
        ids = self.sql.list_param(int(i) for i in item_ids)
        rows = self.db.execute(
            "SELECT i.id, i.key, i.kind, i.title, i.text, i.links, i.published, i.extra, "
            "(SELECT arxiv_id FROM papers WHERE id = i.paper_id) AS record_of "
            f"FROM items i WHERE {self.sql.in_list('i.id')} ORDER BY i.id",
            (ids,),
        ).fetchall()
        mentions: dict[int, list[Mention]] = {}
        for row in self.db.execute(
            "SELECT m.item_id, p.arxiv_id, m.method, m.confidence, m.evidence FROM mentions m "
            f"JOIN papers p ON p.id = m.paper_id WHERE {self.sql.in_list('m.item_id')} "
            "ORDER BY m.item_id, p.arxiv_id",
            (ids,),
        ):
            mentions.setdefault(int(row[0]), []).append(
                Mention(row[1], row[2], float(row[3]), row[4])
            )
        found = []
        for row in rows:
            extra: dict[str, Any] = orjson.loads(row[7] or "{}")
            post, daily, note, record = read_extra(row[2], extra)
            item = Item(
                key=row[1],
                kind=row[2],
                title=row[3],
                text=row[4],
                links=list(orjson.loads(row[5] or "[]")),
                published=row[6],
                post=post,
                daily=daily,
                note=note,
                record=record,
                paper_id=row[8],
                mentions=mentions.get(int(row[0]), []),
            )
            found.append((int(row[0]), item))
        return found

    def replace_title_links(self, item_id: int, mentions: Sequence[Mention]) -> tuple[int, int]:
        """Replace an item's links by title (and by DOI) with ``mentions``; the others stay.

        A mention of a paper the item already names another way (its arXiv id)
        leaves that link as it is. Each written link records the paper's
        current version. Returns ``(links removed, links added)``: a link kept
        counts as neither. Runs in the caller's transaction.
        """
        methods = ", ".join(f"'{m}'" for m in RELINKED_METHODS)
        linked = (
            "SELECT p.arxiv_id FROM mentions m JOIN papers p ON p.id = m.paper_id "
            f"WHERE m.item_id = ? AND m.method IN ({methods})"
        )
        before = {r[0] for r in self.db.execute(linked, (item_id,))}
        self.db.execute(
            f"DELETE FROM mentions WHERE item_id = ? AND method IN ({methods})", (item_id,)
        )
        wanted = [m for m in mentions if m.method in RELINKED_METHODS]
        self.db.executemany(
            "INSERT INTO mentions (item_id, paper_id, method, confidence, evidence, "
            "paper_version) SELECT ?, id, ?, ?, ?, latest_version FROM papers "
            "WHERE arxiv_id = ? ON CONFLICT (item_id, paper_id) DO NOTHING",
            [(item_id, m.method, m.confidence, m.evidence, m.arxiv_id) for m in wanted],
        )
        after = {r[0] for r in self.db.execute(linked, (item_id,))}
        return len(before - after), len(after - before)

    def relinked(self, paper_ids: Sequence[int]) -> None:
        """Take papers off the queue: their links by title are checked."""
        self.db.executemany(
            "DELETE FROM relink_queue WHERE paper_id = ?", [(int(i),) for i in paper_ids]
        )
