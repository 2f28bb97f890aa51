"""Store: what both backends' full-text search shares (filters, windows, hits' details).

Each backend matches words its own way (SQLite's FTS5 in
:mod:`lightnews.store.sqlite_search`, PostgreSQL's ``tsvector`` in
:mod:`lightnews.store.pg_search`); the rest is written once here: the SQL a
search's filters add, the window a very common query is ranked within, the
words left out of a query, the details search results show, and the
candidates' surnames that linking by title reads.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lightnews.model import SearchFilters
from lightnews.store.connection import Queries
from lightnews.store.views import SaidItem, TitleCandidate

__all__ = ["ITEM_UNIT", "SEARCH_WINDOW", "STOPWORDS", "SearchQueries"]

#: Words nearly every paper has: a query leaves them out when it has other words.
STOPWORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the their "
    "this to via was we were which with".split()
)
#: Most matches a query ranks by relevance (see ``search_papers``).
SEARCH_WINDOW = 5000
#: What an item search shows once (``ItemMatch.unit``): a post's conversation, an
#: article's or note's address.
ITEM_UNIT = (
    "CASE WHEN i.kind = 'post' THEN COALESCE(i.thread_root, i.key) ELSE COALESCE(i.url, i.key) END"
)


class SearchQueries(Queries):
    """Search filters, the details of hits, and title candidates' surnames."""

    def paper_count(self) -> int:
        """About how many papers the library has, instantly (for word weights and display).

        The highest row id: it counts stubs and deleted rows too, but costs
        nothing, where an exact count reads the whole table (seconds at a
        million papers, on every linking or related-papers call).
        """
        return int(self.db.execute("SELECT max(id) FROM papers").fetchone()[0] or 0)

    def said_items(self, item_ids: Sequence[int]) -> dict[int, SaidItem]:
        """The posts, articles and notes ``item_ids`` as search results show them."""
        if not item_ids:
            return {}
        rows = self.db.execute(
            "SELECT i.id, i.kind, i.title, i.text, i.url, i.author, "
            "COALESCE(i.published, i.first_seen) AS published, s.kind AS source_kind, "
            # The thread's posts: those naming its root, and the root itself, counted as two
            # lookups (an OR of the two would read every post of the source).
            "COALESCE(s.title, s.address) AS source, CASE WHEN i.kind = 'post' THEN ("
            "(SELECT count(*) FROM items t WHERE t.thread_root = COALESCE(i.thread_root, i.key) "
            "AND t.kind = 'post' AND t.source_id = i.source_id) + "
            "(SELECT count(*) FROM items t WHERE t.key = COALESCE(i.thread_root, i.key) "
            "AND t.kind = 'post' AND t.source_id = i.source_id AND (t.thread_root IS NULL "
            "OR t.thread_root <> COALESCE(i.thread_root, i.key)))) ELSE 0 END AS thread_posts, "
            "i.published IS NOT NULL AS dated "
            f"FROM items i JOIN sources s ON s.id = i.source_id WHERE {self.sql.in_list('i.id')}",
            (self.sql.list_param(item_ids),),
        )
        return {
            r[0]: SaidItem(r[0], r[1], r[2], r[3], r[4], r[5], r[6], r[7], r[8], r[9], bool(r[10]))
            for r in rows
        }

    @staticmethod
    def _item_filters(filters: SearchFilters | None) -> tuple[str, list[Any]]:
        """SQL narrowing items (``i``) by date, scholar and source kind (a subject does
        not apply to items: :func:`lightnews.search.search_papers` leaves them out)."""
        if not filters:
            return "", []
        clauses: list[str] = []
        args: list[Any] = []
        if filters.since:
            clauses.append("COALESCE(i.published, i.first_seen) >= ?")
            args.append(filters.since)
        if filters.until:
            clauses.append("COALESCE(i.published, i.first_seen) <= ?")
            args.append(filters.until + ("T23:59:59Z" if len(filters.until) == 10 else ""))
        if filters.scholar_id is not None:
            clauses.append(
                "(i.account IN (SELECT value FROM identities WHERE scholar_id = ? "
                "AND kind LIKE '%-did') OR i.source_id IN "
                "(SELECT id FROM sources WHERE scholar_id = ?))"
            )
            args += [filters.scholar_id, filters.scholar_id]
        if filters.source_kind:
            clauses.append("i.source_id IN (SELECT id FROM sources WHERE kind = ?)")
            args.append(filters.source_kind)
        return "".join(f"AND {c} " for c in clauses), args

    @staticmethod
    def _search_filters(filters: SearchFilters | None) -> tuple[str, list[Any]]:
        if not filters:
            return "", []
        clauses: list[str] = []
        args: list[Any] = []
        if filters.subject:
            subject = filters.subject.strip()
            clauses.append("(' ' || p.categories || ' ') LIKE ?")
            args.append(f"% {subject} %" if "." in subject else f"% {subject}%")
        if filters.since:
            clauses.append("p.published >= ?")
            args.append(filters.since)
        if filters.until:
            clauses.append("p.published <= ?")
            args.append(filters.until + ("T23:59:59Z" if len(filters.until) == 10 else ""))
        if filters.scholar_id is not None:
            clauses.append("p.id IN (SELECT paper_id FROM authorships WHERE scholar_id = ?)")
            args.append(filters.scholar_id)
        if filters.source_kind:
            clauses.append(
                "p.id IN (SELECT i.paper_id FROM items i JOIN sources s ON s.id = i.source_id "
                "WHERE s.kind = ? AND i.paper_id IS NOT NULL UNION SELECT m.paper_id FROM "
                "mentions m JOIN items i ON i.id = m.item_id JOIN sources s "
                "ON s.id = i.source_id WHERE s.kind = ?)"
            )
            args += [filters.source_kind, filters.source_kind]
        return "".join(f"AND {c} " for c in clauses), args

    def _with_surnames(self, rows: Sequence[Any]) -> list[TitleCandidate]:
        """Title candidates from rows (id, arxiv_id, title, published) with authors' surnames."""
        if not rows:
            return []
        surnames: dict[int, list[str]] = {}
        for paper_id, key in self.db.execute(
            f"SELECT paper_id, name_key FROM authorships WHERE {self.sql.in_list('paper_id')} "
            "ORDER BY paper_id, position",
            (self.sql.list_param(int(r["id"]) for r in rows),),
        ):
            surnames.setdefault(paper_id, []).append(key)
        return [
            TitleCandidate(
                r["arxiv_id"], r["title"], tuple(surnames.get(r["id"], ())), r["published"]
            )
            for r in rows
        ]

    def filtered_paper_ids(self, filters: SearchFilters, cap: int) -> list[int] | None:
        """Ids of the papers ``filters`` allow, or None when more than ``cap`` do."""
        where, args = self._search_filters(filters)
        rows = self.db.execute(
            f"SELECT p.id FROM papers p WHERE TRUE {where}LIMIT ?", (*args, cap + 1)
        ).fetchall()
        if len(rows) > cap:
            return None
        return [int(r[0]) for r in rows]
