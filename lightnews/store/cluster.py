"""What the processes sharing one PostgreSQL library coordinate through it.

Workers on any number of machines refresh one library together (see
:mod:`lightnews.worker`). Three things must then hold for all of them at once,
and the database is the one place they all reach, so it keeps them:

* **a host's turns** (:class:`HostSlots`): arXiv's 3-second interval is one
  interval for the whole cluster. A request is made inside the host's turn:
  the host's advisory lock, then a wait until ``host_slots.next_at`` (the end
  of the previous request plus the interval, on the database's clock), so two
  requests to a host never overlap and never come closer than the interval,
  whichever machine sends them;
* **one fetcher per source** (:func:`source_turn`): the job queue already runs
  one job per source at a time (its ``lock``); a session advisory lock on the
  source, held for the job, also holds when a worker taken for dead (a missed
  heartbeat) is in fact still fetching. It dies with the worker's connection,
  so a worker killed with ``kill -9`` leaves nothing held;
* **who hands dead workers' jobs back** (:func:`recovery_turn`): one worker at
  a time, so that a job is never handed back twice (the second time while a
  live worker already runs it);
* **which running jobs still have a live worker** (:func:`job_turn`,
  :func:`job_alive`): a job holds an advisory lock of its own on its
  worker's connection while it runs. A heartbeat only says that a worker
  was heard from lately; a worker on a saturated machine can miss three and
  still be working. The lock says whether the process is there: it goes
  with the connection when the process dies, so a job whose worker is
  silent *and* whose lock is free is a dead worker's;
* **the queue's schema** (:func:`apply_queue_schema`): the job queue
  (procrastinate) keeps its jobs in tables of its own, created and brought up
  to date by the library's migrations, so ``lightnews init`` is all a new
  database needs.
"""

from __future__ import annotations

import importlib.metadata
import re
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager, suppress
from pathlib import Path
from typing import Any, Protocol

__all__ = [
    "HOST_LOCK",
    "JOB_LOCK",
    "RECOVERY_LOCK",
    "SOURCE_LOCK",
    "Connected",
    "HostSlots",
    "apply_queue_schema",
    "job_alive",
    "job_turn",
    "recovery_turn",
    "source_turn",
]


class Connected(Protocol):
    """A PostgreSQL store as its locks see it: this thread's connection (``PostgresStore``).

    A protocol, not the class: the store applies this module's queue schema, so
    this module does not import the store back.
    """

    @property
    def db(self) -> Any: ...


#: Class of the advisory locks held on sources while they are fetched ("LNSR").
SOURCE_LOCK = 0x4C4E5352
#: Key of the advisory lock held by the one worker looking for dead workers' jobs ("LNRV").
RECOVERY_LOCK = 0x4C4E5256
#: Class of the advisory locks held on hosts for the length of a request ("LNHT").
HOST_LOCK = 0x4C4E4854
#: Class of the advisory locks held on queue jobs while a worker runs them ("LNJB").
JOB_LOCK = 0x4C4E4A42

_WAIT = """
SELECT extract(epoch FROM next_at - clock_timestamp()) FROM host_slots WHERE host = %(host)s
"""
_DONE = """
INSERT INTO host_slots AS s (host, next_at)
VALUES (%(host)s, clock_timestamp() + make_interval(secs => %(gap)s))
ON CONFLICT (host) DO UPDATE SET next_at = excluded.next_at
"""


class HostSlots:
    """A pacer whose turns are kept in the database, for every worker together.

    ``pool`` is a psycopg connection pool (autocommit connections) to the
    library. A turn at a host holds that host's advisory lock for the whole
    request, so workers' requests to one host never overlap, and starts
    ``interval`` after the previous turn *ended* (``host_slots.next_at``): when
    a request actually reached the server is only known to the process that
    sent it (a busy machine can hold a thread for a good part of a second
    between its turn and its request), so the interval is counted from when
    the previous request was done. A worker killed mid-request releases the
    lock with its connection. A host with no interval never touches the database.
    """

    def __init__(self, pool: Any, *, sleep: Callable[[float], None] = time.sleep) -> None:
        self.pool = pool
        self._sleep = sleep

    @contextmanager
    def turn(self, host: str, interval: float) -> Iterator[None]:
        if interval <= 0:
            yield
            return
        with self.pool.connection() as conn:
            conn.execute("SELECT pg_advisory_lock(%s, hashtext(%s))", (HOST_LOCK, host))
            try:
                row = conn.execute(_WAIT, {"host": host}).fetchone()
                wait = float(row[0]) if row and row[0] is not None else 0.0
                if wait > 0:
                    self._sleep(wait)
                yield
            finally:
                with suppress(Exception):  # a broken connection has released the lock
                    conn.execute(_DONE, {"host": host, "gap": interval})
                    conn.execute("SELECT pg_advisory_unlock(%s, hashtext(%s))", (HOST_LOCK, host))


