"""The SQLite store: every database read and write of the personal setup.

One file, WAL mode, versioned migrations (``migrations/NNNN_*.sql``, tracked
in ``PRAGMA user_version``), FTS5 indexes kept in step by triggers. SQL that
is specific to SQLite lives here and nowhere else, so a PostgreSQL backend can
implement the same methods without other packages changing.

Writes are idempotent: saving the same batch twice changes nothing, because
papers and items carry a content hash and rows are only rewritten when it
differs. Merging rules for papers: the newer record (by version, then update
time) wins field by field, gaps are filled from the other, versions are the
union of both, and a *stub* (a paper known only by its id because something
mentioned it) never overwrites metadata.
"""

from __future__ import annotations

import hashlib
import re
import sqlite3
from collections.abc import Iterable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from lightnews.errors import NotFound, UsageError
from lightnews.link.titles import TitleCandidate
from lightnews.model import (
    Author,
    Batch,
    Item,
    Paper,
    QueryTerm,
    SearchFilters,
    SourceState,
)
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.normalize.names import name_key
from lightnews.store.fts import quoted
from lightnews.store.scholars import ScholarQueries
from lightnews.store.texts import TextQueries
from lightnews.store.vectors import VectorQueries

__all__ = ["PreparedPaper", "SQLiteStore", "SaveResult", "SourceRow", "prepare_paper"]

_STOPWORDS = frozenset(
    "a an and are as at be by for from has have in into is it its of on or that the their "
    "this to via was we were which with".split()
)
#: Most matches a query ranks by relevance (see ``search_papers``).
SEARCH_WINDOW = 5000
_PAPER_COLUMNS = (
    "arxiv_id",
    "title",
    "abstract",
    "authors",
    "primary_category",
    "categories",
    "published",
    "updated",
    "versions",
    "latest_version",
    "doi",
    "journal_ref",
    "comments",
    "license",
    "submitter",
    "withdrawn",
    "content_hash",
)
_UPSERT_PAPER = (
    f"INSERT INTO papers ({', '.join(_PAPER_COLUMNS)}, first_seen, modified) "
    f"VALUES ({', '.join('?' * len(_PAPER_COLUMNS))}, ?, ?) "
    "ON CONFLICT(arxiv_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in _PAPER_COLUMNS[1:])
    + ", modified = excluded.modified WHERE papers.content_hash IS NOT excluded.content_hash"
)
_INSERT_PAPER = (
    f"INSERT INTO papers ({', '.join(_PAPER_COLUMNS)}, first_seen, modified) "
    f"VALUES ({', '.join('?' * (len(_PAPER_COLUMNS) + 2))})"
)
_INSERT_AUTHORSHIP = (
    "INSERT INTO authorships (paper_id, position, name, name_key, keyname, forenames, "
    "affiliations) VALUES (?, ?, ?, ?, ?, ?, ?)"
)
_ITEM_COLUMNS = (
    "kind", "title", "url", "author", "text", "html", "published", "updated", "links", "tags",
    "engagement", "extra", "payload", "account", "thread_root", "reply_parent",
)  # fmt: skip
_INSERT_ITEM = (
    f"INSERT INTO items ({', '.join(_ITEM_COLUMNS)}, source_id, key, paper_id, content_hash, "
    f"first_seen, modified) VALUES ({', '.join('?' * (len(_ITEM_COLUMNS) + 6))}) RETURNING id"
)
_UPDATE_ITEM = (
    f"UPDATE items SET {', '.join(c + ' = ?' for c in _ITEM_COLUMNS)}, paper_id = ?, "
    "content_hash = ?, modified = ? WHERE id = ?"
)
_SOURCE_COLUMNS = (
    "id, kind, address, title, folder, scholar_id, params, etag, last_modified, cursor, "
    "resumption_token, state, created_at, last_attempt, last_success, last_error, "
    "last_error_at, error_count, next_attempt, enabled"
)


@dataclass(slots=True)
class SourceRow:
    """A source as stored: what it reads, its saved state and its health."""

    id: int
    kind: str
    address: str
    title: str | None
    folder: str | None
    scholar_id: int | None
    params: dict[str, Any]
    state: SourceState
    created_at: str
    last_attempt: str | None
    last_success: str | None
    last_error: str | None
    last_error_at: str | None
    error_count: int
    next_attempt: str | None
    enabled: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "url": self.address,
            "title": self.title,
            "folder": self.folder,
            "last_attempt": self.last_attempt,
            "last_success": self.last_success,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
            "error_count": self.error_count,
            "next_attempt": self.next_attempt,
            "enabled": self.enabled,
        }


@dataclass(slots=True)
class SaveResult:
    """Counts of what one save changed; all zero when the data was already stored."""

    papers_new: int = 0
    papers_updated: int = 0
    items_new: int = 0
    items_updated: int = 0
    mentions: int = 0
    unchanged: int = 0
    warnings: list[str] = field(default_factory=list)

    def add(self, other: SaveResult) -> None:
        self.papers_new += other.papers_new
        self.papers_updated += other.papers_updated
        self.items_new += other.items_new
        self.items_updated += other.items_updated
        self.mentions += other.mentions
        self.unchanged += other.unchanged
        self.warnings.extend(other.warnings)

    @property
    def changed(self) -> int:
        return self.papers_new + self.papers_updated + self.items_new + self.items_updated


