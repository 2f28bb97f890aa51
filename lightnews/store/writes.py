"""Store: writing papers, their authors, and the items that record or mention them.

Written once for both backends, against :class:`~lightnews.store.connection.Queries`.
Writes are idempotent: saving the same batch twice changes nothing, because
papers and items carry a content hash and rows are only rewritten when it
differs. How two records of one paper merge is decided without a database,
in :mod:`lightnews.store.merge`; what a merge changed in a paper's text is
kept as a revision (:mod:`lightnews.store.revisions`). Inserting new papers
in bulk is each backend's own (:meth:`WriteQueries._insert_papers`: SQLite
fills its FTS5 index beside them, PostgreSQL copies them in).
"""

from __future__ import annotations

import re
from abc import abstractmethod
from collections.abc import Sequence
from typing import Any

from lightnews.model import Batch, Item, Paper, item_extra
from lightnews.normalize.identifiers import find_code_in_text
from lightnews.store.connection import Queries, retried
from lightnews.store.downgrade import item_kept_reason
from lightnews.store.merge import (
    PAPER_COLUMNS,
    PreparedPaper,
    hash_values,
    is_stub,
    latest_by_id,
    merged_values,
    prepare_paper,
    to_json,
)
from lightnews.store.views import SaveResult

__all__ = ["WriteQueries", "text_code_links"]

_UPSERT_PAPER = (
    f"INSERT INTO papers ({', '.join(PAPER_COLUMNS)}, first_seen, modified) "
    f"VALUES ({', '.join('?' * len(PAPER_COLUMNS))}, ?, ?) "
    "ON CONFLICT(arxiv_id) DO UPDATE SET "
    + ", ".join(f"{c} = excluded.{c}" for c in PAPER_COLUMNS[1:])
    + ", modified = excluded.modified "
    "WHERE papers.content_hash IS DISTINCT FROM excluded.content_hash"
)
_ITEM_COLUMNS = (
    "kind",
    "title",
    "url",
    "author",
    "text",
    "html",
    "published",
    "updated",
    "links",
    "tags",
    "engagement",
    "extra",
    "payload",
    "account",
    "thread_root",
    "reply_parent",
)
_INSERT_ITEM = (
    f"INSERT INTO items ({', '.join(_ITEM_COLUMNS)}, source_id, key, paper_id, content_hash, "
    f"first_seen, modified) VALUES ({', '.join('?' * (len(_ITEM_COLUMNS) + 6))}) RETURNING id"
)
_UPDATE_ITEM = (
    f"UPDATE items SET {', '.join(c + ' = ?' for c in _ITEM_COLUMNS)}, paper_id = ?, "
    "content_hash = ?, modified = ? WHERE id = ?"
)
_AUTHORS = PAPER_COLUMNS.index("authors")
_NAME_KEY = 2  # in an authorship row of prepare_paper: position, name, name_key, ...
_UPDATED_COLUMN, _ABSTRACT_COLUMN, _COMMENTS_COLUMN = (
    PAPER_COLUMNS.index(c) for c in ("updated", "abstract", "comments")
)
#: What a revision keeps of a paper (lightnews.store.revisions): these paper columns.
_REVISION_COLUMNS = (
    "paper_id",
    "version",
    "title",
    "abstract",
    "authors",
    "comments",
    "categories",
    "journal_ref",
    "withdrawn",
    "seen_at",
)
_INSERT_REVISION = (
    f"INSERT INTO paper_revisions ({', '.join(_REVISION_COLUMNS)}) "
    f"VALUES ({', '.join('?' * len(_REVISION_COLUMNS))}) ON CONFLICT (paper_id, version)"
)
_TEXT_COLUMNS = (
    "title",
    "abstract",
    "authors",
    "comments",
    "categories",
    "journal_ref",
    "withdrawn",
)


def _revision_rows(
    old: dict[str, Any], merged: Sequence[Any], now: str
) -> tuple[tuple[Any, ...], tuple[Any, ...]] | None:
    """The stored text and the merged one as revision rows, when a version or the text moved."""
    new = dict(zip(PAPER_COLUMNS, merged, strict=False))
    moved = (new["latest_version"] or 0) > (old["latest_version"] or 0)
    if not moved and all(new[c] == old[c] for c in _TEXT_COLUMNS):
        return None
    before = (
        old["id"],
        old["latest_version"] or 1,
        *(old[c] for c in _TEXT_COLUMNS),
        old["modified"] or now,
    )
    after = (old["id"], new["latest_version"] or 1, *(new[c] for c in _TEXT_COLUMNS), now)
    return before, after


