"""Search by words with more matches than the ranking window, on both backends.

A query with more than ``SEARCH_WINDOW`` matches and no filter ranks the newest
``SEARCH_WINDOW`` of them. PostgreSQL finds that window by id ranges from the
newest paper back instead of reading every match (``PostgresStore._windowed_search``);
its answers must be exactly those of the plain query it replaced, kept here as
``_plain_query``. The window is made small (40) so a few hundred papers have
many more matches than it.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import new_pg_database
from lightnews.ingest.bulk import import_snapshot
from lightnews.ingest.test_bulk import _record
from lightnews.model import QueryTerm
from lightnews.store import CommonStore, Store
from lightnews.store.views import PaperHit

STAMP = "2025-06-10T00:00:00Z"
WINDOW = 40
PAPERS = 400


def _paper(n: int) -> dict[str, Any]:
    """Paper ``n``: 'alpha' everywhere, 'beta' in every third title, 'gamma' in every
    fiftieth abstract, 'delta' only in the oldest paper's title, 'zeta' in the older
    half's abstracts (the planner's estimate of it is wrong for the newest papers);
    lengths vary."""
    title = f"Paper {n} on alpha" + (" beta" if n % 3 == 0 else "") + (" delta" if n == 1 else "")
    abstract = f"We study alpha {'alpha ' * (n % 5)}here." + (" gamma" if n % 50 == 0 else "")
    abstract += " zeta" if n <= PAPERS // 2 else ""
    return _record(n, title=title, abstract=abstract)


def _fill(store: Store, folder: Path) -> None:
    path = folder / "snapshot.jsonl"
    path.write_bytes(b"".join(orjson.dumps(_paper(n)) + b"\n" for n in range(1, PAPERS + 1)))
    import_snapshot(store, path, now=STAMP, workers=0, batch_size=100)


@pytest.fixture
def library(store: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Store:
    from lightnews.store import search_common

    monkeypatch.setattr(search_common, "SEARCH_WINDOW", WINDOW)
    _fill(store, tmp_path)
    return store


@pytest.fixture(scope="module")
def pg_library(
    pg_server: str, worker_id: str, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Any]:
    """The same papers in one PostgreSQL library for the whole module (filled once)."""
    from lightnews.store import search_common
    from lightnews.store.postgres import PostgresStore

    url, drop = new_pg_database(pg_server, worker_id)
    with pytest.MonkeyPatch.context() as patch, PostgresStore(url, pool_size=2) as store:
        patch.setattr(search_common, "SEARCH_WINDOW", WINDOW)
        _fill(store, tmp_path_factory.mktemp("window"))
        yield store
    drop()


def _newest(store: CommonStore, count: int) -> set[str]:
    rows = store.db.execute(
        "SELECT arxiv_id FROM papers ORDER BY id DESC LIMIT ?", (count,)
    ).fetchall()
    return {r[0] for r in rows}


def test_a_common_word_is_ranked_among_the_newest_window_of_its_matches(
    library: CommonStore,
) -> None:
    found = library.search_papers([QueryTerm("alpha")], 500)
    assert len(found) == WINDOW  # every paper matches; only the window is ranked
    assert {h.arxiv_id for h in found} == _newest(library, WINDOW)
    # Title words weigh more: the newest papers with 'beta' in the title come first.
    both = library.search_papers([QueryTerm("alpha"), QueryTerm("beta")], 500)
    assert len(both) == WINDOW and all("beta" in h.title for h in both)
    # Rare words: every match, the oldest paper too.
    assert [h.arxiv_id for h in library.search_papers([QueryTerm("delta")], 10)] == ["2506.00001"]
    assert len(library.search_papers([QueryTerm("gamma")], 50)) == PAPERS // 50
    assert library.search_papers([QueryTerm("epsilon")], 10) == []


def _plain_query(store: Any, terms: list[QueryTerm], limit: int, offset: int) -> list[PaperHit]:
    """The PostgreSQL query before the window by id ranges: every match read, the
    newest ``WINDOW`` kept, ranked."""
    from lightnews.store.pg_search import RANK_WEIGHTS, tsquery_sql

    built = tsquery_sql(terms)
    assert built is not None
    tsquery, args = built
    rows = store.db.execute(
        "WITH q AS (SELECT " + tsquery + " AS q), m AS ("
        "SELECT p.id, p.arxiv_id, p.title, p.published, p.primary_category, p.search "
        f"FROM papers p, q WHERE p.search @@ q.q ORDER BY p.id DESC LIMIT {WINDOW}) "
        f"SELECT m.arxiv_id, m.title, m.published, m.primary_category, "
        f"ts_rank('{RANK_WEIGHTS}', m.search, q.q) AS score FROM m, q "
        "ORDER BY score DESC, m.id DESC LIMIT ? OFFSET ?",
        (*args, limit, offset),
    )
    return [PaperHit(**r) for r in rows]


QUERIES = [
    [QueryTerm("alpha")],  # every paper: the window is full at once
    [QueryTerm("beta")],  # one in three: the span grows
    [QueryTerm("alpha"), QueryTerm("beta")],
    [QueryTerm("gamma")],  # eight, spread out: fewer than the window, the whole library read
    [QueryTerm("delta")],  # the oldest paper alone
    [QueryTerm("epsilon")],  # none
    [QueryTerm("zeta")],  # half, none of them among the newest: the first span is too short
    [QueryTerm("alp", prefix=True)],
    [QueryTerm("alpha"), QueryTerm("beta", exclude=True)],
    [QueryTerm("on alpha")],  # a phrase
]


@pytest.mark.parametrize("terms", QUERIES, ids=lambda t: " ".join(x.words for x in t))
@pytest.mark.parametrize(("limit", "offset"), [(50, 0), (10, 0), (10, 25), (10, 60)])
def test_postgresql_answers_exactly_as_the_plain_query_did(
    pg_library: Any, terms: list[QueryTerm], limit: int, offset: int
) -> None:
    found = pg_library.search_papers(terms, limit, offset)
    assert found == _plain_query(pg_library, terms, limit, offset)


def test_postgresql_answers_as_before_with_holes_in_the_ids(pg_url: str, tmp_path: Path) -> None:
    from lightnews.store import search_common
    from lightnews.store.postgres import PostgresStore

    with pytest.MonkeyPatch.context() as patch, PostgresStore(pg_url, pool_size=2) as store:
        patch.setattr(search_common, "SEARCH_WINDOW", WINDOW)
        _fill(store, tmp_path)
        store.db.execute(  # papers gone (merged, deleted): the ids have gaps at the newest end
            "DELETE FROM authorships WHERE paper_id > 300 AND mod(paper_id, 7) = 0"
        )
        store.db.execute("DELETE FROM papers WHERE id > 300 AND mod(id, 7) = 0")
        assert store.db.execute("SELECT count(*) FROM papers").fetchone()[0] < PAPERS
        for terms in QUERIES:
            assert store.search_papers(terms, 50) == _plain_query(store, terms, 50, 0)
