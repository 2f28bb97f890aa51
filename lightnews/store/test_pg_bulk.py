"""A bulk import on both backends: the same papers, and PostgreSQL's full-text index back after.

Into PostgreSQL a large import sets the GIN index over papers' words aside and
builds it once at the end (``PostgresStore.bulk_import``); a library whose
import stopped half way gets it back when it is next opened. An import over
several connections (:mod:`lightnews.store.pg_bulk`) leaves the library a
one-connection import leaves, row ids and full-text columns included.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import new_pg_database
from lightnews.ingest import bulk
from lightnews.ingest.bulk import import_snapshot
from lightnews.ingest.test_bulk import STAMPS, _counts, _record, _steps
from lightnews.model import QueryTerm
from lightnews.store import CommonStore, Store

STAMP = "2025-06-10T00:00:00Z"


def _snapshot(tmp_path: Path, count: int) -> Path:
    path = tmp_path / "snapshot.jsonl"
    path.write_bytes(b"".join(orjson.dumps(_record(n)) + b"\n" for n in range(1, count + 1)))
    return path


def _has_search_index(store: CommonStore) -> bool:
    if not store.vectors_indexed:  # SQLite: its FTS5 table is the index
        return True
    return store.db.execute("SELECT to_regclass('papers_search')").fetchone()[0] is not None


def test_a_bulk_import_stores_every_paper_and_leaves_the_word_index_whole(
    store: CommonStore, tmp_path: Path
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


#: What an import writes into PostgreSQL, the full-text column included.
_TABLES = {
    "papers": "SELECT p.*, search::text FROM papers p ORDER BY id",
    "authorships": "SELECT * FROM authorships ORDER BY paper_id, position",
    "links": "SELECT paper_id, kind, url, item_id, first_seen FROM paper_links ORDER BY 1, 3",
    "queue": "SELECT paper_id FROM embed_queue ORDER BY paper_id",
    "relink": "SELECT * FROM relink_queue ORDER BY paper_id",
    "revisions": "SELECT * FROM paper_revisions ORDER BY 1, 2, 3",
    "next id": "SELECT last_value FROM papers_id_seq",
}


def _pg_tables(store: Any) -> dict[str, list[tuple[Any, ...]]]:
    return {name: [tuple(r) for r in store.db.execute(sql)] for name, sql in _TABLES.items()}


@pytest.fixture
def two_libraries(pg_server: str, worker_id: str) -> Iterator[tuple[Any, Any]]:
    from lightnews.store.postgres import PostgresStore

    made = [new_pg_database(pg_server, worker_id) for _ in range(2)]
    stores = [PostgresStore(url, pool_size=2) for url, _ in made]
    yield stores[0], stores[1]
    for store in stores:
        store.close()
    for _, drop in made:
        drop()


@pytest.mark.parametrize("connections", [2, 4])
def test_an_import_over_several_connections_leaves_what_one_connection_leaves(
    two_libraries: tuple[Any, Any],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    connections: int,
) -> None:
    """A snapshot with duplicates near and far, then the same again, then one with new
    versions, gaps, withdrawals, new papers and a filled-in stub, twice: chunks of two
    records, so that many are in flight on the side connections when a duplicate
    or a later version of one of their papers comes."""
    one, several = two_libraries
    monkeypatch.setattr(bulk, "WRITE_CHUNK", 2)
    steps = _steps(tmp_path)
    for path in dict.fromkeys(steps):  # papers naming their code, new and repeated
        code = [_record(n, abstract=f"Code: https://github.com/lab/repo{n}") for n in (8, 50, 51)]
        path.write_bytes(path.read_bytes() + b"".join(orjson.dumps(r) + b"\n" for r in code))
    for path, now in zip(steps, [*STAMPS, STAMPS[-1]], strict=True):
        options: dict[str, Any] = {"now": now, "workers": 0, "batch_size": 4}
        alone = import_snapshot(one, path, connections=1, **options)
        side_by_side = import_snapshot(several, path, connections=connections, **options)
        assert _counts(side_by_side.saved) == _counts(alone.saved)
        assert side_by_side.saved.stubs == alone.saved.stubs
        assert _pg_tables(several) == _pg_tables(one)
    assert _pg_tables(one)["links"]  # code links were compared, not two empty lists


def test_a_paper_another_writer_stored_first_is_merged(
    two_libraries: tuple[Any, Any], tmp_path: Path
) -> None:
    """A new paper that another writer stores after the import decided it was new, but
    before a side connection inserts it, is merged over the stored one (counted once),
    not lost and not doubled."""
    from lightnews.sources.arxiv_snapshot import SnapshotErrors, iter_snapshot
    from lightnews.store.merge import prepare_paper
    from lightnews.store.postgres import PostgresStore

    store, _ = two_libraries
    with _snapshot(tmp_path, 2).open("rb") as stream:
        papers = [prepare_paper(p) for p in iter_snapshot(stream, SnapshotErrors())]
    with store.bulk_import(expected=2, connections=2) as late:
        side = store._local.side
        ids = [
            r[0]
            for r in store.db.execute(
                "SELECT nextval(pg_get_serial_sequence('papers', 'id')) FROM generate_series(1, 2)"
            )
        ]  # (as the import reserves them for the two papers it found new)
        other = PostgresStore(store.url, pool_size=1)  # another writer, first
        other.save_prepared(papers[:1], STAMP)
        other.close()
        rows = [(*values, STAMP, STAMP) for values, _ in papers]
        side.insert(ids, rows, [authors for _, authors in papers], STAMP)
    assert late.papers_new == -1 and late.unchanged == 1  # counted new when handed on
    stored = store.db.execute("SELECT arxiv_id FROM papers ORDER BY arxiv_id").fetchall()
    assert [r[0] for r in stored] == ["2506.00001", "2506.00002"]
    assert store.db.execute("SELECT count(*) FROM authorships").fetchone()[0] == 2 + 3  # once each
