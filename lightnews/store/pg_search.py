"""Store: full-text search on PostgreSQL, by a ``tsvector`` column and its GIN index.

Papers and items carry a ``search`` column that the server fills (title A,
authors B, abstract C, with the ``lightnews`` text search configuration);
queries are built term by term (:func:`tsquery_sql`), each term its own
parameter, so no user text is read as query syntax. Ranks follow SQLite's
(title over authors over abstract; BM25 for titles linking asks about), so
both backends answer alike. What the two searches share is
:mod:`lightnews.store.search_common`.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any

from lightnews.model import QueryTerm, SearchFilters
from lightnews.store import search_common  # SEARCH_WINDOW read at each call (tests narrow it)
from lightnews.store.pg_connection import PgConnection, PostgresQueries
from lightnews.store.search_common import ITEM_UNIT, STOPWORDS, SearchQueries
from lightnews.store.views import ItemMatch, PaperHit, TitleCandidate

__all__ = ["DOC_FREQ_CAP", "RANK_WEIGHTS", "PostgresSearch", "tsquery_sql"]

#: Most matches a word's document frequency counts (see ``title_doc_freq``).
DOC_FREQ_CAP = 50_000
#: Weights of ts_rank for the tsvector's D, C, B, A parts (abstract C, authors B,
#: title A), as the SQLite index weighs abstract 1, authors 3, title 10.
RANK_WEIGHTS = "{0, 0.1, 0.3, 1.0}"


def tsquery_sql(terms: Sequence[QueryTerm]) -> tuple[str, list[str]] | None:
    """The SQL of a tsquery for neutral query terms, and its parameters.

    Every term becomes its own parameter (phrases as ``phraseto_tsquery``,
    prefixes as quoted ``'word':*`` lexemes), so no user text is ever read
    as tsquery syntax.
    """
    positive = [t for t in terms if not t.exclude]
    telling = [t for t in positive if t.words.lower() not in STOPWORDS or t.prefix]
    wanted = list(dict.fromkeys(telling or positive))
    if not wanted:
        return None
    parts: list[str] = []
    args: list[str] = []
    for term in [*wanted, *dict.fromkeys(t for t in terms if t.exclude)]:
        if term.prefix:
            words = term.words.split()
            lexemes = ["'" + w.replace("'", "''").replace("\\", "") + "'" for w in words]
            lexemes[-1] += ":*"
            sql = "to_tsquery('lightnews', ?)"
            args.append(" <-> ".join(lexemes))
        else:
            sql = "phraseto_tsquery('lightnews', ?)"
            args.append(term.words)
        parts.append(f"!!{sql}" if term.exclude else sql)
    return "(" + " && ".join(parts) + ")", args


@contextmanager
def _bitmap_scans(db: PgConnection) -> Iterator[None]:
    """Plain index scans off on this connection meanwhile: the planner would read the
    primary key backwards testing every paper's words (it does not price ``@@``),
    520 ms against 86 ms for the GIN index and the key together (docs/benchmarks.md)."""
    local = db.in_transaction
    db.execute(f"SET {'LOCAL ' if local else ''}enable_indexscan = off")
    try:
        yield
    finally:
        if not local and not db.conn.closed:
            with suppress(Exception):  # a broken connection is not taken again
                db.execute("RESET enable_indexscan")


class PostgresSearch(PostgresQueries, SearchQueries):
    """Papers and items by their words (``tsvector``), and word counts for linking."""

    def search_papers(
        self,
        terms: Sequence[QueryTerm],
        limit: int,
        offset: int = 0,
        filters: SearchFilters | None = None,
    ) -> list[PaperHit]:
        """Papers matching all terms, best first: title over authors over abstract.

        As on SQLite, a query with more than ``SEARCH_WINDOW`` matches and no
        filter ranks the most recently added ``SEARCH_WINDOW`` of them. That
        window is found from the newest paper back, by id ranges
        (:meth:`_windowed_search`), not by reading every match.
        """
        query = tsquery_sql(terms)
        if query is None:
            return []
        tsquery, args = query
        where, filter_args = self._search_filters(filters)
        if not where:
            return self._windowed_search(tsquery, args, limit, offset, search_common.SEARCH_WINDOW)
        rows = self.db.execute(
            "SELECT p.arxiv_id, p.title, p.published, p.primary_category, "
            f"ts_rank('{RANK_WEIGHTS}', p.search, {tsquery}) AS score FROM papers p "
            f"WHERE p.search @@ {tsquery} {where}ORDER BY score DESC, p.id DESC LIMIT ? OFFSET ?",
            (*args, *args, *filter_args, limit, offset),
        )
        return [PaperHit(**r) for r in rows]

    def _windowed_search(
        self, tsquery: str, args: Sequence[str], limit: int, offset: int, window: int
    ) -> list[PaperHit]:
        """The newest ``window`` matches of ``tsquery``, ranked; the same answer as
        ranking ``ORDER BY id DESC LIMIT window`` of every match, read far less.

        That plain query reads every match from the table to find the newest
        ``window`` (48,910 rows for "model" at 60,000 papers) before ranking
        them. Here each attempt asks only for matches above an id (``id > lo``:
        a bitmap of the GIN index and the primary key together, so only those
        matches are read from the table), ranks them as it reads (so no full-text vector is sorted
        or read twice) and counts them: when the attempt holds ``window``
        matches, every newer match is in it, so its newest ``window`` are the
        window. The first span is what the planner's estimate of the matches
        says holds the window (a quarter more); when an attempt falls short,
        the span grows by the density it saw, until it covers the whole
        library (then no id bound at all: exactly the plain query).
        """
        db = self.db
        bounds = db.execute("SELECT min(id), max(id) FROM papers").fetchone()
        if bounds[1] is None:
            return []
        low, high = int(bounds[0]), int(bounds[1])
        # The first span from the planner's estimate of the matches (its statistics of
        # words), so that one attempt is enough for most queries.
        plan = db.execute(
            f"EXPLAIN (FORMAT JSON) SELECT 1 FROM papers p WHERE p.search @@ {tsquery}", args
        ).fetchone()[0]
        estimate = max(float(plan[0]["Plan"]["Plan Rows"]), 1.0)
        span = max(2 * window, int(1.25 * window * (high - low + 1) / estimate))
        with _bitmap_scans(db):
            while True:
                bounded = high - span >= low
                edge = "AND p.id > ? " if bounded else ""
                rows = db.execute(
                    "WITH m AS (SELECT p.id, p.arxiv_id, p.title, p.published, p.primary_category, "
                    f"ts_rank('{RANK_WEIGHTS}', p.search, {tsquery}) AS score FROM papers p "
                    f"WHERE p.search @@ {tsquery} {edge}ORDER BY p.id DESC LIMIT ?) "
                    "SELECT m.arxiv_id, m.title, m.published, m.primary_category, m.score, "
                    "count(*) OVER () AS found FROM m "
                    "ORDER BY m.score DESC, m.id DESC LIMIT ? OFFSET ?",
                    (*args, *args, *([high - span] if bounded else []), window, limit, offset),
                ).fetchall()
                found = int(rows[0][5]) if rows else 0
                if not bounded or found >= window:
                    return [PaperHit(r[0], r[1], r[2], r[3], float(r[4])) for r in rows]
                # Grow by the density seen, a quarter more so that the next try fills it.
                span = int(span * min(max(2.0, 1.25 * window / found if found else 64.0), 64.0))

    def search_items(
        self, terms: Sequence[QueryTerm], limit: int, filters: SearchFilters | None = None
    ) -> list[ItemMatch]:
        """Posts, articles and notes matching all terms, best first: title over text.

        As on SQLite, a query with more than ``SEARCH_WINDOW`` matches and no
        filter ranks the most recently stored ``SEARCH_WINDOW`` of them.
        """
        query = tsquery_sql(terms)
        if query is None:
            return []
        tsquery, args = query
        where, filter_args = self._item_filters(filters)
        window = "" if where else f"ORDER BY i.id DESC LIMIT {search_common.SEARCH_WINDOW}"
        rows = self.db.execute(
            "WITH q AS (SELECT " + tsquery + " AS q), m AS ("
            f"SELECT i.id, i.kind, {ITEM_UNIT} AS unit, i.search "
            f"FROM items i, q WHERE i.search @@ q.q {where}{window}) "
            f"SELECT m.id, m.kind, m.unit, ts_rank('{RANK_WEIGHTS}', m.search, q.q) AS score "
            "FROM m, q ORDER BY score DESC, m.id DESC LIMIT ?",
            (*args, *filter_args, limit),
        )
        return [ItemMatch(r[0], r[1], r[2], r[3]) for r in rows]

    def related_candidates(self, words: Sequence[str], exclude: str, limit: int) -> list[PaperHit]:
        """Papers sharing the most of ``words`` (any of them), best first, without ``exclude``."""
        unique = [w for w in dict.fromkeys(words) if w]
        if not unique:
            return []
        parts = " || ".join("phraseto_tsquery('lightnews', ?)" for _ in unique)
        rows = self.db.execute(
            f"WITH q AS (SELECT {parts} AS q) "
            "SELECT p.arxiv_id, p.title, p.published, p.primary_category, "
            "ts_rank('{0, 0.2, 0, 1.0}', p.search, q.q) AS score FROM papers p, q "
            "WHERE p.search @@ q.q AND p.arxiv_id != ? ORDER BY score DESC LIMIT ?",
            (*unique, exclude, limit),
        )
        return [PaperHit(**r) for r in rows]

    def title_candidates(
        self, words: Sequence[str], limit: int, surname: str | None = None
    ) -> list[TitleCandidate]:
        """Papers whose titles share the most telling of ``words``.

        Ranked as SQLite ranks them (FTS5's BM25 over the title column alone):
        each title word found counts by its rarity among whole papers (title,
        authors, abstract; a word common in abstracts but rare in titles, such as
        "noise", counts little there too), scaled down for a long title.
        ts_rank has no notion of rarity, and a title of one common word would
        otherwise come first.
        """
        unique = [w for w in dict.fromkeys(words) if w and w.strip("'\\")]
        if not unique:
            return []
        lexemes = ["'" + w.replace("'", "''").replace("\\", "") + "':A" for w in unique]
        total = max(self.paper_count(), 1)
        weights = []
        for lexeme in lexemes:
            found = self._title_freq(lexeme.removesuffix(":A"))  # in any part of a paper
            weights.append(max(math.log((total - found + 0.5) / (found + 0.5)), 1e-6))
        one = "to_tsquery('lightnews', ?)"
        any_word = " || ".join(one for _ in lexemes)
        # BM25 with k1 = 1.2, b = 0.75 and the title weighted 10 (as SQLiteStore asks
        # bm25(papers_fts, 10.0, 0.0, 0.0)), each title word found once.
        length = "cardinality(regexp_split_to_array(btrim(p.title), '[^[:alnum:]]+'))"
        norm = f"22.0 / (10.0 + 1.2 * (0.25 + 0.75 * {length} / {self._title_length(total):.4f}))"
        found_words = " + ".join(
            f"CASE WHEN p.search @@ {one} THEN {w:.6f} ELSE 0 END" for w in weights
        )
        score = f"({found_words}) * {norm}"
        surname_filter = (
            "AND p.id IN (SELECT paper_id FROM authorships WHERE name_key = ?) " if surname else ""
        )
        rows = self.db.execute(
            "SELECT p.id, p.arxiv_id, p.title, p.published FROM papers p "
            f"WHERE p.search @@ ({any_word}) "
            f"{surname_filter}ORDER BY ({score}) DESC, p.id DESC LIMIT ?",
            (*lexemes, *([surname] if surname else []), *lexemes, limit),
        ).fetchall()
        return self._with_surnames(rows)

    def _title_length(self, total: int) -> float:
        """The mean number of words in a title (over a sample), read again as the library grows."""
        known: tuple[int, float] | None = self.__dict__.get("_mean_title_length")
        if known is None or not known[0] <= total <= known[0] * 1.05 + 100:
            row = self.db.execute(
                "SELECT avg(cardinality(regexp_split_to_array(btrim(title), '[^[:alnum:]]+'))) "
                "FROM (SELECT title FROM papers WHERE title <> '' LIMIT 20000) AS sample"
            ).fetchone()
            known = (total, max(float(row[0] or 10.0), 1.0))
            self.__dict__["_mean_title_length"] = known
        return known[1]

    def _title_freq(self, lexeme: str) -> int:
        """How many papers have this word (a tsquery lexeme), counting to ``DOC_FREQ_CAP``."""
        cache: dict[str, int] = self.__dict__.setdefault("_title_freqs", {})
        known = cache.get(lexeme)
        if known is None:
            row = self.db.execute(
                "SELECT count(*) FROM (SELECT 1 FROM papers WHERE search @@ "
                "to_tsquery('lightnews', ?) LIMIT ?) AS found",
                (lexeme, DOC_FREQ_CAP),
            ).fetchone()
            known = int(row[0])
            if len(cache) > 50_000:
                cache.clear()
            cache[lexeme] = known
        return known

    def title_doc_freq(self, stem: str) -> int:
        """How many papers use this (Porter-stemmed) word; counting stops at ``DOC_FREQ_CAP``."""
        lexeme = "'" + stem.replace("'", "''").replace("\\", "") + "'"
        row = self.db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM papers WHERE search @@ "
            "to_tsquery('lightnews', ?) LIMIT ?) AS found",
            (lexeme, DOC_FREQ_CAP),
        ).fetchone()
        return int(row[0])

    def word_doc_freq(self, word: str, cap: int) -> int:
        row = self.db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM papers WHERE search @@ "
            "phraseto_tsquery('lightnews', ?) LIMIT ?) AS found",
            (word, cap),
        ).fetchone()
        return int(row[0])

    def papers_by_rowids(
        self,
        paper_ids: Sequence[int],
        filters: SearchFilters | None = None,
        excluded: Sequence[QueryTerm] = (),
    ) -> dict[int, PaperHit]:
        where, args = self._search_filters(filters)
        sql = (
            "SELECT p.id, p.arxiv_id, p.title, p.published, p.primary_category FROM papers p "
            f"WHERE {self.sql.in_list('p.id')} {where}"
        )
        params: list[Any] = [self.sql.list_param(int(i) for i in paper_ids), *args]
        if excluded:
            query = tsquery_sql([QueryTerm(t.words, t.prefix) for t in excluded])
            if query is not None:
                tsquery, more = query
                sql += "AND NOT p.search @@ " + tsquery.replace(" && ", " || ")
                params += more
        return {int(r[0]): PaperHit(r[1], r[2], r[3], r[4]) for r in self.db.execute(sql, params)}
