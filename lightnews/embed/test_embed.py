"""Embedding, the vector index and search by meaning, on the demo library.

These need the semantic extra (CI installs it); without it they skip and
say so, and ``test_without_the_extra_search_is_lexical_and_says_why`` covers
what a user without it sees.
"""

from __future__ import annotations

import importlib.util
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from lightnews.embed import embed_papers, forget_cached, open_semantic
from lightnews.embed.index import VectorIndex
from lightnews.model import SearchFilters
from lightnews.search import MEANING_FLOOR, related_papers, search_papers
from lightnews.settings import Settings
from lightnews.store import SQLiteStore

semantic_extra = pytest.mark.skipif(
    any(importlib.util.find_spec(m) is None for m in ("faiss", "model2vec", "numpy")),
    reason="needs the semantic extra: pip install -e '.[semantic]'",
)


@pytest.fixture
def library(demo_database: Path, tmp_path: Path) -> Iterator[SQLiteStore]:
    """A private copy of the demo library (built with its vectors when the extra is here)."""
    db = tmp_path / "library.db"
    shutil.copy(demo_database, db)
    for extra in demo_database.parent.glob(demo_database.name + ".*"):
        shutil.copy(extra, tmp_path / extra.name.replace(demo_database.name, db.name))
    forget_cached()
    store = SQLiteStore(db)
    yield store
    store.close()
    forget_cached()


@pytest.fixture
def on() -> Settings:
    return Settings(environ={})


@semantic_extra
def test_the_demo_library_is_embedded_and_a_rerun_has_nothing_to_do(
    library: SQLiteStore, on: Settings
) -> None:
    titled = library.db.execute("SELECT count(*) FROM papers WHERE title != ''").fetchone()[0]
    assert library.vector_count("static") == titled > 10
    assert library.count_unembedded() == 0
    again = embed_papers(library, on)
    assert (again.embedded, again.remaining) == (0, 0)
    index_file, meta = VectorIndex.paths(library.path, "static")
    assert index_file.exists() and meta.exists()


@semantic_extra
def test_search_finds_by_meaning_what_shares_no_word_with_the_query(
    library: SQLiteStore, on: Settings
) -> None:
    found = search_papers(library, "cheaper attention for long sequences", settings=on)
    assert found.mode == "hybrid" and found.note is None
    assert found[0].title.startswith("Sparse Ring Attention")
    assert found[0].matched == ("meaning",)
    # Words and meaning agreeing put a paper first; both are named on the hit.
    both = search_papers(library, "few-step diffusion distillation with consistency", settings=on)
    assert both[0].arxiv_id == "2511.01186" and set(both[0].matched) == {"words", "meaning"}


@semantic_extra
def test_a_surname_or_nonsense_has_no_neighbours_by_meaning(
    library: SQLiteStore, on: Settings
) -> None:
    assert search_papers(library, "banana bread recipe", settings=on) == []
    for hit in search_papers(library, "Lindqvist", settings=on):
        assert hit.matched == ("words",)


@semantic_extra
def test_made_up_words_and_a_phrase_no_paper_is_about_give_no_invented_results(
    library: SQLiteStore, on: Settings
) -> None:
    nothing = search_papers(library, "zzzxqy", settings=on)
    assert nothing == [] and nothing.note is not None and "no results" in nothing.note
    # A paraphrase the static encoder holds at 0.34 is below its fitted floor: the
    # user is told so rather than shown the library's closest papers.
    paraphrase = search_papers(library, "benchmark leakage into training data", settings=on)
    assert paraphrase == [] and "close enough in meaning" in (paraphrase.note or "")
    # "key-value cache": the one paper with those words, not nine papers near by meaning.
    kv = search_papers(library, "key-value cache", settings=on)
    assert [h.title.split(":")[0] for h in kv] == ["Sparse Ring Attention"]
    assert "words" in kv[0].matched


