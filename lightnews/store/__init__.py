"""Store: where everything Lightnews knows is kept.

SQLite by default (one file under the user's data directory, overridden by
``--db PATH`` or ``LIGHTNEWS_DB``). Other packages talk to the store through
the :class:`Store` protocol (``base``), whose reads return the frozen
dataclasses of ``views``. Two backends implement it as siblings,
:class:`SQLiteStore` and ``PostgresStore``, over :class:`CommonStore`
(``common``: every query they share, written once). SQL never leaves this
package, and the rules that are not about storage (``merge``) are shared by
every backend. Neither do the backend's exceptions: what reaches the command
line or the web server is explained by :func:`unavailable` (``BACKEND_ERRORS``
are the ones to catch there).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from lightnews.errors import Unavailable
from lightnews.store.base import Store
from lightnews.store.common import CommonStore
from lightnews.store.postgres import is_postgres_url
from lightnews.store.readers import LOCAL_READER, ReaderId
from lightnews.store.sqlite import BACKEND_ERRORS as _SQLITE_ERRORS
from lightnews.store.sqlite import SQLiteStore
from lightnews.store.sqlite import unavailable as _sqlite_unavailable
from lightnews.store.views import SaveResult, SourceRow

try:  # the server extra: PostgreSQL's errors are the backend's too
    import psycopg
    import psycopg_pool

    _POSTGRES_ERRORS: tuple[type[Exception], ...] = (psycopg.Error, psycopg_pool.PoolTimeout)
except ImportError:  # pragma: no cover - without the server extra
    _POSTGRES_ERRORS = ()

#: The exceptions a backend raises; :func:`unavailable` explains them to a user.
BACKEND_ERRORS: tuple[type[Exception], ...] = (*_SQLITE_ERRORS, *_POSTGRES_ERRORS)

__all__ = [
    "BACKEND_ERRORS",
    "LOCAL_READER",
    "CommonStore",
    "ReaderId",
    "SQLiteStore",
    "SaveResult",
    "SourceRow",
    "Store",
    "default_db_path",
    "is_postgres_url",
    "open_store",
    "unavailable",
]


def unavailable(error: Exception) -> Unavailable:
    """A backend's error as the situation a user can act on (``Busy``: try again)."""
    if _POSTGRES_ERRORS and isinstance(error, _POSTGRES_ERRORS):
        from lightnews.store.pg_connection import pg_unavailable

        return pg_unavailable(error)
    return _sqlite_unavailable(error)


def default_db_path() -> Path:
    """``$LIGHTNEWS_DB``, else ``lightnews.db`` in the user's data directory."""
    from_env = os.environ.get("LIGHTNEWS_DB")
    if from_env:
        return Path(from_env).expanduser()
    return Path(platformdirs.user_data_dir("lightnews")) / "lightnews.db"


def open_store(path: str | Path | None = None) -> Store:
    """Open (creating and migrating as needed) the library at ``path``.

    A ``postgresql://`` URL opens a PostgreSQL library (the server extra);
    anything else is an SQLite file.
    """
    if path is not None and is_postgres_url(path):
        from lightnews.store.postgres import PostgresStore

        return PostgresStore(str(path))
    return SQLiteStore(Path(path).expanduser() if path else default_db_path())
