"""Moving a whole library between SQLite and PostgreSQL, losing nothing.

``lightnews db copy SRC DST`` is how a one-person library becomes a group's
(SQLite → PostgreSQL) and how a group's library comes home (PostgreSQL →
SQLite). Both schemas have the same tables and columns (see
``pg_migrations/0001_initial.sql``), so the copy is table by table, row for
row, ids kept; only what each engine derives itself (full-text columns and
indexes, the embed queue's triggers, identity counters) is rebuilt on the
destination. At the end every table is compared: row counts and a checksum of
every row (order-independent, so the engines' different text orderings do not
matter). A destination that already holds a library is refused.

The ``clock`` setting is left behind unless asked for (``keep_clock``): the demo
freezes its library's clock at its snapshot's last moment, and a library copied
from it to be used for real would otherwise believe it is still that day. The
check then compares the settings without it.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from lightnews.errors import UsageError
from lightnews.store.dialect import POSTGRES
from lightnews.store.postgres import is_postgres_url, migrate, open_pool, redact

__all__ = ["TABLES", "CopyReport", "TableCheck", "checksums", "copy_library"]

#: Every table of a library, parents before children.
TABLES = (
    "settings",
    "scholars",
    "identities",
    "sources",
    "papers",
    "authorships",
    "items",
    "mentions",
    "accounts",
    "attribution_decisions",
    "paper_links",
    "mutes",
    "story_state",
    "paper_vectors",
    "embed_queue",
    "relink_queue",
    "users",
    "api_tokens",
    "sessions",
    "feed_keys",
    "audit_log",
    "sign_in_failures",
    "follows",
    "user_settings",
    "paper_revisions",
    "network_posts",
    "network_mentions",
    "listen_cursors",
    "network_follows",
    "watches",
    "push_targets",
    "watch_events",
    "deliveries",
    "digest_deliveries",
    "digest_watch_events",
    "digest_posts",
    "paper_feedback",
    "saved_lists",
    "reader_models",
)
#: Tables whose ``id`` the database hands out (PostgreSQL identity columns).
IDENTITY_TABLES = (
    "scholars",
    "identities",
    "sources",
    "papers",
    "items",
    "paper_vectors",
    "users",
    "api_tokens",
    "audit_log",
    "sign_in_failures",
)
BATCH = 5_000
_MODULUS = 1 << 256


@dataclass(frozen=True, slots=True)
class TableCheck:
    """One table after a copy: rows and checksum on each side."""

    table: str
    source_rows: int
    copied_rows: int
    source_checksum: str
    copied_checksum: str

    @property
    def equal(self) -> bool:
        return (self.source_rows, self.source_checksum) == (self.copied_rows, self.copied_checksum)


@dataclass(frozen=True, slots=True)
class CopyReport:
    source: str
    destination: str
    tables: tuple[TableCheck, ...]
    #: The source's ``clock`` setting when the copy left it out (else empty).
    clock_left_out: str = ""

    @property
    def equal(self) -> bool:
        return all(t.equal for t in self.tables)

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "destination": self.destination,
            "equal": self.equal,
            "clock_left_out": self.clock_left_out or None,
            "tables": [
                {
                    "table": t.table,
                    "source_rows": t.source_rows,
                    "copied_rows": t.copied_rows,
                    "equal": t.equal,
                    "checksum": t.copied_checksum,
                }
                for t in self.tables
            ],
        }


class _Side:
    """One end of a copy: its columns, its rows in batches, and how to write rows."""

    name: str

    def columns(self, table: str) -> list[str]:
        raise NotImplementedError

    def rows(self, table: str, columns: Sequence[str]) -> Iterator[list[tuple[Any, ...]]]:
        raise NotImplementedError

    def count(self, table: str) -> int:
        raise NotImplementedError

    def write(self, table: str, columns: Sequence[str], batch: list[tuple[Any, ...]]) -> None:
        raise NotImplementedError

    def begin(self) -> None:
        raise NotImplementedError

    def clear_queue(self) -> None:
        raise NotImplementedError

    def finish(self) -> None:
        raise NotImplementedError

    def rollback(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        raise NotImplementedError


class _SQLiteSide(_Side):
    def __init__(self, path: str, *, create: bool) -> None:
        self.name = path
        if create:
            from lightnews.store.sqlite import SQLiteStore

            SQLiteStore(path).close()  # creates and migrates it
        elif not Path(path).is_file():
            raise UsageError(f"no library at {path}")
        self.db = sqlite3.connect(path, isolation_level=None)

    def columns(self, table: str) -> list[str]:
        return [r[1] for r in self.db.execute(f"PRAGMA table_info({table})")]

    def rows(self, table: str, columns: Sequence[str]) -> Iterator[list[tuple[Any, ...]]]:
        cursor = self.db.execute(f"SELECT {', '.join(columns)} FROM {table}")
        while batch := cursor.fetchmany(BATCH):
            yield [tuple(r) for r in batch]

    def count(self, table: str) -> int:
        return int(self.db.execute(f"SELECT count(*) FROM {table}").fetchone()[0])

    def begin(self) -> None:
        self.db.execute("BEGIN IMMEDIATE")

    def write(self, table: str, columns: Sequence[str], batch: list[tuple[Any, ...]]) -> None:
        marks = ", ".join("?" for _ in columns)
        if table == "paper_vectors":
            index = columns.index("vector")
            batch = [(*r[:index], _half_bytes(r[index]), *r[index + 1 :]) for r in batch]
        self.db.executemany(f"INSERT INTO {table} ({', '.join(columns)}) VALUES ({marks})", batch)

    def clear_queue(self) -> None:
        self.db.execute("DELETE FROM embed_queue")

    def finish(self) -> None:
        # The paper index is written by the store, not by a trigger: rebuild it whole.
        self.db.execute("INSERT INTO papers_fts(papers_fts) VALUES ('rebuild')")
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")

    def close(self) -> None:
        self.db.close()


class _PostgresSide(_Side):
    def __init__(self, url: str) -> None:
        self.name = redact(url)
        self.pool = open_pool(url, max_size=2)
        self.conn = self.pool.getconn()
        migrate(self.conn)
        self._generated: dict[str, set[str]] = {}

    def columns(self, table: str) -> list[str]:
        rows = self.conn.execute(
            "SELECT column_name, is_generated FROM information_schema.columns "
            "WHERE table_schema = current_schema() AND table_name = %s ORDER BY ordinal_position",
            (table,),
        ).fetchall()
        self._generated[table] = {r[0] for r in rows if r[1] != "NEVER"}
        return [r[0] for r in rows if r[1] == "NEVER"]

    def rows(self, table: str, columns: Sequence[str]) -> Iterator[list[tuple[Any, ...]]]:
        names = [f"{c}::text" if (table, c) == ("paper_vectors", "vector") else c for c in columns]
        with self.conn.transaction(), self.conn.cursor(name=f"copy_{table}") as cursor:
            cursor.execute(f"SELECT {', '.join(names)} FROM {table}")
            while batch := cursor.fetchmany(BATCH):
                yield [tuple(r) for r in batch]

    def count(self, table: str) -> int:
        row = self.conn.execute(f"SELECT count(*) FROM {table}").fetchone()
        return int(row[0]) if row else 0

    def begin(self) -> None:
        self.conn.execute("BEGIN")

    def write(self, table: str, columns: Sequence[str], batch: list[tuple[Any, ...]]) -> None:
        if table == "paper_vectors":
            index = columns.index("vector")
            batch = [(*r[:index], _vector_text(r[index]), *r[index + 1 :]) for r in batch]
        with self.conn.cursor().copy(f"COPY {table} ({', '.join(columns)}) FROM STDIN") as copy:
            for row in batch:
                copy.write_row(row)

    def clear_queue(self) -> None:
        self.conn.execute("DELETE FROM embed_queue")

    def finish(self) -> None:
        for table in IDENTITY_TABLES:
            self.conn.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', 'id'), "
                f"COALESCE((SELECT max(id) FROM {table}), 0) + 1, false)"
            )
        self.conn.execute("COMMIT")
        self.conn.execute("ANALYZE")

    def rollback(self) -> None:
        self.conn.execute("ROLLBACK")

    def close(self) -> None:
        self.pool.putconn(self.conn)
        self.pool.close()


def _open(location: str, *, create: bool) -> _Side:
    if is_postgres_url(location):
        return _PostgresSide(location)
    return _SQLiteSide(location, create=create)


def _half_bytes(value: Any) -> bytes:
    """A vector as the SQLite store keeps it: little-endian float16 bytes."""
    if isinstance(value, bytes | bytearray | memoryview):
        return bytes(value)
    return POSTGRES.vector_bytes(value)


def _vector_text(value: Any) -> str:
    """A vector as pgvector reads it: ``[x, y, …]``."""
    return value if isinstance(value, str) else str(POSTGRES.vector_in(bytes(value)))


def _canonical(value: Any) -> bytes:
    if value is None:
        return b"\x00"
    if isinstance(value, bool):
        return b"i%d" % int(value)
    if isinstance(value, int):
        return b"i%d" % value
    if isinstance(value, float):
        return b"f" + repr(round(value, 9)).encode()
    if isinstance(value, bytes | bytearray | memoryview):
        return b"b" + bytes(value)
    return b"s" + str(value).encode()


#: The setting a copy leaves behind unless asked to keep it.
CLOCK = "clock"


def _kept_rows(
    side: _Side, table: str, columns: Sequence[str], keep_clock: bool
) -> Iterator[list[tuple[Any, ...]]]:
    """``side``'s rows of ``table`` in batches, without the clock setting unless kept."""
    if keep_clock or table != "settings":
        yield from side.rows(table, columns)
        return
    name = columns.index("name")
    for batch in side.rows(table, columns):
        yield [row for row in batch if row[name] != CLOCK]


