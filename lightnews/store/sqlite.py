"""The SQLite store: every database read and write of the personal setup.

One file, WAL mode, versioned migrations (``migrations/NNNN_*.sql``, tracked
in ``PRAGMA user_version``), FTS5 indexes kept in step by triggers. This
module holds what is SQLite's own: connections and their pragmas, the write
lock and its waiting, migrations, time budgets, and new papers' FTS5 rows
(held back during a bulk import, :meth:`SQLiteStore.bulk_import`);
full-text search is :mod:`lightnews.store.sqlite_search`. The queries both
backends share are :class:`~lightnews.store.common.CommonStore`'s, the base
of this store and of its sibling, :class:`~lightnews.store.postgres.PostgresStore`.

Concurrency: every thread gets a connection of its own (a web server's
threads read side by side; WAL readers never wait for the writer). A write
transaction (``BEGIN IMMEDIATE``) waits for another writer at most
``write_wait`` seconds, polling often so that a long writer's commit is not
missed, then gives up with :class:`~lightnews.errors.Busy`. A waiting writer
says so by stamping a file beside the database (``<db>-writers``), so that a
long writer (a bulk import) can commit early for it
(:meth:`SQLiteStore.writers_waiting`); a writer that held the lock for long,
or knows that someone waited, pauses a moment after its commit so that the
waiting writer gets its turn. Reads can be given a time budget (:meth:`SQLiteStore.time_budget`).
"""

from __future__ import annotations

import os
import sqlite3
import threading
import time
from collections.abc import Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Any

from lightnews.errors import Busy, TooExpensive, Unavailable
from lightnews.model import QueryTerm, SearchFilters
from lightnews.store.common import WALL_FACTOR, WRITE_WAIT, CommonStore, read_migrations
from lightnews.store.dialect import SQLITE, Dialect
from lightnews.store.merge import PAPER_COLUMNS
from lightnews.store.sqlite_search import SQLiteSearch
from lightnews.store.views import SaveResult

__all__ = [
    "BACKEND_ERRORS",
    "WALL_FACTOR",
    "WRITE_WAIT",
    "SQLiteStore",
    "unavailable",
]

#: How often a waiting writer tries again, at most (seconds): shorter than the pause a
#: long writer makes after committing (``_YIELD_PAUSE``), so the waiter gets its turn.
_POLL_MAX = 0.005
#: A writer that held the lock longer than ``_YIELD_AFTER`` seconds sleeps
#: ``_YIELD_PAUSE`` after its commit before it may write again.
_YIELD_AFTER = 0.5
_YIELD_PAUSE = 0.05
#: A writer that keeps waiting stamps ``<db>-writers`` again this often (seconds), so a
#: transaction opened after its first stamp still sees that it waits.
_STAMP_EVERY = 0.1
#: What statements other than BEGIN wait on a lock (rare in WAL mode: recovery).
_BUSY_TIMEOUT_MS = 5000
#: Page cache of the first connection (imports, refreshes), and of the others (the web
#: server's threads: the operating system caches the file for all of them), in KiB.
_CACHE_KIB = (65536, 16384)
#: Bytes of the write-ahead log file kept after a checkpoint has reset it.
_WAL_KEEP_BYTES = 64 * 1024 * 1024
#: New papers' full-text rows a bulk import holds back before writing them (about 1.5 kB
#: each): see :meth:`SQLiteStore.bulk_import`.
_HELD_TEXT_MAX = 10_000
_INSERT_TEXT = "INSERT INTO papers_fts (rowid, title, authors, abstract) VALUES (?, ?, ?, ?)"
#: The exceptions this backend raises; :func:`unavailable` explains them to a user.
BACKEND_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error,)

_INSERT_PAPER = (
    f"INSERT INTO papers ({', '.join(PAPER_COLUMNS)}, first_seen, modified) "
    f"VALUES ({', '.join('?' * (len(PAPER_COLUMNS) + 2))})"
)
_INSERT_AUTHORSHIP = (
    "INSERT INTO authorships (paper_id, position, name, name_key, keyname, forenames, "
    "affiliations) VALUES (?, ?, ?, ?, ?, ?, ?)"
)


def _is_busy(error: BaseException) -> bool:
    message = str(error).lower()
    return isinstance(error, sqlite3.OperationalError) and (
        "locked" in message or "busy" in message
    )


