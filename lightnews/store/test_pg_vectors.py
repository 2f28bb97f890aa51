"""Nearest papers by meaning on PostgreSQL: pgvector's HNSW index, checked against exact cosine."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from typing import Any

import pytest

from lightnews.model import QueryTerm, SearchFilters
from lightnews.store.connection import Cursor
from lightnews.store.pg_vectors import vector_index_name
from lightnews.store.postgres import PostgresStore

psycopg = pytest.importorskip("psycopg", reason="PostgreSQL tests need the server extra")
np = pytest.importorskip("numpy", reason="the vectors are made with numpy")

MODEL = "test-encoder"
DIM = 32
PAPERS = 5000  # below a few thousand rows the planner may sort them all instead


def _blob(vector: object) -> bytes:
    return bytes(np.asarray(vector, dtype="<f2").tobytes())


@pytest.fixture(scope="module")
def library(
    pg_server: str, worker_id: str
) -> Iterator[tuple[PostgresStore, dict[int, object], dict[int, str]]]:
    """A small library (one per module): papers in two subjects, each with a random unit
    vector. The tests only read it."""
    from conftest import new_pg_database

    url, drop = new_pg_database(pg_server, worker_id)
    store = PostgresStore(url, pool_size=2)
    rng = np.random.default_rng(7)
    # Every fourth paper is about robots (cs.RO), every tenth mentions transformers.
    store.db.execute(
        "INSERT INTO papers (arxiv_id, title, abstract, categories, primary_category, published, "
        "first_seen, modified) SELECT format('2501.%s', lpad(n::text, 5, '0')), "
        "format('Paper %s', n), CASE WHEN n % 10 = 0 THEN 'A study of transformers.' "
        "ELSE 'A study.' END, CASE WHEN n % 4 = 0 THEN 'cs.RO' ELSE 'cs.CL' END, "
        "CASE WHEN n % 4 = 0 THEN 'cs.RO' ELSE 'cs.CL' END, '2025-01-01', 'now', 'now' "
        "FROM generate_series(0, ?) AS n",
        (PAPERS - 1,),
    )
    ids = [int(r[0]) for r in store.db.execute("SELECT id FROM papers ORDER BY id")]
    vectors: dict[int, object] = {}
    for paper_id in ids:
        v = rng.normal(size=DIM)
        vectors[paper_id] = (v / np.linalg.norm(v)).astype(np.float16)
    store.save_vectors(MODEL, [(i, _blob(v)) for i, v in vectors.items()])
    categories = {
        int(r[0]): r[1] for r in store.db.execute("SELECT id, primary_category FROM papers")
    }
    store.db.execute("ANALYZE")
    yield store, vectors, categories
    store.close()
    drop()


def _recall(found: list[tuple[int, float]], exact: list[int]) -> float:
    return len({i for i, _ in found} & set(exact)) / len(exact)


def _exact(vectors: dict[int, object], query: object, allowed: set[int] | None = None) -> list[int]:
    ids = [i for i in vectors if allowed is None or i in allowed]
    matrix = np.stack([np.asarray(vectors[i], dtype=np.float32) for i in ids])
    scores = matrix @ np.asarray(query, dtype=np.float32)
    return [ids[j] for j in np.argsort(-scores)]


def test_the_query_plan_uses_the_encoders_hnsw_index(
    library: tuple[PostgresStore, dict[int, object], dict[int, str]],
) -> None:
    store, vectors, _ = library
    index = vector_index_name(MODEL, DIM)
    assert store.db.execute("SELECT 1 FROM pg_indexes WHERE indexname = ?", (index,)).fetchone()
    query = _blob(next(iter(vectors.values())))
    plans: list[str] = []
    real = store.db.execute

    def explain(query: str, params: Sequence[Any] | None = None) -> Cursor:
        if query.startswith("WITH n AS"):
            plans.extend(r[0] for r in real("EXPLAIN " + query, params).fetchall())
        return real(query, params)

    try:
        store.db.execute = explain  # type: ignore[method-assign]
        store.nearest_vectors(MODEL, query, 51)
        store.nearest_vectors(MODEL, query, 51, filters=SearchFilters(subject="cs.RO"))
        exact = store.nearest_vectors(MODEL, query, 51, among=list(vectors)[:50])
    finally:
        del store.db.execute
    text = "\n".join(plans)
    assert text.count(f"Index Scan using {index}") == 2, text
    assert len(exact) == 50


def test_nearest_papers_agree_with_exact_cosine(
    library: tuple[PostgresStore, dict[int, object], dict[int, str]],
) -> None:
    store, vectors, categories = library
    robots = {i for i, c in categories.items() if c == "cs.RO"}
    rng = np.random.default_rng(11)
    recalls: list[float] = []
    for _ in range(10):
        q = rng.normal(size=DIM)
        q = (q / np.linalg.norm(q)).astype(np.float16)
        found = store.nearest_vectors(MODEL, _blob(q), 10)
        # The index is approximate: nearly all of the exact ten, nearest first, each
        # with its true cosine.
        recalls.append(_recall(found, _exact(vectors, q)[:10]))
        for paper_id, similarity in found:
            exact = float(np.asarray(vectors[paper_id], np.float32) @ q.astype(np.float32))
            assert similarity == pytest.approx(exact, abs=2e-3)
        assert [s for _, s in found] == sorted((s for _, s in found), reverse=True)
        # Filtered while scanning: only robots papers, still (nearly) the nearest of them.
        only = store.nearest_vectors(MODEL, _blob(q), 10, filters=SearchFilters(subject="cs.RO"))
        assert len(only) == 10 and {i for i, _ in only} <= robots
        recalls.append(_recall(only, _exact(vectors, q, robots)[:10]))
        # Exactly among given papers: the exact answer.
        some = set(list(vectors)[::7])
        among = store.nearest_vectors(MODEL, _blob(q), 5, among=sorted(some))
        assert [i for i, _ in among] == _exact(vectors, q, some)[:5]
    assert min(recalls) >= 0.8 and sum(recalls) / len(recalls) >= 0.95, recalls


def test_excluded_words_leave_papers_out_of_the_nearest(
    library: tuple[PostgresStore, dict[int, object], dict[int, str]],
) -> None:
    store, vectors, _ = library
    with_word = {
        int(r[0])
        for r in store.db.execute("SELECT id FROM papers WHERE abstract LIKE '%transformers%'")
    }
    assert with_word
    q = next(iter(vectors[i] for i in with_word))
    found = store.nearest_vectors(MODEL, _blob(q), 20, excluded=[QueryTerm("transformers")])
    assert len(found) == 20 and not with_word & {i for i, _ in found}
    assert _recall(found, _exact(vectors, q, set(vectors) - with_word)[:20]) >= 0.8


def test_an_unknown_encoder_finds_nothing_and_a_bad_name_is_refused(
    library: tuple[PostgresStore, dict[int, object], dict[int, str]],
) -> None:
    store, vectors, _ = library
    assert store.nearest_vectors("other", _blob(next(iter(vectors.values()))), 5) == []
    assert store.nearest_vectors("x'; DROP TABLE papers; --", b"\0\0" * DIM, 5) == []
    assert store.paper_count() == PAPERS


def test_vectors_read_back_are_the_bytes_saved(
    library: tuple[PostgresStore, dict[int, object], dict[int, str]],
) -> None:
    """Read in pgvector's binary form (big-endian), handed on as the store keeps them
    (little-endian float16), the same bytes as saved, and as the text form gives them."""
    store, vectors, _ = library
    some = sorted(vectors)[:300]
    read = dict(store.vectors_of(some, MODEL))
    assert read == {i: _blob(vectors[i]) for i in some}
    rows = store.db.execute(
        "SELECT paper_id, vector::text FROM paper_vectors WHERE model = ? AND paper_id = ANY(?)",
        (MODEL, some),
    ).fetchall()
    assert {int(r[0]): store.sql.vector_bytes(r[1]) for r in rows} == read
    batches = [row for batch in store.vectors_after(MODEL, 0) for row in batch]
    assert len(batches) == len(vectors)
    assert all(blob == _blob(vectors[paper]) for _, paper, blob in batches)