@contextmanager
def source_turn(store: Connected, source_id: int) -> Iterator[bool]:
    """Hold the source for this thread's connection while the block runs.

    Yields whether it was free: ``False`` means another process is fetching
    it right now (the caller leaves it to that one).
    """
    db = store.db
    row = db.execute("SELECT pg_try_advisory_lock(?, ?)", (SOURCE_LOCK, source_id)).fetchone()
    held = bool(row[0])
    try:
        yield held
    finally:
        if held and not db.conn.closed:
            with suppress(Exception):  # a broken connection has released it already
                db.execute("SELECT pg_advisory_unlock(?, ?)", (SOURCE_LOCK, source_id))


def _job_key(job_id: int) -> int:
    """The second key of a job's lock (advisory lock keys are 32-bit)."""
    return job_id & 0x7FFFFFFF


@contextmanager
def job_turn(store: Connected, job_id: int) -> Iterator[None]:
    """Hold queue job ``job_id`` on this thread's connection while the block runs.

    Only ever one runner: the queue hands a job to one worker at a time, so
    the lock is free (a job handed back from a worker taken for dead is not:
    :func:`job_alive` keeps it from being handed back while its lock is held).
    """
    db = store.db
    db.execute("SELECT pg_advisory_lock(?, ?)", (JOB_LOCK, _job_key(job_id)))
    try:
        yield
    finally:
        if not db.conn.closed:
            with suppress(Exception):  # a broken connection has released it already
                db.execute("SELECT pg_advisory_unlock(?, ?)", (JOB_LOCK, _job_key(job_id)))


async def job_alive(conn: Any, job_id: int) -> bool:
    """Whether some process's connection holds job ``job_id`` (:func:`job_turn`) right now."""
    key = (JOB_LOCK, _job_key(job_id))
    cursor = await conn.execute("SELECT pg_try_advisory_lock(%s, %s)", key)
    row = await cursor.fetchone()
    if row and row[0]:
        await conn.execute("SELECT pg_advisory_unlock(%s, %s)", key)
        return False
    return True


@asynccontextmanager
async def recovery_turn(url: str) -> AsyncIterator[Any | None]:
    """A connection if this process may hand dead workers' jobs back now, else ``None``.

    One process at a time: the turn is an advisory lock on a connection of
    its own, closed (so released) when the block ends, or when the process
    dies. The connection is the one to ask :func:`job_alive` on.
    """
    import psycopg

    conn = await psycopg.AsyncConnection.connect(url, autocommit=True, connect_timeout=10)
    async with conn:
        cursor = await conn.execute("SELECT pg_try_advisory_lock(%s)", (RECOVERY_LOCK,))
        row = await cursor.fetchone()
        yield conn if row and row[0] else None


def _version(text: str) -> tuple[int, ...]:
    return tuple(int(part) for part in re.findall(r"\d+", text)[:3])


def apply_queue_schema(conn: Any) -> str | None:
    """Create or upgrade the job queue's tables; returns what was done, if anything.

    ``conn`` is an autocommit psycopg connection, called under the migration
    lock. The version of procrastinate whose schema the database holds is
    kept in ``queue_schema``; a newer procrastinate applies its own migration
    scripts from there on. Without procrastinate installed nothing happens:
    the library works, only workers cannot run.
    """
    try:
        from procrastinate.schema import SchemaManager
    except ImportError:
        return None
    installed = importlib.metadata.version("procrastinate")
    conn.execute("CREATE TABLE IF NOT EXISTS queue_schema (version TEXT NOT NULL)")
    row = conn.execute("SELECT version FROM queue_schema").fetchone()
    if row is None:
        present = conn.execute("SELECT to_regclass('procrastinate_jobs')").fetchone()[0]
        with conn.transaction():
            if present is None:
                conn.execute(SchemaManager.get_schema())
            conn.execute("INSERT INTO queue_schema (version) VALUES (%s)", (installed,))
        return f"queue schema (procrastinate {installed})"
    applied = str(row[0])
    if _version(installed) <= _version(applied):
        return None
    folder = Path(SchemaManager.get_migrations_path())
    scripts = sorted(
        (_version(path.name.split("_", 1)[0]), path.name, path) for path in folder.glob("*.sql")
    )
    with conn.transaction():
        for version, _, path in scripts:
            if _version(applied) < version <= _version(installed):
                conn.execute(path.read_text(encoding="utf-8"))
        conn.execute("UPDATE queue_schema SET version = %s", (installed,))
    return f"queue schema {applied} -> {installed}"