@semantic_extra
def test_filters_and_excluded_words_apply_to_hits_found_by_meaning(
    library: SQLiteStore, on: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The floor under hits by meaning alone is lowered: this is about filters.
    monkeypatch.setitem(MEANING_FLOOR, "static", 0.3)
    query = "cheaper attention for long sequences"
    everything = search_papers(library, query, settings=on)
    titles = [h.title for h in everything]
    assert any("Sparse Ring Attention" in t for t in titles)
    assert any("Linear-Time Kernelized Attention" in t for t in titles)
    robotics = search_papers(library, query, settings=on, filters=SearchFilters(subject="cs.RO"))
    assert robotics and len(robotics) < len(everything)
    for hit in robotics:  # the subject filter matches any of a paper's categories
        assert "cs.RO" in library.get_paper(hit.arxiv_id).categories
    without = search_papers(library, query + " -ring", settings=on)
    assert not any("Ring" in h.title for h in without)
    assert any("Kernelized" in h.title for h in without)


@semantic_extra
def test_paging_through_fused_results_never_repeats_a_paper(
    library: SQLiteStore, on: Settings
) -> None:
    pages = [search_papers(library, "learning", settings=on, limit=4, offset=n * 4)
             for n in range(4)]  # fmt: skip
    ids = [h.arxiv_id for page in pages for h in page]
    assert len(ids) == len(set(ids)) > 4


@semantic_extra
def test_related_papers_fuse_meaning_and_words_and_leave_the_paper_out(
    library: SQLiteStore, on: Settings
) -> None:
    related = related_papers(library, "2511.18342", limit=5, settings=on)
    assert related.mode == "hybrid"
    assert "2511.18342" not in [h.arxiv_id for h in related]
    # The other attention paper is the nearest by any measure.
    assert related[0].arxiv_id == "2510.18421"
    assert any("meaning" in h.matched for h in related)


@semantic_extra
def test_a_changed_abstract_is_embedded_again_and_the_index_follows(
    library: SQLiteStore, on: Settings
) -> None:
    paper_id = library.db.execute("SELECT id FROM papers WHERE arxiv_id = '2510.03172'").fetchone()[
        0
    ]
    with library.transaction():
        library.db.execute(
            "UPDATE papers SET title = 'Protein folding with equivariant networks', "
            "abstract = 'We predict protein structure from amino acid sequences.' WHERE id = ?",
            (paper_id,),
        )
    assert library.count_unembedded() == 1
    assert library.paper_vector("2510.03172", "static") is None
    report = embed_papers(library, on)
    assert report.embedded == 1 and report.remaining == 0
    found = search_papers(library, "predicting the structure of proteins", settings=on)
    assert found[0].arxiv_id == "2510.03172"
    # A fresh process (a server started later) loads the saved index and agrees.
    forget_cached()
    again = search_papers(library, "predicting the structure of proteins", settings=on)
    assert again[0].arxiv_id == "2510.03172"


@semantic_extra
def test_switching_encoders_drops_the_old_vectors(library: SQLiteStore, on: Settings) -> None:
    library.save_vectors("other-model", [(1, b"\0\0" * 8)])
    assert library.other_models("static")
    embed_papers(library, on)
    assert not library.other_models("static")
    assert library.count_unembedded() == 0


@semantic_extra
def test_a_large_library_gets_the_inverted_file_index(
    library: SQLiteStore, on: Settings, monkeypatch: pytest.MonkeyPatch
) -> None:
    import numpy as np

    from lightnews.embed import index as index_module

    monkeypatch.setattr(index_module, "EXACT_UP_TO", 4)
    semantic = open_semantic(library, on)
    built = VectorIndex.build(library, "static", semantic.encoder.dim)
    assert built.size == library.vector_count("static")
    assert "IVF" in type(built._index).__name__
    found = semantic.vector_of("2511.18342")
    assert found is not None
    nearest = built.search(found[1].astype(np.float32), 3)
    assert nearest[0][0] == found[0] and nearest[0][1] > 0.99


@semantic_extra
def test_a_replaced_database_does_not_inherit_the_old_index(
    library: SQLiteStore, on: Settings, tmp_path: Path
) -> None:
    index_file, meta = VectorIndex.paths(library.path, "static")
    other = SQLiteStore(tmp_path / "other.db")
    shutil.copy(index_file, VectorIndex.paths(other.path, "static")[0])
    shutil.copy(meta, VectorIndex.paths(other.path, "static")[1])
    other.db.execute(
        "INSERT INTO papers (arxiv_id, title, abstract, content_hash, first_seen, modified) "
        "VALUES ('2501.00001', 'Protein folding', 'Structures of proteins.', 'x', '', '')"
    )
    embed_papers(other, on)
    found = search_papers(other, "protein structure prediction", settings=on)
    assert [h.arxiv_id for h in found] == ["2501.00001"]
    other.close()


def test_without_the_extra_search_is_lexical_and_says_why(
    library: SQLiteStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    real_find_spec = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util,
        "find_spec",
        lambda name, *a: None if name == "faiss" else real_find_spec(name, *a),
    )
    forget_cached()
    monkeypatch.setattr("lightnews.embed._encoders", {})
    found = search_papers(library, "attention", settings=Settings(environ={}))
    assert found.mode == "lexical" and found
    assert found.note is not None and "faiss-cpu" in found.note and "semantic" in found.note
    related = related_papers(library, "2511.18342", settings=Settings(environ={}))
    assert related.mode == "lexical" and "faiss-cpu" in (related.note or "")


def test_semantic_off_is_lexical_and_says_so(library: SQLiteStore) -> None:
    off = Settings(environ={"LIGHTNEWS_SEMANTIC": "off"})
    found = search_papers(library, "attention", settings=off)
    assert found.mode == "lexical" and "off" in (found.note or "")
    assert all(h.matched == ("words",) for h in found)