def text_code_links(values: Sequence[Sequence[Any]], now: str) -> list[tuple[str, str, str]]:
    """``(arxiv_id, url, first seen)`` of the repositories that papers' prepared values
    name in their abstract or comments, dated by the record's update date."""
    return [
        (v[0], url, v[_UPDATED_COLUMN] or now)
        for v in values
        if _may_name_code(v[_ABSTRACT_COLUMN], v[_COMMENTS_COLUMN])
        for url in find_code_in_text(f"{v[_ABSTRACT_COLUMN]} {v[_COMMENTS_COLUMN] or ''}")
    ]


_CODE_HOST_RE = re.compile(r"git(?:hub|lab)\.com", re.I)


def _may_name_code(abstract: str, comments: str | None) -> bool:
    """Whether a repository's host is named in the abstract or comments: the full search
    (a slow regular expression) runs only then. Looking for "git" alone let every
    "digit" and "legitimate" through, 3% of a snapshot's papers."""
    for text in (abstract, comments or ""):
        low = text.lower()
        if "github.com" in low or "gitlab.com" in low:
            return True
        # Outside ASCII the expression's case-blind match knows more letters than lower().
        if not low.isascii() and _CODE_HOST_RE.search(text):
            return True
    return False


class WriteQueries(Queries):
    """Papers, authorships, revisions, code links, items and mentions, as batches arrive."""

    # -- papers --------------------------------------------------------------

    def _existing_papers(self, arxiv_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        # One statement whatever the number of ids (a JSON array): a list of "?" per
        # id would prepare, and cache, a new statement for every batch size.
        # Locked until the transaction ends (PostgreSQL, in one order: no deadlock
        # between two writers of the same papers), as the merge rewrites them.
        rows = self.db.execute(
            f"SELECT id, modified, {', '.join(PAPER_COLUMNS)} FROM papers "
            f"WHERE {self.sql.in_list('arxiv_id')} ORDER BY arxiv_id{self.sql.lock_rows}",
            (self.sql.list_param(sorted(arxiv_ids)),),
        )
        return {row["arxiv_id"]: dict(row) for row in rows}

    def _stored_hashes(self, arxiv_ids: Sequence[str]) -> dict[str, str | None]:
        """Content hashes of the stored papers among ``arxiv_ids`` (None for a stub)."""
        rows = self.db.execute(
            f"SELECT arxiv_id, content_hash FROM papers WHERE {self.sql.in_list('arxiv_id')}",
            (self.sql.list_param(arxiv_ids),),
        )
        return {r[0]: r[1] for r in rows}

    def save_papers(self, papers: Sequence[Paper], now: str) -> SaveResult:
        """Insert or merge papers (and their authorships) in the current transaction."""
        return self.save_prepared([prepare_paper(p) for p in papers], now)

    @retried
    def save_prepared(self, prepared: Sequence[PreparedPaper], now: str) -> SaveResult:
        """:meth:`save_papers` for papers already through :func:`prepare_paper`.

        Only the content hashes of the stored papers are looked up: a paper
        whose fresh values hash to the stored hash is what the merge would
        leave, so it is unchanged; new papers are inserted as prepared; only
        the rest fetch their stored row and go through the merge. The rows a
        merge rewrites are locked when they are read (``Dialect.lock_rows``), so
        two writers of one paper merge in turn, each over the other's result; a
        new paper that another writer inserted first is merged over it (each
        backend's :meth:`_insert_fresh`).
        """
        if not prepared:
            return SaveResult()
        with self.transaction():
            return self._save_prepared(prepared, now)

    def _save_prepared(self, prepared: Sequence[PreparedPaper], now: str) -> SaveResult:
        result = SaveResult()
        latest = latest_by_id(prepared)
        stored = self._stored_hashes(list(latest))
        existing = self._existing_papers(
            [
                arxiv_id
                for arxiv_id, (values, _) in latest.items()
                if arxiv_id in stored and not is_stub(values) and stored[arxiv_id] != values[-1]
            ]
        )
        fresh: list[tuple[Any, ...]] = []
        fresh_authors: list[Sequence[Sequence[Any]]] = []
        rows: list[tuple[Any, ...]] = []
        changed: list[tuple[int, Sequence[Sequence[Any]]]] = []
        stubs: list[tuple[str, str, str]] = []
        revised: list[tuple[tuple[Any, ...], tuple[Any, ...]]] = []
        for arxiv_id, (values, authorships) in latest.items():
            if is_stub(values):  # a stub never overwrites
                if arxiv_id not in stored:
                    stubs.append((arxiv_id, now, now))
                if stored.get(arxiv_id) is None:  # saved as a stub, or still one
                    result.stubs += 1
                else:
                    result.unchanged += 1
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
            kept: list[str] = []
            merged = merged_values(values, old, kept)
            if kept:
                result.warnings.append(
                    f"{arxiv_id}: stored {' and '.join(kept)} kept: the new one is "
                    "the stored one cut short"
                )
            if merged is None:
                result.unchanged += 1
                continue
            rows.append((*merged, now, now))
            result.name_keys.update(a[_NAME_KEY] for a in authorships)
            if old["content_hash"] is not None:
                snapshots = _revision_rows(old, merged, now)
                if snapshots:
                    revised.append(snapshots)
            if merged[_AUTHORS] == values[_AUTHORS] and authorships:
                changed.append((old["id"], authorships))  # its author list is now stored
            if old["content_hash"] is None:
                result.papers_new += 1
            else:
                result.papers_updated += 1
        if stubs:
            self.db.executemany(
                "INSERT INTO papers (arxiv_id, first_seen, modified) VALUES (?, ?, ?) "
                "ON CONFLICT DO NOTHING",
                stubs,
            )
        result.name_keys.update({a[_NAME_KEY] for rows in fresh_authors for a in rows})
        handed_on = bool(fresh) and self._insert_fresh(fresh, fresh_authors, now)
        if rows:
            self._merge_papers(rows)
        if changed:
            self._save_authorships(changed, stale=True)
        linked = [v for v, _ in latest.values()]
        if handed_on:  # their code links go in with them
            new_ids = {r[0] for r in fresh}
            linked = [v for v in linked if v[0] not in new_ids]
        self._save_text_code_links(linked, now)
        if revised:
            # The text before (kept as first seen for its version) and after (its version's
            # newest text): see lightnews.store.revisions.
            self.db.executemany(_INSERT_REVISION + " DO NOTHING", [r[0] for r in revised])
            self.db.executemany(
                _INSERT_REVISION
                + " DO UPDATE SET "
                + ", ".join(f"{c} = excluded.{c}" for c in _REVISION_COLUMNS[2:]),
                [r[1] for r in revised],
            )
        return result

    def _insert_fresh(
        self, fresh: Sequence[tuple[Any, ...]], authors: Sequence[Sequence[Sequence[Any]]], now: str
    ) -> bool:
        """New papers (their rows and authorship rows, in the same order), in this
        transaction; whether their code links were saved too (a backend that hands
        them to other connections saves those there, since the papers are not yet
        visible here)."""
        ids = self._insert_papers(fresh)
        self._save_authorships(
            [(ids[r[0]], a) for r, a in zip(fresh, authors, strict=True) if a], stale=False
        )
        return False

    def _save_text_code_links(self, values: Sequence[Sequence[Any]], now: str) -> None:
        """Repositories a paper's abstract or comments name become its code links.

        A link first seen is dated by the version that brought it (the record's
        update date), so code added in a later version is "released after the paper".
        """
        found = text_code_links(values, now)
        if not found:
            return
        ids = self._paper_ids(sorted({f[0] for f in found}))
        self.db.executemany(
            "INSERT INTO paper_links (paper_id, kind, url, item_id, first_seen) "
            "VALUES (?, 'code', ?, NULL, ?) ON CONFLICT DO NOTHING",
            [(ids[a], url, when) for a, url, when in found if a in ids],
        )

    def _merge_papers(self, rows: Sequence[tuple[Any, ...]]) -> None:
        """Stored papers rewritten with their merged values (rows of ``PAPER_COLUMNS``,
        first seen, modified), in this transaction; their triggers keep the full text."""
        self.db.executemany(_UPSERT_PAPER, rows)

    @abstractmethod
    def _insert_papers(self, rows: Sequence[tuple[Any, ...]]) -> dict[str, int]:
        """New papers (rows of ``PAPER_COLUMNS``, first seen, modified) with their full
        text indexed, in this transaction; their row ids by arXiv id."""

    @abstractmethod
    def _save_authorships(
        self, papers: Sequence[tuple[int, Sequence[Sequence[Any]]]], *, stale: bool
    ) -> None:
        """Authorship rows by paper row id; ``stale``: replace the ones stored before."""

    def _paper_ids(self, arxiv_ids: Sequence[str]) -> dict[str, int]:
        rows = self.db.execute(
            f"SELECT arxiv_id, id FROM papers WHERE {self.sql.in_list('arxiv_id')}",
            (self.sql.list_param(arxiv_ids),),
        )
        return {r[0]: r[1] for r in rows}

    # -- items and mentions ------------------------------------------------------

    @staticmethod
    def _item_values(item: Item) -> list[Any]:
        """Values of ``_ITEM_COLUMNS`` for ``item``."""
        return [
            item.kind,
            item.title,
            item.url,
            item.author,
            item.text,
            item.html,
            item.published,
            item.updated,
            to_json(item.links),
            to_json(item.tags),
            to_json(item.engagement),
            to_json(item_extra(item)),
            item.payload,
            item.account,
            item.thread_root,
            item.reply_parent,
        ]

    @retried
    def save_batch(self, source_id: int, batch: Batch, now: str) -> SaveResult:
        """Store everything one parsed response carried, in one transaction."""
        with self.transaction():
            result = self.save_papers(batch.papers, now)
            result.add(self.save_items(source_id, batch.items, now, well_formed=batch.well_formed))
        return result

    @retried
    def save_items(
        self, source_id: int, items: Sequence[Item], now: str, *, well_formed: bool = True
    ) -> SaveResult:
        """Insert new items, rewrite changed ones, leave identical ones untouched.

        A changed item is not rewritten when the fresh copy is worse (read from
        a document that was not well-formed, or its text cut short): see
        :func:`~lightnews.store.downgrade.item_kept_reason`; the reason is a warning.
        """
        result = SaveResult()
        if not items:
            return result
        with self.transaction():
            # Each item is looked up, then inserted or rewritten: two writers of one source
            # (a refresh and an ingest from a file) take turns; other sources' go side by side.
            self.serialize(f"source:{source_id}")
            wanted = {m.arxiv_id for i in items for m in i.mentions}
            wanted.update(i.paper_id for i in items if i.paper_id)
            self.save_papers([Paper(arxiv_id=a) for a in sorted(wanted)], now)
            paper_ids = self._paper_ids(sorted(wanted))
            for item in items:
                values = self._item_values(item)
                mentions = sorted((m.arxiv_id, m.method, m.confidence) for m in item.mentions)
                content_hash = hash_values([*values, item.paper_id, mentions])
                row = self.db.execute(
                    "SELECT id, content_hash, title, text FROM items "
                    "WHERE source_id = ? AND key = ?",
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
                    stored_copy = {"title": row["title"], "text": row["text"]}
                    reason = item_kept_reason(stored_copy, item, well_formed=well_formed)
                    if reason:
                        result.warnings.append(f"{item.key}: {reason}")
                        result.unchanged += 1
                        continue
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
                code = item.code_links
                sure = [m for m in item.mentions if m.confidence >= 0.9]
                target = item.paper_id or (sure[0].arxiv_id if len(sure) == 1 else None)
                if code and target in paper_ids:
                    # A post or entry about exactly one paper that links a repository.
                    self.db.executemany(
                        "INSERT INTO paper_links (paper_id, kind, url, item_id, first_seen) "
                        "VALUES (?, 'code', ?, ?, ?) ON CONFLICT DO NOTHING",
                        [(paper_ids[target], url, item_id, item.published or now) for url in code],
                    )
                self.db.executemany(
                    "INSERT INTO mentions (item_id, paper_id, method, confidence, evidence, "
                    "paper_version) VALUES (?, ?, ?, ?, ?, "
                    "(SELECT latest_version FROM papers WHERE id = ?)) "
                    "ON CONFLICT (item_id, paper_id) DO UPDATE SET "
                    "method = excluded.method, confidence = excluded.confidence, "
                    "evidence = excluded.evidence, paper_version = excluded.paper_version",
                    [
                        (
                            item_id,
                            paper_ids[m.arxiv_id],
                            m.method,
                            m.confidence,
                            m.evidence,
                            paper_ids[m.arxiv_id],
                        )
                        for m in item.mentions
                    ],
                )
                result.mentions += len(item.mentions)
        return result
