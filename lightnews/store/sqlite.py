"""The SQLite store: every database read and write of the personal setup.

One file, WAL mode, versioned migrations (``migrations/NNNN_*.sql``, tracked
in ``PRAGMA user_version``), FTS5 indexes kept in step by triggers. SQL that
is specific to SQLite lives here and nowhere else, so a PostgreSQL backend can
implement the same methods without other packages changing.

Writes are idempotent: saving the same batch twice changes nothing, because
papers and items carry a content hash and rows are only rewritten when it
differs. How two records of one paper merge is decided without a database,
in :mod:`lightnews.store.merge`, so every backend keeps the same thing.

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
import re
import sqlite3
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from lightnews.errors import Busy, NotFound, TooExpensive, Unavailable, UsageError
from lightnews.model import (
    Batch,
    Item,
    Paper,
    QueryTerm,
    SearchFilters,
    SourceState,
    item_extra,
    read_extra,
)
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.normalize.identifiers import find_code_in_text
from lightnews.store.dialect import SQLITE, Dialect
from lightnews.store.digests import DigestQueries
from lightnews.store.downgrade import item_kept_reason
from lightnews.store.feedback import FeedbackQueries
from lightnews.store.fts import quoted
from lightnews.store.merge import (
    PAPER_COLUMNS,
    PreparedPaper,
    hash_values,
    is_stub,
    latest_by_id,
    merged_values,
    prepare_paper,
    to_json,
)
from lightnews.store.network import NetworkQueries, WatchQueries
from lightnews.store.readers import ReaderQueries
from lightnews.store.relink import RelinkQueries
from lightnews.store.revisions import Revision, changes_between
from lightnews.store.scholars import ScholarQueries
from lightnews.store.suggest import SuggestQueries
from lightnews.store.texts import TextQueries
from lightnews.store.vectors import VectorQueries
from lightnews.store.views import (
    CardPaper,
    CodeLink,
    FeedCandidate,
    ItemMatch,
    ItemView,
    NamedPaper,
    PaperAuthorship,
    PaperChange,
    PaperHit,
    PaperMention,
    PaperPage,
    PaperRecord,
    PaperSummary,
    SaidItem,
    SaveResult,
    SourceRow,
    TitleCandidate,
    VersionView,
)

__all__ = [
    "BACKEND_ERRORS",
    "WRITE_WAIT",
    "SQLiteStore",
    "SaveResult",
    "SourceRow",
    "unavailable",
]

_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the their "
    "this to via was we were which with".split()
)
#: Most matches a query ranks by relevance (see ``search_papers``).
SEARCH_WINDOW = 5000
#: What an item search shows once (``ItemMatch.unit``): a post's conversation, an
#: article's or note's address.
ITEM_UNIT = (
    "CASE WHEN i.kind = 'post' THEN COALESCE(i.thread_root, i.key) "
    "ELSE COALESCE(i.url, i.key) END"
)
#: Seconds a write waits for another writer before giving up (:class:`Busy`). Bulk
#: imports commit every few seconds (``lightnews.ingest.bulk``), refreshes page by page.
WRITE_WAIT = 30.0
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
#: A read under a time budget of N seconds of CPU also stops after this many times N
#: seconds of waiting (:meth:`SQLiteStore.time_budget`).
WALL_FACTOR = 4.0
#: What statements other than BEGIN wait on a lock (rare in WAL mode: recovery).
_BUSY_TIMEOUT_MS = 5000
#: A paper's columns as :meth:`SQLiteStore._summary` reads them, in its order.
_SUMMARY = (
    "arxiv_id, title, authors, primary_category, published, updated, latest_version, "
    "journal_ref, comments, doi, withdrawn"
)
#: Page cache of the first connection (imports, refreshes), and of the others (the web
#: server's threads: the operating system caches the file for all of them), in KiB.
_CACHE_KIB = (65536, 16384)
#: Bytes of the write-ahead log file kept after a checkpoint has reset it.
_WAL_KEEP_BYTES = 64 * 1024 * 1024
#: The exceptions this backend raises; :func:`unavailable` explains them to a user.
BACKEND_ERRORS: tuple[type[Exception], ...] = (sqlite3.Error,)


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


_UPSERT_PAPER = (
    f"INSERT INTO papers ({', '.join(PAPER_COLUMNS)}, first_seen, modified) "
    f"VALUES ({', '.join('?' * len(PAPER_COLUMNS))}, ?, ?) "
    "ON CONFLICT(arxiv_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in PAPER_COLUMNS[1:])
    + ", modified = excluded.modified "
    "WHERE papers.content_hash IS DISTINCT FROM excluded.content_hash"
)
_INSERT_PAPER = (
    f"INSERT INTO papers ({', '.join(PAPER_COLUMNS)}, first_seen, modified) "
    f"VALUES ({', '.join('?' * (len(PAPER_COLUMNS) + 2))})"
)
_INSERT_AUTHORSHIP = (
    "INSERT INTO authorships (paper_id, position, name, name_key, keyname, forenames, "
    "affiliations) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_ITEM_COLUMNS = (
    "kind", "title", "url", "author", "text", "html", "published", "updated", "links", "tags",
    "engagement", "extra", "payload", "account", "thread_root", "reply_parent",
)  # fmt: skip
_INSERT_ITEM = (
    f"INSERT INTO items ({', '.join(_ITEM_COLUMNS)}, source_id, key, paper_id, content_hash, "
    f"first_seen, modified) VALUES ({', '.join('?' * (len(_ITEM_COLUMNS) + 6))}) RETURNING id"
)
_UPDATE_ITEM = (
    f"UPDATE items SET {', '.join(c + ' = ?' for c in _ITEM_COLUMNS)}, paper_id = ?, "
    "content_hash = ?, modified = ? WHERE id = ?"
)
_AUTHORS = PAPER_COLUMNS.index("authors")
_NAME_KEY = 2  # in an authorship row of prepare_paper: position, name, name_key, ...
_UPDATED_COLUMN, _ABSTRACT_COLUMN, _COMMENTS_COLUMN = (
    PAPER_COLUMNS.index(c) for c in ("updated", "abstract", "comments")
)
#: What a revision keeps of a paper (lightnews.store.revisions): these paper columns.
_REVISION_COLUMNS = (
    "paper_id", "version", "title", "abstract", "authors", "comments", "categories",
    "journal_ref", "withdrawn", "seen_at",
)  # fmt: skip
_INSERT_REVISION = (
    f"INSERT INTO paper_revisions ({', '.join(_REVISION_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(_REVISION_COLUMNS))}) ON CONFLICT (paper_id, version)"
)
_TEXT_COLUMNS = ("title", "abstract", "authors", "comments", "categories", "journal_ref",
                 "withdrawn")  # fmt: skip


def _revision_rows(
    old: dict[str, Any], merged: Sequence[Any], now: str
) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """The stored text and the merged one as revision rows, when a version or the text moved."""
    new = dict(zip(PAPER_COLUMNS, merged, strict=False))
    moved = (new["latest_version"] or 0) > (old["latest_version"] or 0)
    if not moved and all(new[c] == old[c] for c in _TEXT_COLUMNS):
        return None
    before = (old["id"], old["latest_version"] or 1, *(old[c] for c in _TEXT_COLUMNS),
              old["modified"] or now)  # fmt: skip
    after = (old["id"], new["latest_version"] or 1, *(new[c] for c in _TEXT_COLUMNS), now)
    return before, after
_SOURCE_COLUMNS = (
    "id, kind, address, title, folder, scholar_id, params, etag, last_modified, cursor, "
    "resumption_token, state, created_at, last_attempt, last_success, last_error, "
    "last_error_at, error_count, next_attempt, enabled"
)


def text_code_links(values: Sequence[Sequence[Any]], now: str) -> list[tuple[str, str, str]]:
    """``(arxiv_id, url, first seen)`` of the repositories that papers' prepared values
    name in their abstract or comments, dated by the record's update date."""
    return [
        (v[0], url, v[_UPDATED_COLUMN] or now)
        for v in values
        if _may_name_code(v[_ABSTRACT_COLUMN], v[_COMMENTS_COLUMN])
        for url in find_code_in_text(f"{v[_ABSTRACT_COLUMN]} {v[_COMMENTS_COLUMN] or ''}")
    ]