def _clock_of(side: _Side) -> str:
    for batch in side.rows("settings", ["name", "value"]):
        for name, value in batch:
            if name == CLOCK:
                return str(value)
    return ""


def _table_checksum(
    side: _Side, table: str, columns: Sequence[str], keep_clock: bool = True
) -> tuple[int, str]:
    """Rows and an order-independent checksum of ``columns`` of every row."""
    total = 0
    rows = 0
    vector = columns.index("vector") if table == "paper_vectors" else -1
    for batch in _kept_rows(side, table, columns, keep_clock):
        for row in batch:
            values = [_half_bytes(v) if i == vector else v for i, v in enumerate(row)]
            digest = hashlib.sha256(b"\x1f".join(_canonical(v) for v in values)).digest()
            total = (total + int.from_bytes(digest, "big")) % _MODULUS
            rows += 1
    return rows, f"{total:064x}"


def checksums(location: str) -> dict[str, tuple[int, str]]:
    """Rows and checksum of every table of the library at ``location``."""
    side = _open(location, create=False)
    try:
        return {t: _table_checksum(side, t, _common(side, side, t)) for t in TABLES}
    finally:
        side.close()


def _common(a: _Side, b: _Side, table: str) -> list[str]:
    """The columns both sides store (generated full-text columns are rebuilt, not copied)."""
    theirs = set(b.columns(table))
    return [c for c in a.columns(table) if c in theirs]


