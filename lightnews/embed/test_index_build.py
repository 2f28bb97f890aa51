"""A large embed on both backends: every paper gets its vector, and PostgreSQL's HNSW index
is built once at the end with the memory its graph needs (issue 9, hybrid search at 1M).

pgvector builds an HNSW graph in ``maintenance_work_mem`` and, once the graph
outgrows it, inserts tuple by tuple into the index on disk; inserting a
million vectors one at a time into an index that exists is slower still. So
a large backlog sets the index aside and builds it at the end, sized from the
row count and dimensions, bounded by the ``index_build_memory`` setting.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from lightnews.embed import EmbedReport, embed_papers, forget_cached, open_semantic
from lightnews.embed.encoders import missing_packages
from lightnews.ingest.bulk import import_snapshot
from lightnews.settings import Settings
from lightnews.store import Store
from lightnews.store.pg_vectors import hnsw_build_memory_mb
from lightnews.store.test_pg_bulk import STAMP, _snapshot

pytestmark = pytest.mark.skipif(
    bool(missing_packages("static")),
    reason="needs the semantic extra: pip install -e '.[semantic]'",
)

PAPERS = 300
STATIC = Settings(environ={}).with_overrides(semantic="static", index_build_memory=77)


def _index(store: Store) -> str | None:
    """The name of the HNSW index over the static encoder's vectors (None: none; SQLite
    keeps no index in the database)."""
    if not store.vectors_indexed:
        return None
    row = store.db.execute(  # type: ignore[attr-defined]
        "SELECT indexname FROM pg_indexes WHERE indexname LIKE 'paper_vectors_hnsw_static%'"
    ).fetchone()
    return str(row[0]) if row else None


@pytest.fixture
def library(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    """300 imported papers waiting for vectors; "large" starts at 100 vectors here."""
    from lightnews.store import pg_vectors

    monkeypatch.setattr(pg_vectors, "BULK_VECTORS", 100)
    import_snapshot(store, _snapshot(tmp_path, PAPERS), now=STAMP, workers=0)
    forget_cached()
    assert store.count_unembedded() == PAPERS
    return store


def test_a_large_embed_builds_the_vector_index_once_at_the_end(
    library: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lightnews.store import pg_vectors

    sized: list[tuple[int, int, int]] = []

    def sizing(rows: int, dim: int, cap_mb: int) -> int:
        sized.append((rows, dim, cap_mb))
        return hnsw_build_memory_mb(rows, dim, cap_mb)

    monkeypatch.setattr(pg_vectors, "hnsw_build_memory_mb", sizing)
    during: list[str | None] = []
    report = embed_papers(
        library, STATIC, batch_size=50, progress=lambda r: during.append(_index(library))
    )
    assert report.embedded == PAPERS and report.remaining == 0
    assert library.vector_count("static") == PAPERS
    assert during == [None] * 6  # no index while the vectors arrived
    if library.vectors_indexed:
        # Built once, over all 300, with the memory the setting allows at most.
        assert _index(library) is not None
        assert sized == [(PAPERS, 256, 77)]
        memory = library.db.execute("SHOW maintenance_work_mem").fetchone()[0]  # type: ignore[attr-defined]
        assert memory == "64MB"  # the session's own setting is back
    else:
        assert sized == []
    semantic = open_semantic(library, STATIC)
    some = semantic.vector_of("2506.00007")
    assert some is not None
    assert semantic.nearest_to_vector(some[1], 1)[0][0] == some[0]


def test_a_small_embed_keeps_the_index_and_adds_to_it(library: Store) -> None:
    embed_papers(library, STATIC, limit=50)  # below "large": the index is made at once
    present = _index(library)
    assert (present is not None) == library.vectors_indexed
    during: list[str | None] = []
    embed_papers(
        library, STATIC, limit=60, batch_size=20, progress=lambda r: during.append(_index(library))
    )
    assert during == [present] * 3
    assert library.vector_count("static") == 110


def test_an_embed_stopped_half_way_leaves_the_index_to_the_next_run(library: Store) -> None:
    def stop(report: EmbedReport) -> Any:
        if report.embedded >= 100:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        embed_papers(library, STATIC, batch_size=50, progress=stop)
    assert library.vector_count("static") == 100  # its batches are kept
    assert _index(library) is None  # set aside, not built over half the vectors
    again = embed_papers(library, STATIC, batch_size=50)
    assert again.embedded == PAPERS - 100
    assert (_index(library) is not None) == library.vectors_indexed


def test_vectors_stored_without_their_index_get_it_at_the_next_embed(library: Store) -> None:
    embed_papers(library, STATIC)
    if library.vectors_indexed:  # as after `db copy` into PostgreSQL
        name = _index(library)
        library.db.execute(f"DROP INDEX {name}")  # type: ignore[attr-defined]
        forget_cached()
        library.__dict__.pop("_vector_indexes", None)
    report = embed_papers(library, STATIC)
    assert report.embedded == 0
    assert (_index(library) is not None) == library.vectors_indexed


def test_the_build_memory_holds_the_graph_and_is_bounded() -> None:
    # A million MiniLM vectors: about 1.8 GB, inside the default cap of 2 GB.
    need = hnsw_build_memory_mb(1_000_000, 384, 4096)
    assert 1500 <= need <= 2048
    assert hnsw_build_memory_mb(1_000_000, 384, 1000) == 1000  # the setting bounds it
    assert hnsw_build_memory_mb(10, 384, 4096) == 64  # never under PostgreSQL's default
    assert hnsw_build_memory_mb(2_000_000, 256, 10**6) > hnsw_build_memory_mb(1_000_000, 256, 10**6)
