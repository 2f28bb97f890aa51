"""Store: the part of every backend that is written once, and what is left to each.

:class:`CommonStore` is the whole :class:`~lightnews.store.base.Store` but
for what truly differs between the engines. It gathers the modules of
shared queries (each a class of :class:`~lightnews.store.connection.Queries`,
written against the small connection protocol there and the
:class:`~lightnews.store.dialect.Dialect`), and leaves abstract what each
backend provides:

- its connections, transactions and locks, migrations and time budgets
  (:class:`~lightnews.store.sqlite.SQLiteStore`, one file and one writer;
  :class:`~lightnews.store.postgres.PostgresStore`, a pool and a server);
- full-text search (:mod:`~lightnews.store.sqlite_search` on FTS5,
  :mod:`~lightnews.store.pg_search` on ``tsvector``);
- inserting new papers in bulk, and vectors' nearest neighbours (FAISS beside
  an SQLite file; pgvector's index in PostgreSQL, :mod:`~lightnews.store.pg_vectors`).

The two backends are siblings under it. Code that must read the database
itself (a test, a benchmark) is typed against :class:`CommonStore`; every
other caller against the :class:`~lightnews.store.base.Store` protocol.
"""

from __future__ import annotations

import random
import re
import time
from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Self, TypeVar

from lightnews.store.base import Store
from lightnews.store.digests import DigestQueries
from lightnews.store.feedback import FeedbackQueries
from lightnews.store.library import LibraryQueries
from lightnews.store.network import NetworkQueries, WatchQueries
from lightnews.store.readers import ReaderQueries
from lightnews.store.reads import ReadQueries
from lightnews.store.relink import RelinkQueries
from lightnews.store.scholars import ScholarQueries
from lightnews.store.search_common import SearchQueries
from lightnews.store.suggest import SuggestQueries
from lightnews.store.texts import TextQueries
from lightnews.store.vectors import VectorQueries
from lightnews.store.writes import WriteQueries

__all__ = ["WALL_FACTOR", "WRITE_TRIES", "WRITE_WAIT", "CommonStore", "read_migrations"]

_T = TypeVar("_T")

#: Seconds a write waits for another writer before giving up (:class:`Busy`). Bulk
#: imports commit every few seconds (``lightnews.ingest.bulk``), refreshes page by page.
WRITE_WAIT = 30.0
#: A read under a time budget of N seconds also stops after this many times N seconds of
#: waiting: SQLite counts the read's own CPU against N and waiting against this ceiling;
#: PostgreSQL, which can bound only a statement's duration, bounds it by the ceiling
#: (a starved machine's wait for a CPU is not the search's cost).
WALL_FACTOR = 4.0
#: How many times :meth:`CommonStore.write` runs a write transaction that the server gave
#: up (to break a deadlock), at most; it waits a few random milliseconds between tries.
WRITE_TRIES = 5


def read_migrations(folder: str) -> list[tuple[int, str, str]]:
    """The migrations ``NNNN_name.sql`` in this package's ``folder``: (number, name, script)."""
    found = []
    for entry in (resources.files("lightnews.store") / folder).iterdir():
        match = re.match(r"(\d{4})_(\w+)\.sql$", entry.name)
        if match:
            found.append((int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found)


class CommonStore(
    LibraryQueries,
    WriteQueries,
    ReadQueries,
    SearchQueries,
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
    Store,
):
    """Every query both backends share; a backend adds its connections, search and vectors."""

    path: Path
    write_wait: float
    connection_wait: float
    vectors_indexed: bool
    #: The errors on which :meth:`write` runs the whole transaction again: PostgreSQL's
    #: deadlock and serialization failures (its writers commit side by side). SQLite has
    #: one writer at a time, and none.
    retry_errors: tuple[type[BaseException], ...] = ()

    def write(self, body: Callable[[], _T]) -> _T:
        if self.db.in_transaction:  # the caller's transaction: its outermost write re-runs
            return body()
        for attempt in range(WRITE_TRIES):
            try:
                with self.transaction():
                    return body()
            except self.retry_errors:
                if attempt == WRITE_TRIES - 1:
                    raise
                time.sleep(random.uniform(0.001, 0.01 * 2**attempt))
        raise AssertionError("unreachable")  # pragma: no cover

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
