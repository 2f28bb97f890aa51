"""Store: what the shared queries need of a backend, declared once.

Most of the store's SQL is written once and runs on SQLite and on PostgreSQL
alike (the sources, papers and items of ``library``, ``writes`` and ``reads``;
the people of ``scholars``; the readers of ``readers``; the network of
``network``, and the rest). What that SQL asks of a backend is small, and
:class:`Queries` is where it is said, for every one of those modules:

- ``db``, this thread's :class:`Connection`: it runs a query with ``?``
  placeholders and yields rows read by position (``row[0]``) or by column
  (``row["title"]``, ``dict(row)``); SQLite's own connection is one, and
  PostgreSQL's is :class:`~lightnews.store.pg_connection.PgConnection`;
- ``sql``, the :class:`~lightnews.store.dialect.Dialect` that spells the few
  fragments the two engines spell differently;
- ``transaction()``, one write transaction (nested use joins the outer one).

Rows stay untyped (``Any``) here, as the database drivers type them: what a
query selects is what its caller reads, next to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

from lightnews.store.dialect import Dialect

__all__ = ["Connection", "Cursor", "Queries"]


class Cursor(Protocol):
    """The result of one statement: its rows, and how many rows a write changed."""

    @property
    def rowcount(self) -> int: ...

    def fetchone(self) -> Any:
        """The next row, or None when there is none left."""
        ...

    def fetchall(self) -> list[Any]: ...

    def __iter__(self) -> Iterator[Any]: ...


class Connection(Protocol):
    """One thread's connection to the library, as the shared queries use it."""

    def execute(self, sql: str, parameters: Sequence[Any] = ..., /) -> Cursor: ...

    def executemany(self, sql: str, parameters: Iterable[Sequence[Any]], /) -> Cursor: ...

    @property
    def in_transaction(self) -> bool: ...


class Queries(Protocol):
    """What every module of shared queries needs of its store (each backend provides it)."""

    #: How this backend spells what the two engines spell differently.
    sql: Dialect

    @property
    def db(self) -> Connection:
        """This thread's connection (one per thread, made on first use)."""
        ...

    def transaction(self) -> AbstractContextManager[None]:
        """One write transaction; nested use joins the outer one."""
        ...
