"""Store: the library's settings and its sources (what it reads, and how each read went).

Written once for both backends, against :class:`~lightnews.store.connection.Queries`:
a source is a row of ``sources`` with its fetch state (validators, cursors,
the source kind's own ``extra``) and its health (last attempt, success and
error, and when to try again), which the scheduler reads and the pipeline
writes after every run.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import orjson

from lightnews.errors import NotFound
from lightnews.model import SourceState
from lightnews.store.connection import Queries
from lightnews.store.merge import to_json
from lightnews.store.views import SourceRow

__all__ = ["LibraryQueries"]

_SOURCE_COLUMNS = (
    "id, kind, address, title, folder, scholar_id, params, etag, last_modified, cursor, "
    "resumption_token, state, created_at, last_attempt, last_success, last_error, "
    "last_error_at, error_count, next_attempt, enabled"
)


class LibraryQueries(Queries):
    """The library's settings and sources."""

    # -- settings ----------------------------------------------------------

    def saved_settings(self) -> dict[str, str]:
        return {r["name"]: r["value"] for r in self.db.execute("SELECT name, value FROM settings")}

    def save_setting(self, name: str, value: str | None) -> None:
        with self.transaction():
            if value is None:
                self.db.execute("DELETE FROM settings WHERE name = ?", (name,))
            else:
                self.db.execute(
                    "INSERT INTO settings (name, value) VALUES (?, ?) "
                    "ON CONFLICT(name) DO UPDATE SET value = excluded.value",
                    (name, value),
                )

    def keep_setting(self, name: str, value: str) -> str:
        """The saved value of a setting, saving ``value`` first when there is none: of
        writers saving at once, the first one's stays and every one reads it back."""
        with self.transaction():
            self.db.execute(
                "INSERT INTO settings (name, value) VALUES (?, ?) ON CONFLICT(name) DO NOTHING",
                (name, value),
            )
        return self.saved_settings()[name]

    # -- sources -----------------------------------------------------------

    @staticmethod
    def _source(row: Any) -> SourceRow:
        return SourceRow(
            id=row["id"],
            kind=row["kind"],
            address=row["address"],
            title=row["title"],
            folder=row["folder"],
            scholar_id=row["scholar_id"],
            params=orjson.loads(row["params"]),
            state=SourceState(
                etag=row["etag"],
                last_modified=row["last_modified"],
                cursor=row["cursor"],
                resumption_token=row["resumption_token"],
                extra=orjson.loads(row["state"]),
            ),
            created_at=row["created_at"],
            last_attempt=row["last_attempt"],
            last_success=row["last_success"],
            last_error=row["last_error"],
            last_error_at=row["last_error_at"],
            error_count=row["error_count"],
            next_attempt=row["next_attempt"],
            enabled=bool(row["enabled"]),
        )

    def add_source(
        self,
        kind: str,
        address: str,
        *,
        now: str,
        title: str | None = None,
        folder: str | None = None,
        params: dict[str, Any] | None = None,
        scholar_id: int | None = None,
    ) -> tuple[SourceRow, bool]:
        """Add a source; returns it and whether it is new (adding twice is harmless)."""
        with self.transaction():
            cursor = self.db.execute(
                "INSERT INTO sources (kind, address, title, folder, params, scholar_id, "
                "created_at) VALUES (?, ?, ?, ?, ?, ?, ?) ON CONFLICT(kind, address) DO NOTHING",
                (kind, address, title, folder, to_json(params or {}), scholar_id, now),
            )
            created = cursor.rowcount == 1
            if not created and (title or folder):
                self.db.execute(
                    "UPDATE sources SET title = COALESCE(?, title), folder = COALESCE(?, folder)"
                    " WHERE kind = ? AND address = ?",
                    (title, folder, kind, address),
                )
        found = self.find_source(kind, address)
        assert found is not None
        return found, created

    def find_source(self, kind: str, address: str) -> SourceRow | None:
        row = self.db.execute(
            f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE kind = ? AND address = ?",
            (kind, address),
        ).fetchone()
        return self._source(row) if row else None

    def get_source(self, source_id: int) -> SourceRow:
        row = self.db.execute(
            f"SELECT {_SOURCE_COLUMNS} FROM sources WHERE id = ?", (source_id,)
        ).fetchone()
        if row is None:
            raise NotFound(f"no source with id {source_id}")
        return self._source(row)

    def list_sources(self) -> list[SourceRow]:
        rows = self.db.execute(f"SELECT {_SOURCE_COLUMNS} FROM sources ORDER BY folder, id")
        return [self._source(r) for r in rows]

    def due_sources(self, now: str, kinds: Iterable[str] | None = None) -> list[SourceRow]:
        """Enabled sources whose next attempt has come (or that never ran)."""
        due = [
            s
            for s in self.list_sources()
            if s.enabled and (s.next_attempt is None or s.next_attempt <= now)
        ]
        if kinds is not None:
            wanted = set(kinds)
            due = [s for s in due if s.kind in wanted]
        return due

    def remove_source(self, source_id: int) -> SourceRow:
        """Remove a source and its items; the papers they recorded or mentioned stay."""
        source = self.get_source(source_id)
        with self.transaction():
            self.db.execute("DELETE FROM sources WHERE id = ?", (source_id,))
        return source

    def set_source_enabled(self, source_id: int, enabled: bool) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE sources SET enabled = ? WHERE id = ?", (int(enabled), source_id)
            )

    def set_source_title(self, source_id: int, title: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE sources SET title = ? WHERE id = ?", (title, source_id))

    def save_state(self, source_id: int, state: SourceState) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE sources SET etag = ?, last_modified = ?, cursor = ?, resumption_token = ?,"
                " state = ? WHERE id = ?",
                (
                    state.etag,
                    state.last_modified,
                    state.cursor,
                    state.resumption_token,
                    to_json(state.extra),
                    source_id,
                ),
            )

    def record_attempt(self, source_id: int, now: str) -> None:
        with self.transaction():
            self.db.execute("UPDATE sources SET last_attempt = ? WHERE id = ?", (now, source_id))

    def record_success(
        self, source_id: int, now: str, next_attempt: str, *, clean: bool = True
    ) -> None:
        """A run that stored what it read; ``clean`` clears the error state."""
        with self.transaction():
            if clean:
                self.db.execute(
                    "UPDATE sources SET last_success = ?, error_count = 0, next_attempt = ?, "
                    "last_error = NULL WHERE id = ?",
                    (now, next_attempt, source_id),
                )
            else:
                self.db.execute(
                    "UPDATE sources SET last_success = ?, next_attempt = ? WHERE id = ?",
                    (now, next_attempt, source_id),
                )

    def record_failure(self, source_id: int, message: str, now: str, next_attempt: str) -> None:
        with self.transaction():
            self.db.execute(
                "UPDATE sources SET last_error = ?, last_error_at = ?, "
                "error_count = error_count + 1, next_attempt = ? WHERE id = ?",
                (message, now, next_attempt, source_id),
            )
