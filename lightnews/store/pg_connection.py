"""PostgreSQL's connections as the shared queries use them, and its errors explained.

The shared queries (:mod:`lightnews.store.connection`) are written with
``?`` placeholders and read rows by position or by column, as SQLite's
connection gives them. :class:`PgConnection` wraps a pooled psycopg
connection so that it answers the same way; :class:`PostgresQueries` is what
PostgreSQL's own query modules (``pg_search``, ``pg_vectors``) need of their
store: that connection, with the psycopg connection underneath it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import contextmanager, suppress
from typing import Any, Protocol

from lightnews.errors import Busy, Unavailable
from lightnews.store.connection import Cursor, Queries

__all__ = [
    "PgConnection",
    "PostgresQueries",
    "Row",
    "pg_sql",
    "pg_unavailable",
    "rollback",
]


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


#: The statements ``prepared`` binds on the server: reads.
_READ = re.compile(r"\s*(?:SELECT|WITH)\b", re.IGNORECASE)


class PgConnection:
    """A pooled psycopg connection that answers like the SQLite backend's connection.

    ``execute`` and ``executemany`` take the shared queries as they are;
    parameters are bound on the client side, as SQLite binds them, so a
    ``? IS NULL`` needs no type; while ``prepared`` is set, reads with
    parameters are bound on the server instead, and psycopg prepares those
    used often.
    """

    def __init__(
        self, conn: Any, generation: int = 0, on_broken: Callable[[], None] | None = None
    ) -> None:
        self.conn = conn
        #: Reads bound on the server and prepared (``PostgresStore.repeated_reads``).
        self.prepared = False
        #: The store's count of broken connections when this one was taken.
        self.generation = generation
        #: Told when a statement finds this connection broken (the server went away).
        self.on_broken = on_broken
        #: Blocks under way that set this connection up (a time budget, prepared reads):
        #: while any is, the store does not swap it for a new one.
        self.held = 0

    def execute(self, query: str, params: Sequence[Any] | None = None) -> Cursor:
        import psycopg

        with self._watched():
            if self.prepared and params and _READ.match(query):
                server = psycopg.Cursor(self.conn, row_factory=_row_factory)
                server.execute(pg_sql(query), params)
                return server
            cursor = psycopg.ClientCursor(self.conn, row_factory=_row_factory)
            cursor.execute(pg_sql(query), params or None)
            return cursor

    def executemany(self, query: str, rows: Iterable[Sequence[Any]]) -> Cursor:
        import psycopg

        cursor = psycopg.ClientCursor(self.conn, row_factory=_row_factory)
        batch = list(rows)
        if batch:
            with self._watched():
                cursor.executemany(pg_sql(query), batch)
        return cursor

    @contextmanager
    def _watched(self) -> Iterator[None]:
        """Run a statement; if it finds the connection broken, tell the store."""
        import psycopg

        try:
            yield
        except psycopg.OperationalError:
            if self.conn.broken and self.on_broken is not None:
                self.on_broken()
            raise

    @property
    def in_transaction(self) -> bool:
        from psycopg.pq import TransactionStatus

        return bool(self.conn.info.transaction_status != TransactionStatus.IDLE)


class PostgresQueries(Queries, Protocol):
    """What PostgreSQL's own query modules need of their store: its pooled connection."""

    @property
    def db(self) -> PgConnection:
        """This thread's connection (taken from the pool on first use)."""
        ...


def pg_unavailable(error: Exception) -> Unavailable:
    """A PostgreSQL error as the situation a user can act on (:class:`Busy`: try again)."""
    import psycopg

    if isinstance(error, Unavailable):
        return error
    if isinstance(error, psycopg.errors.LockNotAvailable):
        return Busy(
            "the library is busy: another Lightnews process is writing to it; try again in a moment"
        )
    if isinstance(error, psycopg.OperationalError) or "PoolTimeout" in type(error).__name__:
        return Unavailable(f"the database server cannot be reached: {error}".strip())
    return Unavailable(f"the database could not carry this out: {error}")


def rollback(db: PgConnection) -> None:
    """Roll back the open transaction of ``db``, if it has one and is still connected."""
    if not db.conn.closed and db.in_transaction:
        with suppress(Exception):  # a broken connection has nothing left to roll back
            db.execute("ROLLBACK")