_CODE_HOST_RE = re.compile(r"git(?:hub|lab)\.com", re.I)


def _may_name_code(abstract: str, comments: str | None) -> bool:
    """Whether a repository's host is named in the abstract or comments: the full search
    (a slow regular expression) runs only then. Looking for "git" alone let every
    "digit" and "legitimate" through, 3% of a snapshot's papers."""
    for text in (abstract, comments or ""):
        low = text.lower()
        if "github.com" in low or "gitlab.com" in low:
            return True
        # Outside ASCII the expression's case-blind match knows more letters than lower().
        if not low.isascii() and _CODE_HOST_RE.search(text):
            return True
    return False


def read_migrations(folder: str) -> list[tuple[int, str, str]]:
    """The migrations ``NNNN_name.sql`` in this package's ``folder``: (number, name, script)."""
    found = []
    for entry in (resources.files("lightnews.store") / folder).iterdir():
        match = re.match(r"(\d{4})_(\w+)\.sql$", entry.name)
        if match:
            found.append((int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found)


class SQLiteStore(
    ScholarQueries,
    ReaderQueries,
    VectorQueries,
    RelinkQueries,
    TextQueries,
    NetworkQueries,
    WatchQueries,
    DigestQueries,
    SuggestQueries,
    FeedbackQueries,
):
    """All reads and writes of one Lightnews SQLite database."""

    sql: Dialect = SQLITE

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
        if db is None:
            db = self._connect()
            self._local.db = db
        return db

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

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

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
            if db.in_transaction:  # some errors (a full disk) have rolled it back already
                db.execute("ROLLBACK")
            raise
        finally:
            waited = self.writers_waiting()
            self._local.opened_ns = None
        try:
            db.execute("COMMIT")
        except sqlite3.Error as error:
            if db.in_transaction:
                db.execute("ROLLBACK")
            raise unavailable(error) from None
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
        """A bulk import of about ``expected`` papers runs in this block (nothing to
        prepare on SQLite: its full-text index takes rows in batches already, and one
        file has one writer, whatever ``connections`` asks)."""
        yield SaveResult()

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
        spent_by = time.thread_time() + seconds
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

    def budget_clock(self) -> float:
        return time.thread_time()

    # -- settings ----------------------------------------------------------

    def saved_settings(self) -> dict[str, str]:
        return {r["name"]: r["value"] for r in self.db.execute("SELECT name, value FROM settings")}

    def save_setting(self, name: str, value: str | None) -> None:
        with self.transaction():
            if value is None:
                self.db.execute("DELETE FROM settings WHERE name = ?", (name,))
            else:
                self.db.execute(
                    "INSERT INTO settings (name, value) VALUES (?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                    (name, value),
                )

    # -- sources -----------------------------------------------------------

    @staticmethod
    def _source(row: sqlite3.Row) -> SourceRow:
        return SourceRow(
            id=row["id"],
            kind=row["kind"],
            address=row["address"],
            title=row["title"],
            folder=row["folder"],
            scholar_id=row["scholar_id"],
            params=orjson.loads(row["params"]),
            state=SourceState(
                etag=row["etag"],
                last_modified=row["last_modified"],
                cursor=row["cursor"],
                resumption_token=row["resumption_token"],
                extra=orjson.loads(row["state"]),
            ),
            created_at=row["created_at"],
            last_attempt=row["last_attempt"],
            last_success=row["last_success"],
            last_error=row["last_error"],
            last_error_at=row["last_error_at"],
            error_count=row["error_count"],
            next_attempt=row["next_attempt"],
            enabled=bool(row["enabled"]),
        )

    def add_source(
        self,
        kind: str,
        address: str,
        *,
        now: str,
        title: str | None = None,
        folder: str | None = None,
        params: dict[str, Any] | None = None,
        scholar_id: int | None = None,
    ) -> tuple[SourceRow, bool]:
        """Add a source; returns it and whether it is new (adding twice is harmless)."""
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO sources (kind, address, title, folder, params, scholar_id, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(kind, address) DO NOTHING",
                (kind, address, title, folder, to_json(params or {}), scholar_id, now),
            )
            created = cursor.rowcount == 1
            if not created and (title or folder):
                self.db.execute(
                    "UPDATE sources SET title = COALESCE(?, title), folder = COALESCE(?, folder)"
                    " WHERE kind = ? AND address = ?",
                    (title, folder, kind, address),
                )
        found = self.find_source(kind, address)
        assert found is not None
        return found, created

    def find_source(self, kind: str, address: str) -> SourceRow | None:
        row = self.db.execute(
            f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE kind = ? AND address = ?",
            (kind, address),
        ).fetchone()
        return self._source(row) if row else None

    def get_source(self, source_id: int) -> SourceRow:
        row = self.db.execute(
            f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE id = ?", (source_id,)
        ).fetchone()
        if row is None:
            raise NotFound(f"no source with id {source_id}")
        return self._source(row)

    def list_sources(self) -> list[SourceRow]:
        rows = self.db.execute(f"SELECT {_SOURCE_COLUMNS} FROM sources ORDER BY folder, id")
        return [self._source(r) for r in rows]

    def due_sources(self, now: str, kinds: Iterable[str] | None = None) -> list[SourceRow]:
        """Enabled sources whose next attempt has come (or that never ran)."""
        due = [
            s
            for s in self.list_sources()
            if s.enabled and (s.next_attempt is None or s.next_attempt <= now)
        ]
        if kinds is not None:
            wanted = set(kinds)
            due = [s for s in due if s.kind in wanted]
        return due

    def remove_source(self, source_id: int) -> SourceRow:
        """Remove a source and its items; the papers they recorded or mentioned stay."""
        source = self.get_source(source_id)
        with self.transaction():
            self.db.execute("DELETE FROM sources WHERE id = ?", (source_id,))
        return source

    def set_source_enabled(self, source_id: int, enabled: bool) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE sources SET enabled = ? WHERE id = ?", (int(enabled), source_id)
            )

    def set_source_title(self, source_id: int, title: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE sources SET title = ? WHERE id = ?", (title, source_id))

    def save_state(self, source_id: int, state: SourceState) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE sources SET etag = ?, last_modified = ?, cursor = ?, resumption_token = ?,"
                " state = ? WHERE id = ?",
                (
                    state.etag,
                    state.last_modified,
                    state.cursor,
                    state.resumption_token,
                    to_json(state.extra),
                    source_id,
                ),
            )

    def record_attempt(self, source_id: int, now: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE sources SET last_attempt = ? WHERE id = ?", (now, source_id))

    def record_success(
        self, source_id: int, now: str, next_attempt: str, *, clean: bool = True
    ) -> None:
        """A run that stored what it read; ``clean`` clears the error state."""
        with self.transaction():
            if clean:
                self.db.execute(
                    "UPDATE sources SET last_success = ?, error_count = 0, next_attempt = ?, "
                    "last_error = NULL WHERE id = ?",
                    (now, next_attempt, source_id),
                )
            else:
                self.db.execute(
                    "UPDATE sources SET last_success = ?, next_attempt = ? WHERE id = ?",
                    (now, next_attempt, source_id),
                )

    def record_failure(self, source_id: int, message: str, now: str, next_attempt: str) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE sources SET last_error = ?, last_error_at = ?, "
                "error_count = error_count + 1, next_attempt = ? WHERE id = ?",
                (message, now, next_attempt, source_id),
            )

    # -- papers --------------------------------------------------------------

    def _existing_papers(self, arxiv_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        # One statement whatever the number of ids (a JSON array): a list of "?" per
        # id would prepare, and cache, a new statement for every batch size.
        rows = self.db.execute(
            f"SELECT id, modified, {', '.join(PAPER_COLUMNS)} FROM papers "
            f"WHERE {self.sql.in_list('arxiv_id')}",
            (self.sql.list_param(arxiv_ids),),
        )
        return {row["arxiv_id"]: dict(row) for row in rows}

    def _stored_hashes(self, arxiv_ids: Sequence[str]) -> dict[str, str | None]:
        """Content hashes of the stored papers among ``arxiv_ids`` (None for a stub)."""
        rows = self.db.execute(
            "SELECT arxiv_id, content_hash FROM papers "
            f"WHERE {self.sql.in_list('arxiv_id')}",
            (self.sql.list_param(arxiv_ids),),
        )
        return {r[0]: r[1] for r in rows}

    def save_papers(self, papers: Sequence[Paper], now: str) -> SaveResult:
        """Insert or merge papers (and their authorships) in the current transaction."""
        return self.save_prepared([prepare_paper(p) for p in papers], now)

    def save_prepared(self, prepared: Sequence[PreparedPaper], now: str) -> SaveResult:
        """:meth:`save_papers` for papers already through :func:`prepare_paper`.

        Only the content hashes of the stored papers are looked up: a paper
        whose fresh values hash to the stored hash is what the merge would
        leave, so it is unchanged; new papers are inserted as prepared; only
        the rest fetch their stored row and go through the merge. The lookups
        are made inside the write transaction: another writer cannot add the
        same paper between them and the insert.
        """
        if not prepared:
            return SaveResult()
        with self.transaction():
            return self._save_prepared(prepared, now)

    def _save_prepared(self, prepared: Sequence[PreparedPaper], now: str) -> SaveResult:
        result = SaveResult()
        latest = latest_by_id(prepared)
        stored = self._stored_hashes(list(latest))
        existing = self._existing_papers(
            [
                arxiv_id
                for arxiv_id, (values, _) in latest.items()
                if arxiv_id in stored and not is_stub(values) and stored[arxiv_id] != values[-1]
            ]
        )
        fresh: list[tuple[Any, ...]] = []
        fresh_authors: list[Sequence[Sequence[Any]]] = []
        rows: list[tuple[Any, ...]] = []
        changed: list[tuple[int, Sequence[Sequence[Any]]]] = []
        stubs: list[tuple[str, str, str]] = []
        revised: list[tuple[tuple[Any, ...], tuple[Any, ...]]] = []
        for arxiv_id, (values, authorships) in latest.items():
            if is_stub(values):  # a stub never overwrites
                if arxiv_id not in stored:
                    stubs.append((arxiv_id, now, now))
                if stored.get(arxiv_id) is None:  # saved as a stub, or still one
                    result.stubs += 1
                else:
                    result.unchanged += 1
                continue
            old = existing.get(arxiv_id)
            if old is None:
                if arxiv_id in stored:  # the same hash as stored
                    result.unchanged += 1
                    continue
                fresh.append((*values, now, now))
                fresh_authors.append(authorships)
                result.papers_new += 1
                continue
            kept: list[str] = []
            merged = merged_values(values, old, kept)
            if kept:
                result.warnings.append(
                    f"{arxiv_id}: stored {' and '.join(kept)} kept: the new one is "
                    "the stored one cut short"
                )
            if merged is None:
                result.unchanged += 1
                continue
            rows.append((*merged, now, now))
            result.name_keys.update(a[_NAME_KEY] for a in authorships)
            if old["content_hash"] is not None:
                snapshots = _revision_rows(old, merged, now)
                if snapshots:
                    revised.append(snapshots)
            if merged[_AUTHORS] == values[_AUTHORS] and authorships:
                changed.append((old["id"], authorships))  # its author list is now stored
            if old["content_hash"] is None:
                result.papers_new += 1
            else:
                result.papers_updated += 1
        if stubs:
            self.db.executemany(
                "INSERT INTO papers (arxiv_id, first_seen, modified) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                stubs,
            )
        result.name_keys.update({a[_NAME_KEY] for rows in fresh_authors for a in rows})
        handed_on = bool(fresh) and self._insert_fresh(fresh, fresh_authors, now)
        if rows:
            self.db.executemany(_UPSERT_PAPER, rows)
        if changed:
            self._save_authorships(changed, stale=True)
        linked = [v for v, _ in latest.values()]
        if handed_on:  # their code links go in with them
            new_ids = {r[0] for r in fresh}
            linked = [v for v in linked if v[0] not in new_ids]
        self._save_text_code_links(linked, now)
        if revised:
            # The text before (kept as first seen for its version) and after (its version's
            # newest text): see lightnews.store.revisions.
            self.db.executemany(_INSERT_REVISION + " DO NOTHING", [r[0] for r in revised])
            self.db.executemany(
                _INSERT_REVISION + " DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in _REVISION_COLUMNS[2:]),
                [r[1] for r in revised],
            )
        return result

    def _insert_fresh(
        self, fresh: Sequence[tuple[Any, ...]], authors: Sequence[Sequence[Sequence[Any]]], now: str
    ) -> bool:
        """New papers (their rows and authorship rows, in the same order), in this
        transaction; whether their code links were saved too (a backend that hands
        them to other connections saves those there, since the papers are not yet
        visible here)."""
        ids = self._insert_papers(fresh)
        self._save_authorships(
            [(ids[r[0]], a) for r, a in zip(fresh, authors, strict=True) if a], stale=False
        )
        return False

    def _save_text_code_links(self, values: Sequence[Sequence[Any]], now: str) -> None:
        """Repositories a paper's abstract or comments name become its code links.

        A link first seen is dated by the version that brought it (the record's
        update date), so code added in a later version is "released after the paper".
        """
        found = text_code_links(values, now)
        if not found:
            return
        ids = self._paper_ids(sorted({f[0] for f in found}))
        self.db.executemany(
            "INSERT INTO paper_links (paper_id, kind, url, item_id, first_seen) "
            "VALUES (?, 'code', ?, NULL, ?) ON CONFLICT DO NOTHING",
            [(ids[a], url, when) for a, url, when in found if a in ids],
        )

    def _insert_papers(self, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
        """New papers and their full-text rows, in bulk (no per-row trigger); their row ids."""
        self.db.executemany(_INSERT_PAPER, rows)
        ids = self._paper_ids([r[0] for r in rows])
        self.db.executemany(
            "INSERT INTO papers_fts (rowid, title, authors, abstract) VALUES (?, ?, ?, ?)",
            [(ids[r[0]], r[1], r[3], r[2]) for r in rows],
        )
        return ids

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

    def _paper_ids(self, arxiv_ids: Sequence[str]) -> dict[str, int]:
        rows = self.db.execute(
            f"SELECT arxiv_id, id FROM papers WHERE {self.sql.in_list('arxiv_id')}",
            (self.sql.list_param(arxiv_ids),),
        )
        return {r[0]: r[1] for r in rows}

    # -- items and mentions ------------------------------------------------------

    @staticmethod
    def _item_values(item: Item) -> list[Any]:
        """Values of ``_ITEM_COLUMNS`` for ``item``."""
        return [
            item.kind, item.title, item.url, item.author, item.text, item.html, item.published,
            item.updated, to_json(item.links), to_json(item.tags), to_json(item.engagement),
            to_json(item_extra(item)), item.payload, item.account, item.thread_root,
            item.reply_parent,
        ]  # fmt: skip

    def save_batch(self, source_id: int, batch: Batch, now: str) -> SaveResult:
        """Store everything one parsed response carried, in one transaction."""
        with self.transaction():
            result = self.save_papers(batch.papers, now)
            result.add(
                self.save_items(source_id, batch.items, now, well_formed=batch.well_formed)
            )
        return result

    def save_items(
        self, source_id: int, items: Sequence[Item], now: str, *, well_formed: bool = True
    ) -> SaveResult:
        """Insert new items, rewrite changed ones, leave identical ones untouched.

        A changed item is not rewritten when the fresh copy is worse (read from
        a document that was not well-formed, or its text cut short): see
        :func:`~lightnews.store.downgrade.item_kept_reason`; the reason is a warning.
        """
        result = SaveResult()
        if not items:
            return result
        with self.transaction():
            wanted = {m.arxiv_id for i in items for m in i.mentions}
            wanted.update(i.paper_id for i in items if i.paper_id)
            self.save_papers([Paper(arxiv_id=a) for a in sorted(wanted)], now)
            paper_ids = self._paper_ids(sorted(wanted))
            for item in items:
                values = self._item_values(item)
                mentions = sorted((m.arxiv_id, m.method, m.confidence) for m in item.mentions)
                content_hash = hash_values([*values, item.paper_id, mentions])
                row = self.db.execute(
                    "SELECT id, content_hash, title, text FROM items "
                    "WHERE source_id = ? AND key = ?",
                    (source_id, item.key),
                ).fetchone()
                paper_row = paper_ids.get(item.paper_id) if item.paper_id else None
                if row is None:
                    item_id = self.db.execute(
                        _INSERT_ITEM,
                        (*values, source_id, item.key, paper_row, content_hash, now, now),
                    ).fetchone()[0]
                    result.items_new += 1
                elif row["content_hash"] != content_hash:
                    stored_copy = {"title": row["title"], "text": row["text"]}
                    reason = item_kept_reason(stored_copy, item, well_formed=well_formed)
                    if reason:
                        result.warnings.append(f"{item.key}: {reason}")
                        result.unchanged += 1
                        continue
                    item_id = row["id"]
                    self.db.execute(
                        _UPDATE_ITEM,
                        (*values, paper_row, content_hash, now, item_id),
                    )
                    self.db.execute("DELETE FROM mentions WHERE item_id = ?", (item_id,))
                    result.items_updated += 1
                else:
                    result.unchanged += 1
                    continue
                code = item.code_links
                sure = [m for m in item.mentions if m.confidence >= 0.9]
                target = item.paper_id or (sure[0].arxiv_id if len(sure) == 1 else None)
                if code and target in paper_ids:
                    # A post or entry about exactly one paper that links a repository.
                    self.db.executemany(
                        "INSERT INTO paper_links (paper_id, kind, url, item_id, first_seen) "
                        "VALUES (?, 'code', ?, ?, ?) ON CONFLICT DO NOTHING",
                        [(paper_ids[target], url, item_id, item.published or now) for url in code],
                    )
                self.db.executemany(
                    "INSERT INTO mentions (item_id, paper_id, method, confidence, evidence, "
                    "paper_version) VALUES (?, ?, ?, ?, ?, "
                    "(SELECT latest_version FROM papers WHERE id = ?)) "
                    "ON CONFLICT (item_id, paper_id) DO UPDATE SET "
                    "method = excluded.method, confidence = excluded.confidence, "
                    "evidence = excluded.evidence, paper_version = excluded.paper_version",
                    [
                        (
                            item_id, paper_ids[m.arxiv_id], m.method, m.confidence,
                            m.evidence, paper_ids[m.arxiv_id],
                        )
                        for m in item.mentions
                    ],
                )
                result.mentions += len(item.mentions)
        return result

    # -- reads ---------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        tables = ("papers", "items", "mentions", "sources", "scholars", "authorships")
        counts = {t: self.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
        counts["stubs"] = self.db.execute(
            "SELECT count(*) FROM papers WHERE content_hash IS NULL"
        ).fetchone()[0]
        return counts

    def get_paper(self, arxiv_id: str) -> PaperPage:
        """A paper with its authors, versions, links, records and mentions."""
        parsed = parse_arxiv_id(arxiv_id)
        if parsed is None:
            raise UsageError(f"{arxiv_id!r} is not an arXiv identifier")
        row = self.db.execute("SELECT * FROM papers WHERE arxiv_id = ?", (parsed.base,)).fetchone()
        if row is None:
            raise NotFound(f"paper {parsed.base} is not stored")
        authors = tuple(
            PaperAuthorship(**r)
            for r in self.db.execute(
                "SELECT paper_id, position, name, keyname, forenames, affiliations, scholar_id, "
                "confidence "
                "FROM authorships WHERE paper_id = ? ORDER BY position",
                (row["id"],),
            )
        )
        code_links = tuple(
            CodeLink(r[0], r[1], r[2])
            for r in self.db.execute(
                "SELECT url, first_seen, item_id FROM paper_links WHERE paper_id = ? "
                "AND kind = 'code' ORDER BY COALESCE(first_seen, ''), url",
                (row["id"],),
            )
        )
        code = tuple(sorted(c.url for c in code_links))
        mentions = tuple(
            PaperMention(**{**r, "engagement": orjson.loads(r["engagement"] or "{}")})
            for r in self.db.execute(
                "SELECT i.id AS item_id, i.kind, s.kind AS source_kind, "
                "COALESCE(s.title, s.address) AS source, i.url, i.author, i.account, "
                "(SELECT sc.name FROM identities d JOIN scholars sc ON sc.id = d.scholar_id "
                " WHERE d.kind LIKE '%-did' AND d.value = i.account "
                " UNION SELECT sc.name FROM scholars sc WHERE sc.id = s.scholar_id LIMIT 1) "
                "AS scholar, i.title, i.published, substr(i.text, 1, 500) AS text, "
                "m.method, m.confidence, m.evidence, COALESCE(i.thread_root, i.key) AS thread, "
                "i.engagement FROM mentions m "
                "JOIN items i ON i.id = m.item_id JOIN sources s ON s.id = i.source_id "
                "WHERE m.paper_id = ? ORDER BY i.published DESC",
                (row["id"],),
            )
        )
        records = tuple(
            PaperRecord(**{**r, "engagement": orjson.loads(r["engagement"] or "{}")})
            for r in self.db.execute(
                "SELECT s.kind AS source_kind, COALESCE(s.title, s.address) AS source, i.url, "
                "i.first_seen, i.id AS item_id, i.engagement "
                "FROM items i JOIN sources s ON s.id = i.source_id "
                "WHERE i.paper_id = ? ORDER BY i.first_seen",
                (row["id"],),
            )
        )
        revisions = tuple(
            Revision(
                r["version"], r["seen_at"], r["title"], r["abstract"], r["authors"],
                r["comments"], r["categories"], r["journal_ref"], bool(r["withdrawn"]),
            )
            for r in self.db.execute(
                "SELECT * FROM paper_revisions WHERE paper_id = ? ORDER BY version", (row["id"],)
            )
        )
        return PaperPage(
            arxiv_id=parsed.base,
            stub=row["content_hash"] is None,
            title=row["title"],
            authorships=authors,
            abstract=row["abstract"],
            primary_category=row["primary_category"],
            categories=tuple(row["categories"].split()),
            published=row["published"],
            updated=row["updated"],
            versions=tuple(
                VersionView(f"v{n}", d, s) for n, d, s in orjson.loads(row["versions"])
            ),
            latest_version=row["latest_version"],
            doi=row["doi"],
            journal_ref=row["journal_ref"],
            comments=row["comments"],
            license=row["license"],
            withdrawn=bool(row["withdrawn"]),
            code=code,
            records=records,
            mentions=mentions,
            revisions=revisions,
            code_links=code_links,
        )

    @staticmethod
    def _fts_expression(terms: Sequence[QueryTerm]) -> str | None:
        """FTS5 syntax for neutral query terms: every term quoted, so never a syntax error."""
        positive = [t for t in terms if not t.exclude]
        # Words nearly every paper has ("of", "for") make an AND query scan whole
        # postings lists and change no result: left out when other words remain.
        telling = [t for t in positive if t.words.lower() not in _STOPWORDS or t.prefix]
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
                (match, SEARCH_WINDOW),
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
                (match, SEARCH_WINDOW),
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
            "OR t.thread_root <> COALESCE(i.thread_root, i.key)))) ELSE 0 END AS thread_posts "
            f"FROM items i JOIN sources s ON s.id = i.source_id WHERE {self.sql.in_list('i.id')}",
            (self.sql.list_param(item_ids),),
        )
        return {r[0]: SaidItem(*r) for r in rows}

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

    def title_doc_freq(self, stem: str) -> int:
        """How many papers use this (Porter-stemmed) word anywhere (title, authors, abstract)."""
        row = self.db.execute(
            "SELECT doc FROM papers_vocab WHERE term >= ? AND term <= ?", (stem, stem)
        ).fetchone()
        return int(row[0]) if row else 0

    def papers_by_doi(self, dois: Sequence[str]) -> dict[str, str]:
        """arXiv ids of stored papers by DOI (a paper's DOI field may list several)."""
        found: dict[str, str] = {}
        for doi in dois:
            row = self.db.execute(
                "SELECT arxiv_id FROM papers WHERE lower(doi) = ? OR lower(doi) LIKE ? "
                "OR lower(doi) LIKE ? LIMIT 1",
                (doi, f"{doi} %", f"% {doi}"),
            ).fetchone()
            if row:
                found[doi] = row[0]
        return found

    def stub_ids(self, limit: int, max_lookups: int = 5) -> list[str]:
        """Papers known only by their id, least asked for first."""
        rows = self.db.execute(
            "SELECT arxiv_id FROM papers WHERE content_hash IS NULL AND lookups < ? "
            "ORDER BY lookups, id LIMIT ?",
            (max_lookups, limit),
        )
        return [r[0] for r in rows]

    def count_lookups(self, arxiv_ids: Sequence[str]) -> None:
        with self.transaction():
            self.db.executemany(
                "UPDATE papers SET lookups = lookups + 1 WHERE arxiv_id = ?",
                [(a,) for a in arxiv_ids],
            )

    def paper_count(self) -> int:
        """About how many papers the library has, instantly (for word weights and display).

        The highest row id: it counts stubs and deleted rows too, but costs
        nothing, where an exact count reads the whole table (seconds at a
        million papers, on every linking or related-papers call).
        """
        return int(self.db.execute("SELECT max(id) FROM papers").fetchone()[0] or 0)

    def word_doc_freq(self, word: str, cap: int) -> int:
        """How many papers use ``word`` (as the index stems it); counting stops at ``cap``.

        A word in more than ``cap`` papers is common; how common no longer matters.
        """
        row = self.db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? LIMIT ?)",
            (quoted(QueryTerm(word)), cap),
        ).fetchone()
        return int(row[0])

    def recent_papers(self, limit: int, before: str | None = None) -> list[PaperSummary]:
        rows = self.db.execute(
            f"SELECT {_SUMMARY} FROM papers WHERE content_hash IS NOT NULL "
            "AND published IS NOT NULL AND (? IS NULL OR published < ?) "
            "ORDER BY published DESC LIMIT ?",
            (before, before, limit),
        )
        return [self._summary(r) for r in rows]

    @staticmethod
    def _summary(r: Any) -> PaperSummary:
        """A paper from the columns of :data:`_SUMMARY`, in that order (read by position:
        the feed reads some 1,200 a request)."""
        return PaperSummary(
            arxiv_id=r[0], title=r[1], authors=r[2], primary_category=r[3], published=r[4],
            updated=r[5], latest_version=r[6], journal_ref=r[7], comments=r[8], doi=r[9],
            withdrawn=bool(r[10]),
        )  # fmt: skip

    def feed_version(self, papers: int, items: int) -> tuple[Any, ...]:
        """The newest ids, the newest change among the window's rows, the newest revision:
        a few index reads (the window's rows by the indexes the feed reads them by)."""
        row = self.db.execute(
            "SELECT (SELECT max(id) FROM items), (SELECT max(id) FROM papers), "
            "(SELECT max(modified) FROM (SELECT modified FROM items "
            " ORDER BY COALESCE(published, first_seen) DESC LIMIT ?) w), "
            "(SELECT max(modified) FROM (SELECT modified FROM papers "
            " WHERE content_hash IS NOT NULL AND published IS NOT NULL "
            " ORDER BY published DESC LIMIT ?) w), "
            "(SELECT max(seen_at) FROM paper_revisions)",
            (items, papers),
        ).fetchone()
        return tuple(row)

    def recent_items(self, limit: int) -> list[FeedCandidate]:
        """Newest items with the papers they record or mention."""
        return self._feed_items("", (), limit)

    def items_by_accounts(
        self, accounts: Sequence[str], since: str, limit: int
    ) -> list[FeedCandidate]:
        """Items (posts, reposts, quotes) by these social accounts since ``since``, newest
        first: a reader's followed scholars' own words, however busy the library."""
        if not accounts:
            return []
        return self._feed_items(
            f"WHERE {self.sql.in_list('i.account')} AND i.published >= ?",
            (self.sql.list_param(sorted(accounts)), since),
            limit,
        )

    def items_about(self, arxiv_ids: Sequence[str], limit: int) -> list[FeedCandidate]:
        """Items that record or mention these papers, newest first (a story's items)."""
        if not arxiv_ids:
            return []
        ids = self.sql.list_param(sorted(arxiv_ids))
        return self._feed_items(
            "WHERE i.id IN (SELECT m.item_id FROM mentions m JOIN papers p ON p.id = m.paper_id "
            f"  WHERE {self.sql.in_list('p.arxiv_id')} "
            "  UNION SELECT i2.id FROM items i2 JOIN papers p ON p.id = i2.paper_id "
            f"  WHERE {self.sql.in_list('p.arxiv_id')})",
            (ids, ids),
            limit,
        )

    def _feed_items(self, where: str, args: Sequence[Any], limit: int) -> list[FeedCandidate]:
        rows = self.db.execute(
            "SELECT i.id, i.kind, i.title, i.url, i.author, i.account, i.engagement, "
            "i.key, i.reply_parent, i.thread_root, i.published, i.source_id, "
            "(SELECT bot FROM accounts a WHERE a.id = i.account) AS bot, "
            "COALESCE(i.published, i.first_seen) AS time, s.kind AS source_kind, "
            "COALESCE(s.title, s.address) AS source, "
            "(SELECT arxiv_id FROM papers WHERE id = i.paper_id) AS record_of, "
            f"(SELECT {self.sql.concat('p.arxiv_id')} FROM mentions m JOIN papers p "
            " ON p.id = m.paper_id WHERE m.item_id = i.id) AS mentioned "
            f"FROM items i JOIN sources s ON s.id = i.source_id {where} "
            "ORDER BY time DESC LIMIT ?",
            (*args, limit),
        )
        return [  # by position: 600 rows a feed request, through dict(row) it cost double
            FeedCandidate(
                id=r[0], kind=r[1], title=r[2], url=r[3], author=r[4], account=r[5],
                engagement=orjson.loads(r[6]), key=r[7], reply_parent=r[8], thread_root=r[9],
                published=r[10], source_id=r[11], bot=bool(r[12]), time=r[13],
                source_kind=r[14], source=r[15], record_of=r[16],
                mentioned=tuple((r[17] or "").split()),
            )
            for r in rows
        ]  # fmt: skip

    def _items(self, where: str, args: Sequence[Any], order: str = "i.id") -> list[ItemView]:
        rows = self.db.execute(
            "SELECT i.id, i.kind, i.title, i.url, i.author, i.text, i.html, i.published, "
            "i.engagement, i.extra, i.source_id, COALESCE(s.title, s.address) AS source, "
            "s.kind AS source_kind, (SELECT arxiv_id FROM papers WHERE id = i.paper_id) "
            "AS record_of FROM items i JOIN sources s ON s.id = i.source_id "
            f"WHERE {where} ORDER BY {order}",
            list(args),
        )
        items = []
        for row in rows.fetchall():
            papers = tuple(
                NamedPaper(**m) for m in self.db.execute(
                    "SELECT p.arxiv_id, p.title, m.method, m.confidence FROM mentions m "
                    "JOIN papers p ON p.id = m.paper_id WHERE m.item_id = ? "
                    "ORDER BY m.confidence DESC, p.arxiv_id", (row["id"],))
            )  # fmt: skip
            fields = dict(row)
            fields["engagement"] = orjson.loads(fields["engagement"])
            extra = orjson.loads(fields.pop("extra"))
            post, daily, note, record = read_extra(row["kind"], extra)
            items.append(
                ItemView(**fields, post=post, daily=daily, note=note, record=record,
                         code_links=tuple(extra.get("code_links") or ()), papers=papers)
            )  # fmt: skip
        return items

    def get_item(self, item_id: int) -> ItemView:
        """One item (an article, a note, a post) with the papers it names."""
        found = self._items("i.id = ?", [item_id])
        if not found:
            raise NotFound(f"no item with id {item_id}")
        return found[0]

    def source_items(self, source_id: int, kind: str) -> list[ItemView]:
        """A source's items of one kind in the order the source gave them."""
        return self._items("i.source_id = ? AND i.kind = ?", [source_id, kind])

    def daily_days(self) -> list[str]:
        rows = self.db.execute(
            f"SELECT DISTINCT {self.sql.json_text('extra', 'featured_day')} AS day FROM items "
            f"WHERE kind = 'daily' AND {self.sql.json_text('extra', 'featured_day')} IS NOT NULL "
            "ORDER BY day DESC LIMIT 60"
        )
        return [r[0] for r in rows]

    def daily_items(self, day: str) -> list[ItemView]:
        """Daily-papers entries featured on ``day``, most upvoted first."""
        return self._items(
            f"i.kind = 'daily' AND {self.sql.json_text('i.extra', 'featured_day')} = ?",
            [day],
            f"{self.sql.json_number('i.engagement', 'upvotes')} DESC, i.id",
        )

    def scholar_names(self, scholar_ids: Iterable[int]) -> dict[int, str]:
        ids = sorted(set(scholar_ids))
        if not ids:
            return {}
        rows = self.db.execute(
            f"SELECT id, name FROM scholars WHERE id IN ({', '.join('?' * len(ids))})", ids
        )
        return {r[0]: r[1] for r in rows}

    def source_addresses(self, kinds: Sequence[str]) -> list[str]:
        """Addresses of the enabled sources of these kinds."""
        rows = self.db.execute(
            f"SELECT address FROM sources WHERE enabled = 1 AND {self.sql.in_list('kind')} "
            "ORDER BY id",
            (self.sql.list_param(kinds),),
        )
        return [r[0] for r in rows]

    def papers_by_ids(self, arxiv_ids: Sequence[str]) -> dict[str, PaperSummary]:
        if not arxiv_ids:
            return {}
        rows = self.db.execute(
            f"SELECT {_SUMMARY} FROM papers WHERE {self.sql.in_list('arxiv_id')}",
            (self.sql.list_param(arxiv_ids),),
        )
        return {r[0]: self._summary(r) for r in rows}

    def card_papers(self, arxiv_ids: Sequence[str]) -> dict[str, CardPaper]:
        """What feed cards show of these stored papers (stubs too), in three queries."""
        if not arxiv_ids:
            return {}
        papers = self.db.execute(
            "SELECT id, arxiv_id, abstract, latest_version, versions, withdrawn, "
            "content_hash IS NULL AS stub FROM papers "
            f"WHERE {self.sql.in_list('arxiv_id')}",
            (self.sql.list_param(arxiv_ids),),
        ).fetchall()
        if not papers:
            return {}
        ids = self.sql.list_param([r["id"] for r in papers])
        authors: dict[int, list[PaperAuthorship]] = {}
        for r in self.db.execute(
            "SELECT paper_id, position, name, keyname, forenames, affiliations, scholar_id, "
            f"confidence FROM authorships WHERE {self.sql.in_list('paper_id')} "
            "ORDER BY paper_id, position",
            (ids,),
        ):
            authors.setdefault(r["paper_id"], []).append(PaperAuthorship(**r))
        code: dict[int, list[str]] = {}
        for r in self.db.execute(
            "SELECT paper_id, url FROM paper_links WHERE kind = 'code' "
            f"AND {self.sql.in_list('paper_id')}",
            (ids,),
        ):
            code.setdefault(r[0], []).append(r[1])
        found = {}
        for r in papers:
            versions = orjson.loads(r["versions"] or "[]")
            found[r["arxiv_id"]] = CardPaper(
                arxiv_id=r["arxiv_id"], abstract=r["abstract"] or "",
                authorships=tuple(authors.get(r["id"], ())),
                code=tuple(sorted(code.get(r["id"], ()))), latest_version=r["latest_version"],
                last_version_date=versions[-1][1] if versions else None,
                withdrawn=bool(r["withdrawn"]), stub=bool(r["stub"]),
            )  # fmt: skip
        return found

    def item_texts(self, item_ids: Sequence[int]) -> dict[int, str]:
        """The texts of these items (an empty text for an item without one)."""
        if not item_ids:
            return {}
        rows = self.db.execute(
            f"SELECT id, text FROM items WHERE {self.sql.in_list('id')}",
            (self.sql.list_param(item_ids),),
        )
        return {int(r[0]): r[1] or "" for r in rows}

    def recent_changes(self, limit: int) -> list[PaperChange]:
        """Papers whose newest stored version changed their text, newest change first."""
        rows = self.db.execute(
            "SELECT p.arxiv_id, p.versions AS dates, r.* FROM paper_revisions r "
            "JOIN papers p ON p.id = r.paper_id "
            "WHERE r.paper_id IN (SELECT paper_id FROM paper_revisions "
            "ORDER BY seen_at DESC LIMIT ?) ORDER BY r.paper_id, r.version",
            (limit * 2,),
        ).fetchall()
        by_paper: dict[str, list[Revision]] = {}
        dates: dict[str, dict[int, str]] = {}
        for r in rows:
            dates[r["arxiv_id"]] = {int(v[0]): v[1] for v in orjson.loads(r["dates"]) if v[1]}
            by_paper.setdefault(r["arxiv_id"], []).append(
                Revision(
                    r["version"], r["seen_at"], r["title"], r["abstract"], r["authors"],
                    r["comments"], r["categories"], r["journal_ref"], bool(r["withdrawn"]),
                )
            )
        found = []
        for arxiv_id, revisions in by_paper.items():
            # The feed names a change ("v3: abstract changed"): no word diff.
            changes = [c for c in changes_between(revisions, with_diff=False) if c.fields]
            if changes:
                last = changes[-1]
                dated = dates[arxiv_id].get(last.version) or last.seen_at
                found.append(PaperChange(arxiv_id, last.version, last.seen_at, last.note, dated))
        found.sort(key=lambda c: (c.seen_at, c.arxiv_id), reverse=True)
        return found[:limit]

    def code_links(self, arxiv_ids: Sequence[str]) -> dict[str, list[CodeLink]]:
        """The code links of these papers with when each first appeared, earliest first."""
        if not arxiv_ids:
            return {}
        rows = self.db.execute(
            "SELECT p.arxiv_id, l.url, l.first_seen, l.item_id FROM paper_links l "
            "JOIN papers p ON p.id = l.paper_id WHERE l.kind = 'code' "
            f"AND {self.sql.in_list('p.arxiv_id')} ORDER BY COALESCE(l.first_seen, ''), l.url",
            (self.sql.list_param(arxiv_ids),),
        )
        found: dict[str, list[CodeLink]] = {}
        for r in rows:
            found.setdefault(r[0], []).append(CodeLink(r[1], r[2], r[3]))
        return found
