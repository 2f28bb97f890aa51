"""Store: full-text search on SQLite, by its FTS5 indexes.

Papers are indexed in ``papers_fts`` (title, authors, abstract, ranked by
BM25 with the title weighted 10, authors 3, abstract 1) and items in
``items_fts`` (title over text). Every user's term is quoted
(:func:`~lightnews.store.fts.quoted`), so no query is a syntax error. What
the two backends' searches share (filters, the window of a very common
query) is :mod:`lightnews.store.search_common`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from lightnews.model import QueryTerm, SearchFilters
from lightnews.store import search_common  # SEARCH_WINDOW read at each call (tests narrow it)
from lightnews.store.fts import quoted
from lightnews.store.search_common import ITEM_UNIT, STOPWORDS, SearchQueries
from lightnews.store.views import ItemMatch, PaperHit, TitleCandidate

__all__ = ["SQLiteSearch"]


class SQLiteSearch(SearchQueries):
    """Papers and items by their words (FTS5), and word counts for linking."""

    @staticmethod
    def _fts_expression(terms: Sequence[QueryTerm]) -> str | None:
        """FTS5 syntax for neutral query terms: every term quoted, so never a syntax error."""
        positive = [t for t in terms if not t.exclude]
        # Words nearly every paper has ("of", "for") make an AND query scan whole
        # postings lists and change no result: left out when other words remain.
        telling = [t for t in positive if t.words.lower() not in STOPWORDS or t.prefix]
        # A term given twice is read twice by FTS5 (``a* a* a*``): once is enough.
        wanted = list(dict.fromkeys(quoted(t) for t in (telling or positive)))
        if not wanted:
            return None
        excluded = dict.fromkeys(quoted(t) for t in terms if t.exclude)
        return " ".join(wanted) + "".join(f" NOT {term}" for term in excluded)

    def search_papers(
        self,
        terms: Sequence[QueryTerm],
        limit: int,
        offset: int = 0,
        filters: SearchFilters | None = None,
    ) -> list[PaperHit]:
        """Papers matching all terms, best first: title weighted over authors over abstract.

        Ranking every match of a very common word ("model" matches most of a
        million papers) costs time in proportion to the matches, so a query
        with more than ``SEARCH_WINDOW`` matches ranks the most recently added
        ``SEARCH_WINDOW`` of them: FTS5 finds that window by rowid in a
        fraction of a millisecond and scores only inside it. For news that is
        the right trade; narrower queries are ranked over all their matches.
        """
        match = self._fts_expression(terms)
        if match is None:
            return []
        where, args = self._search_filters(filters)
        floor = 0
        if not where:  # filters narrow the matches themselves: no window then
            edge = self.db.execute(
                "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (match, search_common.SEARCH_WINDOW),
            ).fetchone()
            floor = edge[0] if edge else 0
        if not where:
            # Rank inside the index and join only the page's papers.
            rows = self.db.execute(
                "SELECT p.arxiv_id, p.title, p.published, p.primary_category, top.score FROM ("
                "SELECT rowid, -bm25(papers_fts, 10.0, 3.0, 1.0) AS score FROM papers_fts "
                "WHERE papers_fts MATCH ? AND rowid > ? "
                "ORDER BY bm25(papers_fts, 10.0, 3.0, 1.0) LIMIT ? OFFSET ?) AS top "
                "JOIN papers p ON p.id = top.rowid ORDER BY top.score DESC",
                (match, floor, limit, offset),
            )
            return [PaperHit(**r) for r in rows]
        rows = self.db.execute(
            "SELECT p.arxiv_id, p.title, p.published, p.primary_category, "
            "-bm25(papers_fts, 10.0, 3.0, 1.0) AS score FROM papers_fts "
            "JOIN papers p ON p.id = papers_fts.rowid "
            f"WHERE papers_fts MATCH ? AND papers_fts.rowid > ? {where}"
            "ORDER BY bm25(papers_fts, 10.0, 3.0, 1.0) LIMIT ? OFFSET ?",
            (match, floor, *args, limit, offset),
        )
        return [PaperHit(**r) for r in rows]

    def related_candidates(self, words: Sequence[str], exclude: str, limit: int) -> list[PaperHit]:
        """Papers sharing the most of ``words`` (an OR query), best first, without ``exclude``."""
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words) if '"' not in w)
        if not match:
            return []
        rows = self.db.execute(
            "SELECT p.arxiv_id, p.title, p.published, p.primary_category, "
            "-bm25(papers_fts, 5.0, 0.0, 1.0) AS score FROM papers_fts "
            "JOIN papers p ON p.id = papers_fts.rowid WHERE papers_fts MATCH ? "
            "AND p.arxiv_id != ? ORDER BY bm25(papers_fts, 5.0, 0.0, 1.0) LIMIT ?",
            (match, exclude, limit),
        )
        return [PaperHit(**r) for r in rows]

    def search_items(
        self, terms: Sequence[QueryTerm], limit: int, filters: SearchFilters | None = None
    ) -> list[ItemMatch]:
        """Posts, articles and notes matching all terms, best first: title over text.

        Bounded as :meth:`search_papers` is: without filters, a query with more
        than ``SEARCH_WINDOW`` matches ranks the most recently stored of them.
        """
        match = self._fts_expression(terms)
        if match is None:
            return []
        where, args = self._item_filters(filters)
        rank = "bm25(items_fts, 3.0, 1.0)"
        if not where:
            edge = self.db.execute(
                "SELECT rowid FROM items_fts WHERE items_fts MATCH ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (match, search_common.SEARCH_WINDOW),
            ).fetchone()
            rows = self.db.execute(
                f"SELECT i.id, i.kind, {ITEM_UNIT} AS unit, top.score FROM ("
                f"SELECT rowid, -{rank} AS score FROM items_fts "
                f"WHERE items_fts MATCH ? AND rowid > ? ORDER BY {rank} LIMIT ?) AS top "
                "JOIN items i ON i.id = top.rowid ORDER BY top.score DESC, i.id DESC",
                (match, edge[0] if edge else 0, limit),
            )
        else:
            rows = self.db.execute(
                f"SELECT i.id, i.kind, {ITEM_UNIT} AS unit, -{rank} AS score "
                "FROM items_fts JOIN items i ON i.id = items_fts.rowid "
                f"WHERE items_fts MATCH ? {where}ORDER BY {rank}, i.id DESC LIMIT ?",
                (match, *args, limit),
            )
        return [ItemMatch(r[0], r[1], r[2], r[3]) for r in rows]

    # -- title lookup (for lightnews.link.titles) ------------------------------------

    def title_candidates(
        self, words: Sequence[str], limit: int, surname: str | None = None
    ) -> list[TitleCandidate]:
        """Papers whose titles share the most telling of ``words`` (an OR query on titles)."""
        quoted = [f'"{w}"' for w in dict.fromkeys(words) if w and '"' not in w]
        if not quoted:
            return []
        match = "{title}: (" + " OR ".join(quoted) + ")"
        surname_filter = (
            "AND p.id IN (SELECT paper_id FROM authorships WHERE name_key = ?) " if surname else ""
        )
        args: list[Any] = [match]
        if surname:
            args.append(surname)
        args.append(limit)
        rows = self.db.execute(
            "SELECT p.id, p.arxiv_id, p.title, p.published FROM papers_fts "
            "JOIN papers p ON p.id = papers_fts.rowid WHERE papers_fts MATCH ? "
            f"{surname_filter}ORDER BY bm25(papers_fts, 10.0, 0.0, 0.0) LIMIT ?",
            args,
        ).fetchall()
        return self._with_surnames(rows)

    def title_doc_freq(self, stem: str) -> int:
        """How many papers use this (Porter-stemmed) word anywhere (title, authors, abstract)."""
        row = self.db.execute(
            "SELECT doc FROM papers_vocab WHERE term >= ? AND term <= ?", (stem, stem)
        ).fetchone()
        return int(row[0]) if row else 0

    def word_doc_freq(self, word: str, cap: int) -> int:
        """How many papers use ``word`` (as the index stems it); counting stops at ``cap``.

        A word in more than ``cap`` papers is common; how common no longer matters.
        """
        row = self.db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? LIMIT ?)",
            (quoted(QueryTerm(word)), cap),
        ).fetchone()
        return int(row[0])

    def papers_by_rowids(
        self,
        paper_ids: Sequence[int],
        filters: SearchFilters | None = None,
        excluded: Sequence[QueryTerm] = (),
    ) -> dict[int, PaperHit]:
        """Search hits of these papers that pass ``filters``, by paper id.

        Papers with any of the ``excluded`` terms are left out (a query's
        ``-word`` applied to hits found by meaning).
        """
        where, args = self._search_filters(filters)
        sql = (
            "SELECT p.id, p.arxiv_id, p.title, p.published, p.primary_category FROM papers p "
            f"WHERE {self.sql.in_list('p.id')} {where}"
        )
        params: list[Any] = [self.sql.list_param(int(i) for i in paper_ids), *args]
        if excluded:
            sql += "AND p.id NOT IN (SELECT rowid FROM papers_fts WHERE papers_fts MATCH ?)"
            params.append(" OR ".join(quoted(term) for term in excluded))
        return {int(r[0]): PaperHit(r[1], r[2], r[3], r[4]) for r in self.db.execute(sql, params)}