def unavailable(error: Exception) -> Unavailable:
    """A backend error as the situation a user can act on (:class:`Busy`: try again)."""
    if isinstance(error, Unavailable):
        return error
    if _is_busy(error):
        return Busy(
            "the database is busy: another Lightnews process (a refresh or an import) is "
            "writing to it; try again in a moment"
        )
    return Unavailable(f"the database could not carry this out: {error}")


class SQLiteStore(SQLiteSearch, CommonStore):
    """All reads and writes of one Lightnews SQLite database."""

    sql: Dialect = SQLITE
    #: Nearest vectors are found by a FAISS index beside the file (``lightnews.embed.index``).
    vectors_indexed = False

    def __init__(self, path: str | Path, *, write_wait: float = WRITE_WAIT) -> None:
        self.path = Path(path)
        self.write_wait = write_wait
        self.connection_wait = write_wait  # a file opens at once: nothing to wait for
        # An in-memory database exists once per connection: its threads share one.
        self._shared = str(path) == ":memory:"
        if not self._shared:
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()
        self._connections: dict[threading.Thread, sqlite3.Connection] = {}
        self._guard = threading.Lock()
        self._closed = False
        #: Stamped (its modification time) by a writer waiting for the lock.
        self._waiting = Path(f"{self.path}-writers")
        try:
            self.db.execute("PRAGMA journal_mode = WAL")
            self.migrate()
        except sqlite3.Error as error:
            self.close()
            raise unavailable(error) from None

    # -- lifecycle -------------------------------------------------------

    @property
    def db(self) -> sqlite3.Connection:
        """This thread's connection (made on first use; one per thread, closed with the store)."""
        db: sqlite3.Connection | None = getattr(self._local, "db", None)
        if db is not None and not db.in_transaction and self._replaced():
            # The file was replaced under us (a restore moved a copy over it): the old
            # connection would go on reading, and writing, a file no path leads to.
            with self._guard:
                self._connections.pop(threading.current_thread(), None)
            db.close()
            db = self._local.db = None
        if db is None:
            db = self._connect()
            self._local.db = db
            self._local.identity = self._identity()
        return db

    def _identity(self) -> tuple[int, int] | None:
        """The file's device and inode now; None for a shared in-memory database or a
        missing file (a deleted library keeps its connections rather than open an empty one)."""
        if self._shared:
            return None
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        return (stat.st_dev, stat.st_ino)

    def _replaced(self) -> bool:
        """Whether the path now leads to another file than this thread's connection opened."""
        now = self._identity()
        return now is not None and now != getattr(self._local, "identity", None)

    def _connect(self) -> sqlite3.Connection:
        with self._guard:
            if self._closed:
                raise Unavailable(f"the database {self.path} is closed")
            if self._shared and self._connections:
                return next(iter(self._connections.values()))
            for thread in [t for t in self._connections if not t.is_alive()]:
                self._connections.pop(thread).close()  # its thread has ended
            db = sqlite3.connect(str(self.path), isolation_level=None, check_same_thread=False)
            db.row_factory = sqlite3.Row
            db.execute("PRAGMA synchronous = NORMAL")
            db.execute("PRAGMA foreign_keys = ON")
            db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            db.execute(f"PRAGMA cache_size = -{_CACHE_KIB[bool(self._connections)]}")
            # The write-ahead log grows while readers keep a checkpoint from resetting it
            # (a gigabyte or two during a big merge beside a busy web server); once it
            # resets, the file is cut back to this size instead of keeping its peak.
            db.execute(f"PRAGMA journal_size_limit = {_WAL_KEEP_BYTES}")
            self._connections[threading.current_thread()] = db
            return db

    def close(self) -> None:
        """Close every thread's connection; the store cannot be used afterwards."""
        with self._guard:
            self._closed = True
            for db in self._connections.values():
                db.close()
            self._connections.clear()

    @staticmethod
    def _migrations() -> list[tuple[int, str, str]]:
        return read_migrations("migrations")

    @property
    def schema_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> list[str]:
        """Apply every migration newer than the database, each in its own transaction."""
        applied = []
        db = self.db
        for number, name, script in self._migrations():
            if number <= self.schema_version:
                continue
            # A script is run whole (triggers hold semicolons): its BEGIN waits for
            # another writer through the busy timeout rather than the polling of
            # ``transaction``.
            db.execute(f"PRAGMA busy_timeout = {int(self.write_wait * 1000)}")
            try:
                db.executescript(
                    f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version = {number};\nCOMMIT;"
                )
            except BaseException:
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
            finally:
                db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")
            applied.append(f"{number:04d}_{name}")
        return applied

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction; nested use joins the outer one.

        Opening it waits for another writer at most ``write_wait`` seconds, then
        raises :class:`Busy`; an error inside rolls everything back. Keep the
        work inside short (linking, parsing and embedding belong before it):
        every other writer of the library waits for it.
        """
        db = self.db
        if db.in_transaction:
            yield
            return
        self._begin(db)
        opened = time.monotonic()
        self._local.opened_ns = time.time_ns()
        try:
            yield
        except BaseException:
            self._drop_held_text()
            if db.in_transaction:  # some errors (a full disk) have rolled it back already
                db.execute("ROLLBACK")
            raise
        finally:
            waited = self.writers_waiting()
            self._local.opened_ns = None
        try:
            self._write_held_text()
            db.execute("COMMIT")
        except BaseException as error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            if isinstance(error, sqlite3.Error):
                raise unavailable(error) from None
            raise
        if waited or time.monotonic() - opened > _YIELD_AFTER:
            time.sleep(_YIELD_PAUSE)  # let writers that waited for us go first

    def writers_waiting(self) -> bool:
        """Whether another writer has waited for the lock since this thread's write
        transaction opened: a long writer commits at its next chance to let it in."""
        opened: int | None = getattr(self._local, "opened_ns", None)
        if opened is None or self._shared:
            return False
        try:
            return self._waiting.stat().st_mtime_ns > opened
        except OSError:
            return False

    def serialize(self, *keys: str) -> None:
        """Nothing to do: a write transaction here already holds the file's one write lock."""

    def workers_heard(self, within: float) -> int:
        """None: workers run on PostgreSQL only."""
        return 0

    def _stamp_waiting(self) -> None:
        """Tell the writer that holds the lock that this one waits (best effort)."""
        if self._shared:
            return
        now = time.time_ns()
        try:
            self._waiting.touch()
            os.utime(self._waiting, ns=(now, now))
        except OSError:
            pass  # a read-only directory: the holder commits on its own schedule

    def _begin(self, db: sqlite3.Connection) -> None:
        """``BEGIN IMMEDIATE``, tried again every few milliseconds until ``write_wait``.

        SQLite's own busy handler sleeps up to 100 ms between tries and so keeps
        missing the short gap between two transactions of a bulk writer; this
        loop tries often enough to get in.
        """
        deadline = time.monotonic() + self.write_wait
        pause = 0.0005
        stamped = 0.0
        db.execute("PRAGMA busy_timeout = 0")
        try:
            while True:
                try:
                    db.execute("BEGIN IMMEDIATE")
                    return
                except sqlite3.OperationalError as error:
                    now = time.monotonic()
                    left = deadline - now
                    if not _is_busy(error) or left <= 0:
                        raise unavailable(error) from None
                    if now - stamped >= _STAMP_EVERY:
                        self._stamp_waiting()
                        stamped = now
                    time.sleep(min(pause, left))
                    pause = min(pause * 2, _POLL_MAX)
        finally:
            db.execute(f"PRAGMA busy_timeout = {_BUSY_TIMEOUT_MS}")

    @contextmanager
    def bulk_import(self, expected: int, connections: int = 1) -> Iterator[SaveResult]:
        """A bulk import of about ``expected`` papers runs in this block: new papers'
        full-text rows are held back and written together (one file has one writer,
        whatever ``connections`` asks).

        FTS5 keeps the terms of the rows it is given in memory and writes them out
        as one segment of its index at the commit; but any statement that fires a
        trigger in the same transaction (inserting papers fires the embedding
        queue's) makes it write them out first. A bulk import inserts papers a
        chunk at a time (``WRITE_CHUNK``, 200), so its rows went out as one small
        segment per chunk, and FTS5 merged those segments again and again: the
        writer's work per record grew by a sixth when chunks went from 500 records
        to 200 (``docs/benchmarks.md``). Here they are written after a
        transaction's last papers, before its commit, or once ``_HELD_TEXT_MAX`` of
        them are waiting, and before any stored paper is rewritten (its triggers
        take the old row out of the full-text index, so it must be there).
        """
        self._local.held_text = []
        try:
            yield SaveResult()
        finally:
            self._local.held_text = None  # written at each commit, dropped at a rollback

    def repeated_reads(self) -> AbstractContextManager[None]:
        """Nothing to do: SQLite keeps its recent statements compiled on its own."""
        return nullcontext()

    @contextmanager
    def time_budget(self, seconds: float, what: str = "this query") -> Iterator[None]:
        """Reads in this block are stopped after ``seconds`` of CPU with :class:`TooExpensive`.

        SQLite reads in the calling thread, so the thread's CPU time is the
        read's own work: a search that waits for a CPU on a busy machine is
        not refused for it (the advice "narrow it" would be wrong), while one
        that really reads too much still is. Waiting has a ceiling too,
        ``WALL_FACTOR`` times the budget. SQLite calls a progress handler every
        few thousand virtual-machine steps and stops the statement when it
        says so (a PostgreSQL backend sets ``statement_timeout`` for the same
        budget).
        """
        db = self.db
        began = time.thread_time()
        spent_by = began + seconds
        wall_by = time.monotonic() + WALL_FACTOR * seconds
        db.set_progress_handler(
            lambda: time.thread_time() > spent_by or time.monotonic() > wall_by, 2000
        )
        try:
            yield
        except sqlite3.OperationalError as error:
            if "interrupted" not in str(error):
                raise
            raise TooExpensive(
                f"{what} needs more work than its time budget allows: narrow it (fewer or "
                "longer words, a subject, dates)"
            ) from None
        finally:
            db.set_progress_handler(None, 2000)
            self._local.budgeted = self.budget_clock() + time.thread_time() - began

    def budget_clock(self) -> float:
        """This thread's CPU inside :meth:`time_budget` blocks."""
        return float(getattr(self._local, "budgeted", 0.0))

    # -- papers: new ones with their FTS5 rows --------------------------------

    def _insert_papers(self, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
        """New papers and their full-text rows, in bulk (no per-row trigger); their row
        ids. In a bulk import the full-text rows are held back (:meth:`bulk_import`)."""
        self.db.executemany(_INSERT_PAPER, rows)
        ids = self._paper_ids([r[0] for r in rows])
        text = [(ids[r[0]], r[1], r[3], r[2]) for r in rows]
        held: list[tuple[Any, ...]] | None = getattr(self._local, "held_text", None)
        if held is None:
            self.db.executemany(_INSERT_TEXT, text)
        else:
            held.extend(text)
            if len(held) >= _HELD_TEXT_MAX:
                self._write_held_text()
        return ids

    def _merge_papers(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Stored papers rewritten; the full-text rows held back first, since the
        update triggers take the old row out of the full-text index."""
        self._write_held_text()
        super()._merge_papers(rows)

    def _write_held_text(self) -> None:
        """Write the full-text rows :meth:`bulk_import` holds back, in this transaction."""
        held: list[tuple[Any, ...]] | None = getattr(self._local, "held_text", None)
        if held:
            self._local.held_text = []  # dropped even if writing them fails
            self.db.executemany(_INSERT_TEXT, held)

    def _drop_held_text(self) -> None:
        """Forget the held full-text rows of a transaction rolled back."""
        if getattr(self._local, "held_text", None):
            self._local.held_text = []

    def _save_authorships(
        self, papers: Sequence[tuple[int, Sequence[Sequence[Any]]]], *, stale: bool
    ) -> None:
        """Authorship rows by paper row id; ``stale``: replace the ones stored before."""
        if not papers:
            return
        if stale:
            self.db.executemany(
                "DELETE FROM authorships WHERE paper_id = ?", [(i,) for i, _ in papers]
            )
        self.db.executemany(_INSERT_AUTHORSHIP, [(i, *row) for i, rows in papers for row in rows])

    # -- vectors: the index is FAISS's, beside the file ----------------------------

    def ensure_vector_index(self, model: str, dim: int, memory_mb: int | None = None) -> bool:
        """Nothing to build in the database here (the FAISS index beside the file is
        ``lightnews.embed.index``'s); see ``PostgresStore.ensure_vector_index``."""
        return False

    @contextmanager
    def vectors_in_bulk(
        self, model: str, dim: int, expected: int, memory_mb: int | None = None
    ) -> Iterator[None]:
        """Nothing to set aside here; see ``PostgresStore.vectors_in_bulk``."""
        yield

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
        """The ``k`` papers nearest ``vector`` as ``(paper id, cosine)``, nearest first.

        Only for a backend whose :attr:`vectors_indexed` is true.
        """
        raise NotImplementedError("this backend keeps its vector index beside the database")
