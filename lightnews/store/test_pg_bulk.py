"""A bulk import on both backends: the same papers, and PostgreSQL's full-text index back after.

Into PostgreSQL a large import sets the GIN index over papers' words aside and
builds it once at the end (``PostgresStore.bulk_import``); a library whose
import stopped half way gets it back when it is next opened.
"""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from lightnews.bulk import import_snapshot
from lightnews.model import QueryTerm
from lightnews.store import Store
from lightnews.test_bulk import _record

STAMP = "2025-06-10T00:00:00Z"


def _snapshot(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "snapshot.jsonl"
    path.write_bytes(b"".join(orjson.dumps(_record(n)) + b"\n" for n in range(1, count + 1)))
    return path


def _has_search_index(store: Store) -> bool:
    if not store.vectors_indexed:  # SQLite: its FTS5 table is the index
        return True
    return store.db.execute("SELECT to_regclass('papers_search')").fetchone()[0] is not None  # type: ignore[attr-defined]


def test_a_bulk_import_stores_every_paper_and_leaves_the_word_index_whole(
    store: Store, tmp_path: Path
) -> None:
    path = _snapshot(tmp_path, 300)
    summary = import_snapshot(store, path, now=STAMP, workers=0, batch_size=50)
    assert summary.records == 300 and summary.saved.papers_new == 300
    assert _has_search_index(store)
    found = store.search_papers([QueryTerm("lindqvist")], 500)
    assert len(found) == 300
    # Again: nothing changes, and the index stays.
    again = import_snapshot(store, path, now=STAMP, workers=0)
    assert again.saved.unchanged == 300 and _has_search_index(store)


def test_an_interrupted_import_gets_its_word_index_back_on_the_next_open(
    store: Store, tmp_path: Path
) -> None:
    if not store.vectors_indexed:
        pytest.skip("PostgreSQL sets its full-text index aside during an import")
    from lightnews.store.postgres import PostgresStore

    assert isinstance(store, PostgresStore)
    with pytest.raises(RuntimeError), store.bulk_import(expected=1000):
        assert not _has_search_index(store)  # set aside: the import is larger than the library
        raise RuntimeError("the import stopped")
    assert _has_search_index(store)  # built again on the way out
    store.db.execute("DROP INDEX papers_search")  # as a killed import leaves it
    again = PostgresStore(store.url, pool_size=1)
    try:
        assert _has_search_index(again)
    finally:
        again.close()
    # A small import into a larger library keeps the index as it is.
    import_snapshot(store, _snapshot(tmp_path, 20), now=STAMP, workers=0)
    with store.bulk_import(expected=5):
        assert _has_search_index(store)
