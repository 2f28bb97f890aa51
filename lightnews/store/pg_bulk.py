"""New papers of a bulk import inserted into PostgreSQL over several connections at once.

What bounds an import into PostgreSQL is the server's work per new paper:
its full-text column (``search``, generated from title, authors and abstract)
is computed by the backend process that inserts the row, 0.45 ms of server
CPU a paper, so one connection keeps one server core busy and the import
waits for it (``docs/benchmarks.md``). Here the importing connection goes on
deciding what each record is (new, unchanged, changed: the store's merge
path, :mod:`lightnews.store.merge`, the merged papers' rows locked), and
hands each chunk of new papers to one of several side connections, which
``COPY`` it into a staging table of their own and move it into ``papers``
with one ``INSERT … SELECT … ON CONFLICT DO NOTHING``, with its authorships
and code links, in a transaction of their own; the server computes the
full-text column in as many backends as there are side connections.

The library ends up as a one-connection import leaves it, row ids included:

- the importing connection reserves the new papers' ids from the table's
  sequence, in the order it would have inserted them;
- a record of a paper still being inserted on a side connection waits for
  that chunk to commit, then goes through the merge like any stored paper
  (the snapshot's duplicates and later versions merge in file order);
- a new paper that another writer of the library stored meanwhile is not
  inserted but returned, and the importing connection merges it over the
  stored one (as any writer does with a new paper stored first by another).
"""

from __future__ import annotations

import threading
from collections import deque
from collections.abc import Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any

from lightnews.store.merge import PAPER_COLUMNS, PreparedPaper
from lightnews.store.writes import text_code_links

__all__ = ["ParallelInserts"]

#: Chunks handed on but not yet inserted, per side connection: bounds memory.
QUEUED = 2
#: New papers gathered into one side connection's transaction (the importing connection
#: hands them on 200 at a time; a transaction and its staging table's truncation cost
#: the server the same for 200 papers as for 1,000).
BATCH = 1000

_COLUMNS = ("id", *PAPER_COLUMNS, "first_seen", "modified")
_AUTHORSHIP_COLUMNS = (
    "paper_id",
    "position",
    "name",
    "name_key",
    "keyname",
    "forenames",
    "affiliations",
)


class _Chunk:
    """New papers handed to a side connection: rows with their reserved ids."""

    __slots__ = ("authors", "ids", "now", "rows")

    def __init__(
        self,
        rows: list[tuple[Any, ...]],
        authors: Sequence[Sequence[Sequence[Any]]],
        now: str,
    ) -> None:
        self.rows = rows  # (id, *PAPER_COLUMNS values, first_seen, modified)
        self.authors = authors
        self.now = now
        self.ids = frozenset(r[1] for r in rows)  # arXiv ids