def _json(value: Any) -> str:
    return orjson.dumps(value).decode()


def _hash(values: Sequence[Any]) -> str:
    return hashlib.blake2b(orjson.dumps(values), digest_size=12).hexdigest()


def _version_key(row: dict[str, Any]) -> tuple[int, str]:
    """Which of two records of a paper is newer: by version, then update time."""
    return (row["latest_version"] or 0, row["updated"] or "")


def _merge_versions(a: Iterable[Sequence[Any]], b: Iterable[Sequence[Any]]) -> list[list[Any]]:
    """Versions ``[number, date, size]`` of both, by number; ``a``'s fields win, gaps filled."""
    merged: dict[int, list[Any]] = {int(v[0]): list(v) for v in a}
    for number, date, size in b:
        known = merged.get(number)
        if known is None:
            merged[number] = [number, date, size]
        else:
            known[1] = known[1] or date
            known[2] = known[2] or size
    return [merged[n] for n in sorted(merged)]


#: A paper as the store writes it, built without a database by :func:`prepare_paper`:
#: its ``_PAPER_COLUMNS`` values (content hash last) and its authorship rows without
#: the paper's row id: ``(position, name, name_key, keyname, forenames, affiliations)``.
#: Only strings, integers and None: it survives a JSON round trip (lists for tuples).
PreparedPaper = tuple[Sequence[Any], Sequence[Sequence[Any]]]
_TITLE, _AUTHORS, _PUBLISHED, _UPDATED, _VERSIONS, _LATEST, _WITHDRAWN = (
    _PAPER_COLUMNS.index(c)
    for c in ("title", "authors", "published", "updated", "versions", "latest_version", "withdrawn")
)


def prepare_paper(paper: Paper) -> PreparedPaper:
    """The row values and authorship rows of ``paper`` as if nothing were stored yet.

    Pure (no database, no store), so a bulk import builds them in its parsing
    worker; :meth:`SQLiteStore.save_prepared` inserts them as they are when the
    paper is new, and merges them over the stored row otherwise. A stub (no
    title) is prepared too: its id and version decide between duplicates.
    """
    numbers = [v.number for v in paper.versions]
    if numbers == sorted(set(numbers)):  # in order, no repeats: nothing to merge
        versions = [[v.number, v.date, v.size] for v in paper.versions]
    else:
        versions = _merge_versions((), ((v.number, v.date, v.size) for v in paper.versions))
    authors = paper.authors
    values = (
        paper.arxiv_id,
        paper.title,
        paper.abstract,
        ", ".join([a.name for a in authors]),
        paper.primary_category,
        " ".join(paper.categories),
        paper.published,
        paper.updated,
        _json(versions),
        (versions[-1][0] or None) if versions else None,  # the latest version
        paper.doi,
        paper.journal_ref,
        paper.comments,
        paper.license,
        paper.submitter,
        int(paper.withdrawn),
    )
    authorships = [
        (
            position,
            a.name,
            name_key(a.name, a.keyname),
            a.keyname,
            a.forenames,
            "; ".join(a.affiliations) or None,
        )
        for position, a in enumerate(authors)
    ]
    return (*values, _hash(values)), authorships


def _prepared_key(values: Sequence[Any]) -> tuple[int, str]:
    """:func:`_version_key` of prepared values."""
    return (values[_LATEST] or 0, values[_UPDATED] or "")


def _merged_values(fresh: Sequence[Any], old: dict[str, Any]) -> tuple[Any, ...] | None:
    """Prepared values ``fresh`` merged over the stored row ``old``; None if nothing changes.

    The newer record (by version, then update time) wins field by field and
    gaps are filled from the other; versions are the union of both. A stored
    stub (no content hash) simply takes the fresh values.
    """
    versions = _merge_versions(orjson.loads(old["versions"]), orjson.loads(fresh[_VERSIONS]))
    if old["content_hash"] is not None:
        stored = [old[c] for c in _PAPER_COLUMNS[:-1]]
        newer_first = _prepared_key(fresh) >= _version_key(old)
        first, second = (fresh, stored) if newer_first else (stored, fresh)
        merged = [a if a not in (None, "") else b for a, b in zip(first, second, strict=False)]
        merged[_PUBLISHED] = min(
            (d for d in (fresh[_PUBLISHED], stored[_PUBLISHED]) if d), default=None
        )
        merged[_WITHDRAWN] = first[_WITHDRAWN]
    else:
        merged = list(fresh[:-1])
    merged[_VERSIONS] = _json(versions)
    merged[_LATEST] = (
        max([v[0] for v in versions] + [fresh[_LATEST] or 0, old["latest_version"] or 0]) or None
    )
    content_hash = _hash(merged)
    if old["content_hash"] == content_hash:
        return None
    return (*merged, content_hash)


