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
- ``transaction()``, one write transaction (nested use joins the outer one);
- ``serialize(*keys)``, which makes the writers of the same keys take turns
  until the transaction ends, where a write reads before it writes (a count
  checked against a limit, a row looked up before it is inserted). SQLite has
  one writer at a time and does nothing; PostgreSQL, whose writers commit
  side by side, takes a transaction-scoped advisory lock per key;
- ``write(body)``, ``body()`` in one write transaction, run again from the
  start when PostgreSQL gave it up to break a deadlock or a serialization
  conflict (:func:`retried` makes a query method run so).

Rows stay untyped (``Any``) here, as the database drivers type them: what a
query selects is what its caller reads, next to it.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from lightnews.store.dialect import Dialect

__all__ = ["Connection", "Cursor", "Queries", "retried"]

_T = TypeVar("_T")
_P = ParamSpec("_P")
_Q = TypeVar("_Q", bound="Queries")


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

    def serialize(self, *keys: str) -> None:
        """Make the writers of any of ``keys`` take turns until this transaction ends
        (call inside one). Keys name what they guard: ``"source:12"``, ``"accounts"``."""
        ...

    def write(self, body: Callable[[], _T]) -> _T:
        """``body()`` in one write transaction; re-run from the start (a bounded number of
        times) when the server broke a deadlock or a serialization conflict by giving it
        up. ``body`` must be safe to run again: it writes only through the store, and
        keeps what it counts in what it returns. Inside an open transaction it simply
        joins it (the outermost ``write`` is the one that re-runs)."""
        ...


def retried(
    method: Callable[Concatenate[_Q, _P], _T],
) -> Callable[Concatenate[_Q, _P], _T]:
    """A query method that writes in one transaction of its own, re-run whole when the
    server gives it up (:meth:`Queries.write`); within a caller's transaction it joins it."""

    def run(self: _Q, /, *args: _P.args, **kwargs: _P.kwargs) -> _T:
        return self.write(lambda: method(self, *args, **kwargs))

    functools.update_wrapper(run, method)
    return run