def _index_vectors(url: str) -> None:
    """The copied vectors' HNSW indexes, built once over all of them (with the memory
    the destination's ``index_build_memory`` setting allows)."""
    from lightnews.settings import Settings
    from lightnews.store.postgres import PostgresStore

    store = PostgresStore(url, pool_size=1)
    try:
        store.ensure_vector_indexes(int(Settings(store.saved_settings()).index_build_memory))
    finally:
        store.close()


def copy_library(
    source: str,
    destination: str,
    progress: Callable[[str, int], None] | None = None,
    *,
    keep_clock: bool = False,
) -> CopyReport:
    """Copy every row of ``source`` into the empty library ``destination``; compare both.

    The ``clock`` setting stays behind unless ``keep_clock``: the copy then reads the
    real clock (the report names the moment left out)."""
    if str(source) == str(destination):
        raise UsageError("source and destination are the same library")
    src = _open(str(source), create=False)
    try:
        dst = _open(str(destination), create=True)
    except BaseException:
        src.close()
        raise
    try:
        held = sum(dst.count(t) for t in ("papers", "items", "sources", "scholars"))
        if held:
            raise UsageError(
                f"{dst.name} already holds a library ({held} papers, items, sources and "
                "scholars); copy into a new, empty database"
            )
        clock = "" if keep_clock else _clock_of(src)
        dst.begin()
        try:
            for table in TABLES:
                columns = _common(src, dst, table)
                if table == "embed_queue":  # filled by triggers as papers arrived
                    dst.clear_queue()
                done = 0
                for batch in _kept_rows(src, table, columns, keep_clock):
                    if not batch:
                        continue
                    dst.write(table, columns, batch)
                    done += len(batch)
                    if progress is not None:
                        progress(table, done)
            dst.finish()
        except BaseException:
            dst.rollback()
            raise
        if isinstance(dst, _PostgresSide):
            _index_vectors(str(destination))
        checks = []
        for table in TABLES:
            columns = _common(src, dst, table)
            rows_a, sum_a = _table_checksum(src, table, columns, keep_clock)
            rows_b, sum_b = _table_checksum(dst, table, columns)
            checks.append(TableCheck(table, rows_a, rows_b, sum_a, sum_b))
        return CopyReport(src.name, dst.name, tuple(checks), clock)
    finally:
        src.close()
        dst.close()