class SQLiteStore(ScholarQueries, VectorQueries, TextQueries):
    """All reads and writes of one Lightnews SQLite database."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.db = sqlite3.connect(str(path), isolation_level=None, check_same_thread=False)
        self.db.row_factory = sqlite3.Row
        self.db.execute("PRAGMA journal_mode = WAL")
        self.db.execute("PRAGMA synchronous = NORMAL")
        self.db.execute("PRAGMA foreign_keys = ON")
        self.db.execute("PRAGMA busy_timeout = 10000")
        self.db.execute("PRAGMA cache_size = -65536")
        self.migrate()

    # -- lifecycle -------------------------------------------------------

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> SQLiteStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    @staticmethod
    def _migrations() -> list[tuple[int, str, str]]:
        folder = resources.files("lightnews.store") / "migrations"
        found = []
        for entry in folder.iterdir():
            match = re.match(r"(\d{4})_(\w+)\.sql$", entry.name)
            if match:
                found.append((int(match[1]), match[2], entry.read_text(encoding="utf-8")))
        return sorted(found)

    @property
    def schema_version(self) -> int:
        return int(self.db.execute("PRAGMA user_version").fetchone()[0])

    def migrate(self) -> list[str]:
        """Apply every migration newer than the database, each in its own transaction."""
        applied = []
        for number, name, script in self._migrations():
            if number <= self.schema_version:
                continue
            self.db.executescript(
                f"BEGIN IMMEDIATE;\n{script}\nPRAGMA user_version = {number};\nCOMMIT;"
            )
            applied.append(f"{number:04d}_{name}")
        return applied

    @contextmanager
    def transaction(self) -> Iterator[None]:
        """One write transaction; nested use joins the outer one."""
        if self.db.in_transaction:
            yield
            return
        self.db.execute("BEGIN IMMEDIATE")
        try:
            yield
        except BaseException:
            self.db.execute("ROLLBACK")
            raise
        self.db.execute("COMMIT")

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

    # -- sources -----------------------------------------------------------

    @staticmethod
    def _source(row: sqlite3.Row) -> SourceRow:
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
                (kind, address, title, folder, _json(params or {}), scholar_id, now),
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
                    _json(state.extra),
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

    # -- papers --------------------------------------------------------------

    def _existing_papers(self, arxiv_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        # One statement whatever the number of ids (a JSON array): a list of "?" per
        # id would prepare, and cache, a new statement for every batch size.
        rows = self.db.execute(
            f"SELECT id, {', '.join(_PAPER_COLUMNS)} FROM papers "
            "WHERE arxiv_id IN (SELECT value FROM json_each(?))",
            (_json(list(arxiv_ids)),),
        )
        return {row["arxiv_id"]: dict(row) for row in rows}

    def _stored_hashes(self, arxiv_ids: Sequence[str]) -> dict[str, str | None]:
        """Content hashes of the stored papers among ``arxiv_ids`` (None for a stub)."""
        rows = self.db.execute(
            "SELECT arxiv_id, content_hash FROM papers "
            "WHERE arxiv_id IN (SELECT value FROM json_each(?))",
            (_json(list(arxiv_ids)),),
        )
        return {r[0]: r[1] for r in rows}

    def save_papers(self, papers: Sequence[Paper], now: str) -> SaveResult:
        """Insert or merge papers (and their authorships) in the current transaction."""
        return self.save_prepared([prepare_paper(p) for p in papers], now)

    def save_prepared(self, prepared: Sequence[PreparedPaper], now: str) -> SaveResult:
        """:meth:`save_papers` for papers already through :func:`prepare_paper`.

        Only the content hashes of the stored papers are looked up: a paper
        whose fresh values hash to the stored hash is what the merge would
        leave, so it is unchanged; new papers are inserted as prepared; only
        the rest fetch their stored row and go through the merge.
        """
        result = SaveResult()
        if not prepared:
            return result
        latest: dict[str, PreparedPaper] = {}
        for paper in prepared:  # the same id twice in one batch: keep the newer
            known = latest.get(paper[0][0])
            if known is None or _prepared_key(paper[0]) >= _prepared_key(known[0]):
                latest[paper[0][0]] = paper
        stored = self._stored_hashes(list(latest))
        existing = self._existing_papers(
            [
                arxiv_id
                for arxiv_id, (values, _) in latest.items()
                if arxiv_id in stored and values[_TITLE] and stored[arxiv_id] != values[-1]
            ]
        )
        fresh: list[tuple[Any, ...]] = []
        fresh_authors: list[Sequence[Sequence[Any]]] = []
        rows: list[tuple[Any, ...]] = []
        changed: list[tuple[int, Sequence[Sequence[Any]]]] = []
        stubs: list[tuple[str, str, str]] = []
        for arxiv_id, (values, authorships) in latest.items():
            if not values[_TITLE]:  # a stub never overwrites
                if arxiv_id not in stored:
                    stubs.append((arxiv_id, now, now))
                continue
            old = existing.get(arxiv_id)
            if old is None:
                if arxiv_id in stored:  # the same hash as stored
                    result.unchanged += 1
                    continue
                fresh.append((*values, now, now))
                fresh_authors.append(authorships)
                result.papers_new += 1
                continue
            merged = _merged_values(values, old)
            if merged is None:
                result.unchanged += 1
                continue
            rows.append((*merged, now, now))
            if merged[_AUTHORS] == values[_AUTHORS] and authorships:
                changed.append((old["id"], authorships))  # its author list is now stored
            if old["content_hash"] is None:
                result.papers_new += 1
            else:
                result.papers_updated += 1
        with self.transaction():
            if stubs:
                self.db.executemany(
                    "INSERT OR IGNORE INTO papers (arxiv_id, first_seen, modified) "
                    "VALUES (?, ?, ?)",
                    stubs,
                )
            if fresh:
                ids = self._insert_papers(fresh)
                self._save_authorships(
                    [(ids[r[0]], a) for r, a in zip(fresh, fresh_authors, strict=True) if a],
                    stale=False,
                )
            if rows:
                self.db.executemany(_UPSERT_PAPER, rows)
            if changed:
                self._save_authorships(changed, stale=True)
        return result

    def _insert_papers(self, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
        """New papers and their full-text rows, in bulk (no per-row trigger); their row ids."""
        self.db.executemany(_INSERT_PAPER, rows)
        ids = self._paper_ids([r[0] for r in rows])
        self.db.executemany(
            "INSERT INTO papers_fts (rowid, title, authors, abstract) VALUES (?, ?, ?, ?)",
            [(ids[r[0]], r[1], r[3], r[2]) for r in rows],
        )
        return ids

    def _save_authorships(
        self, papers: Sequence[tuple[int, Sequence[Sequence[Any]]]], *, stale: bool
    ) -> None:
        """Authorship rows by paper row id; ``stale``: replace the ones stored before."""
        if not papers:
            return
        if stale:
            self.db.executemany(
                "DELETE FROM authorships WHERE paper_id = ?", [(i,) for i, _ in papers]
            )
        self.db.executemany(_INSERT_AUTHORSHIP, [(i, *row) for i, rows in papers for row in rows])

    def _paper_ids(self, arxiv_ids: Sequence[str]) -> dict[str, int]:
        rows = self.db.execute(
            "SELECT arxiv_id, id FROM papers WHERE arxiv_id IN (SELECT value FROM json_each(?))",
            (_json(list(arxiv_ids)),),
        )
        return {r[0]: r[1] for r in rows}

    # -- items and mentions ------------------------------------------------------

    @staticmethod
    def _item_values(item: Item) -> list[Any]:
        """Values of ``_ITEM_COLUMNS`` for ``item``."""
        return [
            item.kind, item.title, item.url, item.author, item.text, item.html, item.published,
            item.updated, _json(item.links), _json(item.tags), _json(item.engagement),
            _json(item.extra), item.payload, item.account, item.thread_root, item.reply_parent,
        ]  # fmt: skip

    def save_batch(self, source_id: int, batch: Batch, now: str) -> SaveResult:
        """Store everything one parsed response carried, in one transaction."""
        with self.transaction():
            result = self.save_papers(batch.papers, now)
            result.add(self.save_items(source_id, batch.items, now))
        return result

    def save_items(self, source_id: int, items: Sequence[Item], now: str) -> SaveResult:
        """Insert new items, rewrite changed ones, leave identical ones untouched."""
        result = SaveResult()
        if not items:
            return result
        with self.transaction():
            wanted = {m.arxiv_id for i in items for m in i.mentions}
            wanted.update(i.paper_id for i in items if i.paper_id)
            self.save_papers([Paper(arxiv_id=a) for a in sorted(wanted)], now)
            paper_ids = self._paper_ids(sorted(wanted))
            for item in items:
                values = self._item_values(item)
                mentions = sorted((m.arxiv_id, m.method, m.confidence) for m in item.mentions)
                content_hash = _hash([*values, item.paper_id, mentions])
                row = self.db.execute(
                    "SELECT id, content_hash FROM items WHERE source_id = ? AND key = ?",
                    (source_id, item.key),
                ).fetchone()
                paper_row = paper_ids.get(item.paper_id) if item.paper_id else None
                if row is None:
                    item_id = self.db.execute(
                        _INSERT_ITEM,
                        (*values, source_id, item.key, paper_row, content_hash, now, now),
                    ).fetchone()[0]
                    result.items_new += 1
                elif row["content_hash"] != content_hash:
                    item_id = row["id"]
                    self.db.execute(
                        _UPDATE_ITEM,
                        (*values, paper_row, content_hash, now, item_id),
                    )
                    self.db.execute("DELETE FROM mentions WHERE item_id = ?", (item_id,))
                    result.items_updated += 1
                else:
                    result.unchanged += 1
                    continue
                code = item.extra.get("code_links") or []
                sure = [m for m in item.mentions if m.confidence >= 0.9]
                target = item.paper_id or (sure[0].arxiv_id if len(sure) == 1 else None)
                if code and target in paper_ids:
                    # A post or entry about exactly one paper that links a repository.
                    self.db.executemany(
                        "INSERT OR IGNORE INTO paper_links (paper_id, kind, url, item_id) "
                        "VALUES (?, 'code', ?, ?)",
                        [(paper_ids[target], url, item_id) for url in code],
                    )
                self.db.executemany(
                    "INSERT OR REPLACE INTO mentions (item_id, paper_id, method, confidence, "
                    "evidence) VALUES (?, ?, ?, ?, ?)",
                    [
                        (item_id, paper_ids[m.arxiv_id], m.method, m.confidence, m.evidence)
                        for m in item.mentions
                    ],
                )
                result.mentions += len(item.mentions)
        return result

    # -- reads ---------------------------------------------------------------------

    def counts(self) -> dict[str, int]:
        tables = ("papers", "items", "mentions", "sources", "scholars", "authorships")
        counts = {t: self.db.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in tables}
        counts["stubs"] = self.db.execute(
            "SELECT count(*) FROM papers WHERE content_hash IS NULL"
        ).fetchone()[0]
        return counts

    def get_paper(self, arxiv_id: str) -> dict[str, Any]:
        """A paper with its authors, versions, links, records and mentions."""
        parsed = parse_arxiv_id(arxiv_id)
        if parsed is None:
            raise UsageError(f"{arxiv_id!r} is not an arXiv identifier")
        row = self.db.execute("SELECT * FROM papers WHERE arxiv_id = ?", (parsed.base,)).fetchone()
        if row is None:
            raise NotFound(f"paper {parsed.base} is not stored")
        authors = [
            dict(r)
            for r in self.db.execute(
                "SELECT position, name, keyname, forenames, affiliations, scholar_id, confidence "
                "FROM authorships WHERE paper_id = ? ORDER BY position",
                (row["id"],),
            )
        ]
        base = parsed.base
        links = {"abs": f"https://arxiv.org/abs/{base}", "pdf": f"https://arxiv.org/pdf/{base}"}
        if row["doi"]:
            links["doi"] = f"https://doi.org/{row['doi'].split()[0]}"
        code = [
            r[0]
            for r in self.db.execute(
                "SELECT url FROM paper_links WHERE paper_id = ? AND kind = 'code' ORDER BY url",
                (row["id"],),
            )
        ]
        if code:
            links["code"] = code[0]
        mentions = [
            dict(r)
            for r in self.db.execute(
                "SELECT i.id AS item_id, i.kind, s.kind AS source_kind, "
                "COALESCE(s.title, s.address) AS source, i.url, i.author, i.account, "
                "(SELECT sc.name FROM identities d JOIN scholars sc ON sc.id = d.scholar_id "
                " WHERE d.kind LIKE '%-did' AND d.value = i.account "
                " UNION SELECT sc.name FROM scholars sc WHERE sc.id = s.scholar_id LIMIT 1) "
                "AS scholar, i.title, i.published, substr(i.text, 1, 500) AS text, "
                "m.method, m.confidence, m.evidence FROM mentions m "
                "JOIN items i ON i.id = m.item_id JOIN sources s ON s.id = i.source_id "
                "WHERE m.paper_id = ? ORDER BY i.published DESC",
                (row["id"],),
            )
        ]
        records = [
            dict(r)
            for r in self.db.execute(
                "SELECT s.kind AS source_kind, COALESCE(s.title, s.address) AS source, i.url, "
                "i.first_seen FROM items i JOIN sources s ON s.id = i.source_id "
                "WHERE i.paper_id = ? ORDER BY i.first_seen",
                (row["id"],),
            )
        ]
        return {
            "arxiv_id": base,
            "stub": row["content_hash"] is None,
            "title": row["title"],
            "authors": [a["name"] for a in authors],
            "authorships": authors,
            "abstract": row["abstract"],
            "primary_category": row["primary_category"],
            "categories": row["categories"].split(),
            "published": row["published"],
            "updated": row["updated"],
            "versions": [
                {"version": f"v{n}", "date": d, "size": s}
                for n, d, s in orjson.loads(row["versions"])
            ],
            "latest_version": row["latest_version"],
            "doi": row["doi"],
            "journal_ref": row["journal_ref"],
            "comments": row["comments"],
            "license": row["license"],
            "withdrawn": bool(row["withdrawn"]),
            "links": links,
            "code": code,
            "records": records,
            "mentions": mentions,
        }

    @staticmethod
    def _fts_expression(terms: Sequence[QueryTerm]) -> str | None:
        """FTS5 syntax for neutral query terms: every term quoted, so never a syntax error."""
        positive = [t for t in terms if not t.exclude]
        # Words nearly every paper has ("of", "for") make an AND query scan whole
        # postings lists and change no result: left out when other words remain.
        telling = [t for t in positive if t.words.lower() not in _STOPWORDS or t.prefix]
        wanted = [quoted(t) for t in (telling or positive)]
        if not wanted:
            return None
        return " ".join(wanted) + "".join(f" NOT {quoted(t)}" for t in terms if t.exclude)

    def search_papers(
        self,
        terms: Sequence[QueryTerm],
        limit: int,
        offset: int = 0,
        filters: SearchFilters | None = None,
    ) -> list[dict[str, Any]]:
        """Papers matching all terms, best first: title weighted over authors over abstract.

        Ranking every match of a very common word ("model" matches most of a
        million papers) costs time in proportion to the matches, so a query
        with more than ``SEARCH_WINDOW`` matches ranks the most recently added
        ``SEARCH_WINDOW`` of them: FTS5 finds that window by rowid in a
        fraction of a millisecond and scores only inside it. For news that is
        the right trade; narrower queries are ranked over all their matches.
        """
        match = self._fts_expression(terms)
        if match is None:
            return []
        where, args = self._search_filters(filters)
        floor = 0
        if not where:  # filters narrow the matches themselves: no window then
            edge = self.db.execute(
                "SELECT rowid FROM papers_fts WHERE papers_fts MATCH ? "
                "ORDER BY rowid DESC LIMIT 1 OFFSET ?",
                (match, SEARCH_WINDOW),
            ).fetchone()
            floor = edge[0] if edge else 0
        if not where:
            # Rank inside the index and join only the page's papers.
            rows = self.db.execute(
                "SELECT p.arxiv_id, p.title, p.published, p.primary_category, top.score FROM ("
                "SELECT rowid, -bm25(papers_fts, 10.0, 3.0, 1.0) AS score FROM papers_fts "
                "WHERE papers_fts MATCH ? AND rowid > ? "
                "ORDER BY bm25(papers_fts, 10.0, 3.0, 1.0) LIMIT ? OFFSET ?) AS top "
                "JOIN papers p ON p.id = top.rowid ORDER BY top.score DESC",
                (match, floor, limit, offset),
            )
            return [dict(r) for r in rows]
        rows = self.db.execute(
            "SELECT p.arxiv_id, p.title, p.published, p.primary_category, "
            "-bm25(papers_fts, 10.0, 3.0, 1.0) AS score FROM papers_fts "
            "JOIN papers p ON p.id = papers_fts.rowid "
            f"WHERE papers_fts MATCH ? AND papers_fts.rowid > ? {where}"
            "ORDER BY bm25(papers_fts, 10.0, 3.0, 1.0) LIMIT ? OFFSET ?",
            (match, floor, *args, limit, offset),
        )
        return [dict(r) for r in rows]

    def related_candidates(
        self, words: Sequence[str], exclude: str, limit: int
    ) -> list[dict[str, Any]]:
        """Papers sharing the most of ``words`` (an OR query), best first, without ``exclude``."""
        match = " OR ".join(f'"{w}"' for w in dict.fromkeys(words) if '"' not in w)
        if not match:
            return []
        rows = self.db.execute(
            "SELECT p.arxiv_id, p.title, p.published, p.primary_category, "
            "-bm25(papers_fts, 5.0, 0.0, 1.0) AS score FROM papers_fts "
            "JOIN papers p ON p.id = papers_fts.rowid WHERE papers_fts MATCH ? "
            "AND p.arxiv_id != ? ORDER BY bm25(papers_fts, 5.0, 0.0, 1.0) LIMIT ?",
            (match, exclude, limit),
        )
        return [dict(r) for r in rows]

    @staticmethod
    def _search_filters(filters: SearchFilters | None) -> tuple[str, list[Any]]:
        if not filters:
            return "", []
        clauses: list[str] = []
        args: list[Any] = []
        if filters.subject:
            subject = filters.subject.strip()
            clauses.append("(' ' || p.categories || ' ') LIKE ?")
            args.append(f"% {subject} %" if "." in subject else f"% {subject}%")
        if filters.since:
            clauses.append("p.published >= ?")
            args.append(filters.since)
        if filters.until:
            clauses.append("p.published <= ?")
            args.append(filters.until + ("T23:59:59Z" if len(filters.until) == 10 else ""))
        if filters.scholar_id is not None:
            clauses.append("p.id IN (SELECT paper_id FROM authorships WHERE scholar_id = ?)")
            args.append(filters.scholar_id)
        if filters.source_kind:
            clauses.append(
                "p.id IN (SELECT i.paper_id FROM items i JOIN sources s ON s.id = i.source_id "
                "WHERE s.kind = ? AND i.paper_id IS NOT NULL UNION SELECT m.paper_id FROM "
                "mentions m JOIN items i ON i.id = m.item_id JOIN sources s "
                "ON s.id = i.source_id WHERE s.kind = ?)"
            )
            args += [filters.source_kind, filters.source_kind]
        return "".join(f"AND {c} " for c in clauses), args

    # -- title lookup (for lightnews.link.titles) ------------------------------------

    def title_candidates(
        self, words: Sequence[str], limit: int, surname: str | None = None
    ) -> list[TitleCandidate]:
        """Papers whose titles share the most telling of ``words`` (an OR query on titles)."""
        quoted = [f'"{w}"' for w in dict.fromkeys(words) if w and '"' not in w]
        if not quoted:
            return []
        match = "{title}: (" + " OR ".join(quoted) + ")"
        surname_filter = (
            "AND p.id IN (SELECT paper_id FROM authorships WHERE name_key = ?) " if surname else ""
        )
        args: list[Any] = [match]
        if surname:
            args.append(surname)
        args.append(limit)
        rows = self.db.execute(
            "SELECT p.id, p.arxiv_id, p.title, p.published FROM papers_fts "
            "JOIN papers p ON p.id = papers_fts.rowid WHERE papers_fts MATCH ? "
            f"{surname_filter}ORDER BY bm25(papers_fts, 10.0, 0.0, 0.0) LIMIT ?",
            args,
        ).fetchall()
        if not rows:
            return []
        ids = [r["id"] for r in rows]
        surnames: dict[int, list[str]] = {}
        for paper_id, key in self.db.execute(
            f"SELECT paper_id, name_key FROM authorships WHERE paper_id IN "
            f"({', '.join('?' * len(ids))}) ORDER BY position",
            ids,
        ):
            surnames.setdefault(paper_id, []).append(key)
        return [
            TitleCandidate(
                r["arxiv_id"], r["title"], tuple(surnames.get(r["id"], ())), r["published"]
            )
            for r in rows
        ]

    def title_doc_freq(self, stem: str) -> int:
        """How many papers use this (Porter-stemmed) word anywhere (title, authors, abstract)."""
        row = self.db.execute(
            "SELECT doc FROM papers_vocab WHERE term >= ? AND term <= ?", (stem, stem)
        ).fetchone()
        return int(row[0]) if row else 0

    def papers_by_doi(self, dois: Sequence[str]) -> dict[str, str]:
        """arXiv ids of stored papers by DOI (a paper's DOI field may list several)."""
        found: dict[str, str] = {}
        for doi in dois:
            row = self.db.execute(
                "SELECT arxiv_id FROM papers WHERE lower(doi) = ? OR lower(doi) LIKE ? "
                "OR lower(doi) LIKE ? LIMIT 1",
                (doi, f"{doi} %", f"% {doi}"),
            ).fetchone()
            if row:
                found[doi] = row[0]
        return found

    def stub_ids(self, limit: int, max_lookups: int = 5) -> list[str]:
        """Papers known only by their id, least asked for first."""
        rows = self.db.execute(
            "SELECT arxiv_id FROM papers WHERE content_hash IS NULL AND lookups < ? "
            "ORDER BY lookups, id LIMIT ?",
            (max_lookups, limit),
        )
        return [r[0] for r in rows]

    def count_lookups(self, arxiv_ids: Sequence[str]) -> None:
        with self.transaction():
            self.db.executemany(
                "UPDATE papers SET lookups = lookups + 1 WHERE arxiv_id = ?",
                [(a,) for a in arxiv_ids],
            )

    def paper_count(self) -> int:
        """About how many papers the library has, instantly (for word weights and display).

        The highest row id: it counts stubs and deleted rows too, but costs
        nothing, where an exact count reads the whole table (seconds at a
        million papers, on every linking or related-papers call).
        """
        return int(self.db.execute("SELECT max(id) FROM papers").fetchone()[0] or 0)

    def word_doc_freq(self, word: str, cap: int) -> int:
        """How many papers use ``word`` (as the index stems it); counting stops at ``cap``.

        A word in more than ``cap`` papers is common; how common no longer matters.
        """
        row = self.db.execute(
            "SELECT count(*) FROM (SELECT 1 FROM papers_fts WHERE papers_fts MATCH ? LIMIT ?)",
            (quoted(QueryTerm(word)), cap),
        ).fetchone()
        return int(row[0])

    def recent_papers(self, limit: int, before: str | None = None) -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT id, arxiv_id, title, authors, primary_category, published, updated, "
            "latest_version, modified FROM papers "
            "WHERE content_hash IS NOT NULL AND published IS NOT NULL "
            "AND (? IS NULL OR published < ?) ORDER BY published DESC LIMIT ?",
            (before, before, limit),
        )
        return [dict(r) for r in rows]

    def recent_items(self, limit: int) -> list[dict[str, Any]]:
        """Newest items with the papers they record or mention."""
        rows = self.db.execute(
            "SELECT i.id, i.kind, i.title, i.url, i.author, i.account, i.engagement, "
            "i.key, i.reply_parent, i.thread_root, i.published, i.source_id, "
            "(SELECT sc.id FROM identities d JOIN scholars sc ON sc.id = d.scholar_id "
            " WHERE d.kind = 'bluesky-did' AND sc.followed = 1 AND d.value = CASE "
            "  WHEN i.key LIKE 'repost:%' THEN substr(i.key, 8, instr(substr(i.key, 8), ':') - 1)"
            "  ELSE i.account END) AS followed_scholar, "
            "(SELECT bot FROM accounts a WHERE a.id = i.account) AS bot, "
            "COALESCE(i.published, i.first_seen) AS time, s.kind AS source_kind, "
            "COALESCE(s.title, s.address) AS source, "
            "(SELECT arxiv_id FROM papers WHERE id = i.paper_id) AS record_of, "
            "(SELECT group_concat(p.arxiv_id, ' ') FROM mentions m JOIN papers p "
            " ON p.id = m.paper_id WHERE m.item_id = i.id) AS mentioned "
            "FROM items i JOIN sources s ON s.id = i.source_id "
            "ORDER BY time DESC LIMIT ?",
            (limit,),
        )
        return [dict(r) for r in rows]

    def _items(self, where: str, args: Sequence[Any], order: str = "i.id") -> list[dict[str, Any]]:
        rows = self.db.execute(
            "SELECT i.id, i.kind, i.title, i.url, i.author, i.text, i.html, i.published, "
            "i.engagement, i.extra, i.source_id, COALESCE(s.title, s.address) AS source, "
            "s.kind AS source_kind, (SELECT arxiv_id FROM papers WHERE id = i.paper_id) "
            "AS record_of FROM items i JOIN sources s ON s.id = i.source_id "
            f"WHERE {where} ORDER BY {order}",
            list(args),
        )
        items = []
        for row in rows:
            item = dict(row)
            item["engagement"] = orjson.loads(item["engagement"])
            item["extra"] = orjson.loads(item["extra"])
            item["papers"] = [
                dict(m) for m in self.db.execute(
                    "SELECT p.arxiv_id, p.title, m.method, m.confidence FROM mentions m "
                    "JOIN papers p ON p.id = m.paper_id WHERE m.item_id = ? "
                    "ORDER BY m.confidence DESC, p.arxiv_id", (row["id"],))
            ]  # fmt: skip
            items.append(item)
        return items

    def get_item(self, item_id: int) -> dict[str, Any]:
        """One item (an article, a note, a post) with the papers it names."""
        found = self._items("i.id = ?", [item_id])
        if not found:
            raise NotFound(f"no item with id {item_id}")
        return found[0]

    def source_items(self, source_id: int, kind: str) -> list[dict[str, Any]]:
        """A source's items of one kind in the order the source gave them."""
        return self._items("i.source_id = ? AND i.kind = ?", [source_id, kind])

    def daily_days(self) -> list[str]:
        rows = self.db.execute(
            "SELECT DISTINCT json_extract(extra, '$.featured_day') AS day FROM items "
            "WHERE kind = 'daily' AND day IS NOT NULL ORDER BY day DESC LIMIT 60"
        )
        return [r[0] for r in rows]

    def daily_items(self, day: str) -> list[dict[str, Any]]:
        """Daily-papers entries featured on ``day``, most upvoted first."""
        return self._items(
            "i.kind = 'daily' AND json_extract(i.extra, '$.featured_day') = ?",
            [day],
            "COALESCE(json_extract(i.engagement, '$.upvotes'), 0) DESC, i.id",
        )

    def followed_authorships(self, arxiv_ids: Sequence[str], bar: float) -> dict[str, list[str]]:
        """Names of followed scholars each paper is attributed to (at or above ``bar``)."""
        if not arxiv_ids:
            return {}
        rows = self.db.execute(
            "SELECT p.arxiv_id, s.name FROM authorships a JOIN papers p ON p.id = a.paper_id "
            "JOIN scholars s ON s.id = a.scholar_id WHERE s.followed = 1 AND a.confidence >= ? "
            f"AND p.arxiv_id IN ({', '.join('?' * len(arxiv_ids))}) ORDER BY a.position",
            (bar, *arxiv_ids),
        )
        found: dict[str, list[str]] = {}
        for arxiv_id, name in rows:
            found.setdefault(arxiv_id, []).append(name)
        return found

    def scholar_names(self, scholar_ids: Iterable[int]) -> dict[int, str]:
        ids = sorted(set(scholar_ids))
        if not ids:
            return {}
        rows = self.db.execute(
            f"SELECT id, name FROM scholars WHERE id IN ({', '.join('?' * len(ids))})", ids
        )
        return {r[0]: r[1] for r in rows}

    def followed_categories(self) -> set[str]:
        """arXiv categories the user follows as sources (``cat:cs.LG``)."""
        rows = self.db.execute(
            "SELECT address FROM sources WHERE kind = 'arxiv-api' AND address LIKE 'cat:%' "
            "AND enabled = 1"
        )
        return {r[0][4:] for r in rows}

    def papers_by_ids(self, arxiv_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        if not arxiv_ids:
            return {}
        rows = self.db.execute(
            "SELECT arxiv_id, title, authors, primary_category, published, updated, "
            "latest_version FROM papers WHERE arxiv_id IN (SELECT value FROM json_each(?))",
            (_json(list(arxiv_ids)),),
        )
        return {r["arxiv_id"]: dict(r) for r in rows}


def authors_from_rows(rows: Iterable[dict[str, Any]]) -> list[Author]:
    """Authorship rows back into :class:`Author` objects (for re-derivation)."""
    return [Author(name=r["name"], keyname=r["keyname"], forenames=r["forenames"]) for r in rows]
