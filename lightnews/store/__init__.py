"""Store: where everything Lightnews knows is kept.

SQLite by default (one file under the user's data directory, overridden by
``--db PATH`` or ``LIGHTNEWS_DB``). Other packages talk to the store through
the :class:`Store` protocol (``base``), whose reads return the frozen
dataclasses of ``views``; SQL never leaves this package, and the rules that
are not about storage (``merge``) are shared by every backend. Neither do the
backend's exceptions: what reaches the command line or the web server is
explained by :func:`unavailable` (``BACKEND_ERRORS`` are the ones to catch there).
"""

from __future__ import annotations

import os
from pathlib import Path

import platformdirs

from lightnews.store.base import Store
from lightnews.store.sqlite import BACKEND_ERRORS, SQLiteStore, unavailable
from lightnews.store.views import SaveResult, SourceRow

__all__ = [
    "BACKEND_ERRORS",
    "SQLiteStore",
    "SaveResult",
    "SourceRow",
    "Store",
    "default_db_path",
    "open_store",
    "unavailable",
]


def default_db_path() -> Path:
    """``$LIGHTNEWS_DB``, else ``lightnews.db`` in the user's data directory."""
    from_env = os.environ.get("LIGHTNEWS_DB")
    if from_env:
        return Path(from_env).expanduser()
    return Path(platformdirs.user_data_dir("lightnews")) / "lightnews.db"


def open_store(path: str | Path | None = None) -> Store:
    """Open (creating and migrating as needed) the database at ``path``."""
    return SQLiteStore(Path(path).expanduser() if path else default_db_path())