class ParallelInserts:
    """Side connections inserting new papers, and the chunks handed to them.

    Used by one importing thread: :meth:`insert` hands a chunk on,
    :meth:`wait_for` waits for the chunks holding some arXiv ids,
    :meth:`returned` gives back the papers another writer stored first, and
    :meth:`close` waits for everything (raising the first error of a side
    connection) and closes the connections.
    """

    def __init__(self, url: str, connections: int) -> None:
        self.url = url
        self.connections = connections
        self._pool = ThreadPoolExecutor(max_workers=connections, thread_name_prefix="pg-insert")
        self._local = threading.local()
        self._opened: list[Any] = []
        self._guard = threading.Lock()
        self._inflight: deque[tuple[_Chunk, Future[list[PreparedPaper]]]] = deque()
        self._returned: list[PreparedPaper] = []
        self.now = ""  # the stamp of the chunks handed on (one per import)
        self._rows: list[tuple[Any, ...]] = []  # gathered, not yet handed on
        self._authors: list[Sequence[Sequence[Any]]] = []
        self._ids: set[str] = set()

    # -- the importing thread -------------------------------------------------------------

    def insert(
        self,
        ids: Sequence[int],
        rows: Sequence[tuple[Any, ...]],
        authors: Sequence[Sequence[Sequence[Any]]],
        now: str,
    ) -> None:
        """Hand on new papers (``rows`` as the store inserts them, ``ids`` reserved for
        them in the same order), ``BATCH`` at a time; waits while too many chunks are
        queued."""
        self.now = now
        self._rows.extend((i, *r) for i, r in zip(ids, rows, strict=True))
        self._authors.extend(authors)
        self._ids.update(r[0] for r in rows)
        if len(self._rows) >= BATCH:
            self._submit()

    def _submit(self) -> None:
        while len(self._inflight) >= self.connections * QUEUED:
            self._collect(self._inflight.popleft())
        chunk = _Chunk(self._rows, self._authors, self.now)
        self._rows, self._authors, self._ids = [], [], set()
        self._inflight.append((chunk, self._pool.submit(self._run, chunk)))

    def wait_for(self, arxiv_ids: set[str]) -> None:
        """Wait until no chunk holding one of ``arxiv_ids`` is still being inserted."""
        if not self._ids.isdisjoint(arxiv_ids):
            self._submit()
        while any(not chunk.ids.isdisjoint(arxiv_ids) for chunk, _ in self._inflight):
            self._collect(self._inflight.popleft())

    def returned(self) -> list[PreparedPaper]:
        """New papers that another writer stored first (to be merged), taken once."""
        papers, self._returned = self._returned, []
        return papers

    def drain(self) -> None:
        """Wait for every chunk handed on (raises the first side connection's error)."""
        if self._rows:
            self._submit()
        while self._inflight:
            self._collect(self._inflight.popleft())

    def close(self) -> None:
        """Stop the side connections (after :meth:`drain`, or to give up on an error)."""
        for _, future in self._inflight:
            future.cancel()
        self._pool.shutdown(wait=True)
        self._inflight.clear()
        with self._guard:
            for conn in self._opened:
                conn.close()
            self._opened.clear()

    def _collect(self, job: tuple[_Chunk, Future[list[PreparedPaper]]]) -> None:
        self._returned.extend(job[1].result())

    # -- a side connection ----------------------------------------------------------------

    def _connection(self) -> Any:
        conn = getattr(self._local, "conn", None)
        if conn is None:
            import psycopg

            conn = psycopg.connect(self.url, autocommit=True, application_name="lightnews import")
            with self._guard:
                self._opened.append(conn)
            conn.execute("SET synchronous_commit = off")  # as the importing connection
            conn.execute(
                f"CREATE TEMP TABLE import_papers ON COMMIT DELETE ROWS AS "
                f"SELECT {', '.join(_COLUMNS)} FROM papers WITH NO DATA"
            )
            self._local.conn = conn
        return conn

    def _run(self, chunk: _Chunk) -> list[PreparedPaper]:
        """Insert one chunk in one transaction; the papers already stored are returned."""
        conn = self._connection()
        columns = ", ".join(_COLUMNS)
        with conn.transaction():
            with conn.cursor().copy(f"COPY import_papers ({columns}) FROM STDIN") as copy:
                for row in chunk.rows:
                    copy.write_row(row)
            inserted = {
                r[0]
                for r in conn.execute(
                    f"INSERT INTO papers ({columns}) SELECT {columns} FROM import_papers "
                    "ORDER BY id ON CONFLICT (arxiv_id) DO NOTHING RETURNING arxiv_id"
                )
            }
            ids = {r[1]: r[0] for r in chunk.rows if r[1] in inserted}
            authorships = [
                (ids[r[1]], *a)
                for r, rows in zip(chunk.rows, chunk.authors, strict=True)
                if r[1] in ids
                for a in rows
            ]
            if authorships:
                with conn.cursor().copy(
                    f"COPY authorships ({', '.join(_AUTHORSHIP_COLUMNS)}) FROM STDIN"
                ) as copy:
                    for row in authorships:
                        copy.write_row(row)
            links = text_code_links([r[1:] for r in chunk.rows if r[1] in ids], chunk.now)
            if links:
                conn.cursor().executemany(
                    "INSERT INTO paper_links (paper_id, kind, url, item_id, first_seen) "
                    "VALUES (%s, 'code', %s, NULL, %s) ON CONFLICT DO NOTHING",
                    [(ids[a], url, when) for a, url, when in links],
                )
        return [
            (r[1:-2], a)
            for r, a in zip(chunk.rows, chunk.authors, strict=True)
            if r[1] not in inserted
        ]
