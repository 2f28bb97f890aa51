"""Search by meaning on both backends: FAISS beside SQLite, pgvector's HNSW in PostgreSQL.

One results contract (words and meaning fused, the meaning floor, filters,
excluded words) whichever index answers.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from lightnews.embed import forget_cached, open_semantic
from lightnews.embed.encoders import missing_packages
from lightnews.embed.index import DatabaseVectorIndex, VectorIndex
from lightnews.model import SearchFilters
from lightnews.search import MEANING_FLOOR, search_papers
from lightnews.settings import Settings
from lightnews.store import Store, open_store

ON = Settings(environ={})

pytestmark = pytest.mark.skipif(
    bool(missing_packages(str(ON.semantic))),
    reason="needs the semantic extra: pip install -e '.[semantic]'",
)


@pytest.fixture
def library(demo_library: str) -> Iterator[Store]:
    forget_cached()
    store = open_store(demo_library)
    yield store
    store.close()
    forget_cached()


def test_postgresql_answers_from_its_own_index_and_sqlite_from_faiss(library: Store) -> None:
    semantic = open_semantic(library, ON)
    if library.vectors_indexed:
        assert isinstance(semantic.index, DatabaseVectorIndex)
        assert not VectorIndex.paths(library.path, semantic.encoder.name)[0].exists()
    else:
        assert isinstance(semantic.index, VectorIndex)
    vector = semantic.encoder.encode(["cheaper attention for long sequences"])[0]
    nearest = semantic.nearest_to_vector(vector, 5)
    assert len(nearest) == 5
    assert [s for _, s in nearest] == sorted((s for _, s in nearest), reverse=True)
    # The demo library is small: the index's answer is the exact one.
    everything = [int(i) for i, _ in semantic.exact(vector, [i for i, _ in nearest])]
    assert everything == [i for i, _ in nearest]


def test_search_by_meaning_keeps_one_contract_on_both_backends(
    library: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    found = search_papers(library, "cheaper attention for long sequences", settings=ON)
    assert found.mode == "hybrid"
    assert found[0].title.startswith("Sparse Ring Attention") and found[0].matched == ("meaning",)
    both = search_papers(library, "few-step diffusion distillation with consistency", settings=ON)
    assert both[0].arxiv_id == "2511.01186" and set(both[0].matched) == {"words", "meaning"}
    # The floor: nonsense has no neighbours by meaning.
    nothing = search_papers(library, "zzzxqy", settings=ON)
    assert nothing == [] and nothing.note is not None and "no results" in nothing.note
    # Filters and excluded words apply to hits found by meaning (floor lowered to see them).
    monkeypatch.setitem(MEANING_FLOOR, str(ON.semantic), 0.2)
    query = "cheaper attention for long sequences"
    everything = search_papers(library, query, settings=ON)
    robotics = search_papers(library, query, settings=ON, filters=SearchFilters(subject="cs.RO"))
    assert robotics and len(robotics) < len(everything)
    for hit in robotics:
        assert "cs.RO" in library.get_paper(hit.arxiv_id).categories
    without = search_papers(library, query + " -ring", settings=ON)
    assert without and not any("Ring" in h.title for h in without)
    # Only words to leave out: nothing is searched, and the note says why.
    only_out = search_papers(library, "-attention", settings=ON)
    assert only_out == [] and only_out.note is not None
    assert only_out.note.startswith("no words to search for")
