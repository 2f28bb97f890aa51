"""The word index of related papers: built, saved, caught up and rebuilt on a real store
(each backend: its text reads are the store's own queries)."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

pytest.importorskip("numpy", reason="the word index needs numpy (the semantic extra)")

from lightnews.embed import lexical
from lightnews.embed.lexical import (
    LexicalIndex,
    analyze,
    forget_lexical,
    keep_lexical_current,
    open_lexical,
)
from lightnews.ingest.bulk import import_snapshot
from lightnews.store import Store

TOPICS = [
    ("Sparse ring attention for long context", "ring attention shards long sequences"),
    ("Ring attention made cheaper", "we make ring attention cheaper on long sequences"),
    ("Protein folding with equivariant networks", "protein structure from amino acids"),
    ("Equivariant networks for molecules", "equivariant message passing predicts molecules"),
    ("Diffusion models distilled in few steps", "few step diffusion distillation of images"),
    ("Consistency distillation of diffusion", "consistency models distil diffusion samplers"),
]


def _snapshot(path: Path, papers: list[tuple[str, str, str]]) -> Path:
    with path.open("w", encoding="utf-8") as out:
        for arxiv_id, title, abstract in papers:
            out.write(
                json.dumps(
                    {
                        "id": arxiv_id,
                        "title": title,
                        "abstract": abstract,
                        "authors": "A. Author",
                        "categories": "cs.LG",
                        "update_date": "2025-01-01",
                        "authors_parsed": [],
                        "versions": [{"version": "v1", "created": "Mon, 6 Jan 2025 00:00:00 GMT"}],
                    }
                )
                + "\n"
            )
    return path


@pytest.fixture
def library(store: Store, tmp_path: Path) -> Store:
    papers = [(f"2501.{n:05d}", t, a) for n, (t, a) in enumerate(TOPICS, start=1)]
    import_snapshot(store, _snapshot(tmp_path / "a.jsonl", papers), workers=0)
    forget_lexical()
    return store


def _arxiv_ids(store: Store) -> dict[int, str]:
    """Every titled paper's arXiv id by row id (read through the store's own queries)."""
    rows = store.paper_texts_after(0, 1000)
    assert [r[0] for r in store.paper_texts_of([r[0] for r in rows])] == [r[0] for r in rows]
    return {pid: hit.arxiv_id for pid, hit in store.papers_by_rowids([r[0] for r in rows]).items()}


def _related(index: LexicalIndex, store: Store, arxiv_id: str) -> list[str]:
    paper = store.get_paper(arxiv_id)
    own = store.paper_row_id(arxiv_id)
    found = index.scores(analyze(paper.title, paper.abstract), own, 10)
    ids = _arxiv_ids(store)
    return [ids[pid] for pid, _ in found.top]


def test_a_paper_is_related_to_the_one_sharing_its_words_and_never_to_itself(
    library: Store,
) -> None:
    index = LexicalIndex.build(library)
    assert index.base.papers == len(TOPICS)
    assert _related(index, library, "2501.00001")[0] == "2501.00002"  # ring attention
    assert _related(index, library, "2501.00003")[0] == "2501.00004"  # equivariant
    assert "2501.00001" not in _related(index, library, "2501.00001")
    scores = index.scores(analyze("ring attention", ""), None, 10)
    assert scores.std > 0 and scores.z(scores.top[0][0]) > scores.z(scores.top[-1][0])


def test_saved_beside_the_database_and_read_back_the_same(library: Store) -> None:
    built = open_lexical(library)
    assert built is not None and LexicalIndex.path(library.path).exists()
    forget_lexical()
    loaded = LexicalIndex.load(library.path)
    assert loaded is not None and loaded.base.terms == built.base.terms
    assert _related(loaded, library, "2501.00005") == _related(built, library, "2501.00005")


def test_new_papers_and_new_words_are_found_without_a_rebuild(
    library: Store, tmp_path: Path
) -> None:
    index = open_lexical(library)
    assert index is not None
    newer = [("2502.00001", "Quokka attention for long sequences", "quokka ring attention")]
    import_snapshot(library, _snapshot(tmp_path / "b.jsonl", newer), workers=0)
    again = open_lexical(library)
    assert again is index and index.delta_size == 1 and index.papers == len(TOPICS) + 1
    # "quokka" is in no built word list: the delta has it.
    found = index.scores(analyze("quokka", ""), None, 5)
    ids = _arxiv_ids(library)
    assert [ids[p] for p, _ in found.top] == ["2502.00001"]
    assert "2502.00001" in _related(index, library, "2501.00002")[:2]


def test_a_revised_abstract_replaces_the_papers_old_words(library: Store, tmp_path: Path) -> None:
    index = open_lexical(library)
    assert index is not None
    paper_id = library.paper_row_id("2501.00001")
    assert paper_id is not None and library.paper_row_id("2599.99999") is None
    revised = [
        (
            "2501.00001",
            "Molecules by equivariant message passing",
            "equivariant networks for molecules",
        )
    ]
    import_snapshot(library, _snapshot(tmp_path / "r.jsonl", revised), workers=0)
    assert library.revised_papers(0, paper_id) == []  # not re-embedded yet
    library.save_vectors("static", [(paper_id, b"\x00\x00")])  # re-embedded: names it
    index.catch_up(library)
    assert "2501.00001" not in _related(index, library, "2501.00002")
    assert "2501.00001" in _related(index, library, "2501.00004")[:2]


def test_the_embed_step_rebuilds_an_outgrown_index(
    library: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = open_lexical(library)
    assert index is not None
    monkeypatch.setattr(LexicalIndex, "outgrown", lambda self: self.delta_size > 1)
    newer = [(f"2502.{n:05d}", f"Topic {n} graphs", "graph networks") for n in range(1, 4)]
    import_snapshot(library, _snapshot(tmp_path / "c.jsonl", newer), workers=0)
    rebuilt = keep_lexical_current(library)
    assert rebuilt is not None and rebuilt is not index
    assert rebuilt.base.papers == len(TOPICS) + 3 and rebuilt.delta_size == 0
    assert open_lexical(library) is rebuilt


def test_a_library_too_large_to_build_in_a_request_is_left_to_the_embed_step(
    library: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(lexical, "BUILD_INLINE_UP_TO", 2)
    assert open_lexical(library, build_up_to=lexical.BUILD_INLINE_UP_TO) is None
    assert keep_lexical_current(library) is not None


def test_a_query_reads_a_common_words_heaviest_postings_within_its_budget(
    library: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    index = LexicalIndex.build(library)
    ids = _arxiv_ids(library)
    everyone = index.scores(analyze("", "diffusion"), None, 10)
    assert len(everyone.top) == 2  # both diffusion papers
    monkeypatch.setattr(lexical, "TERM_POSTINGS", 1)
    heaviest = index.scores(analyze("", "diffusion"), None, 10)
    # Only the paper that uses the word most (its title counts) is read.
    assert [ids[p] for p, _ in heaviest.top] == [ids[everyone.top[0][0]]]
    # One posting in all: the heaviest word's heaviest paper, and no other word.
    assert len(index.scores(analyze("ring", "attention long"), None, 10).top) == 2
    monkeypatch.setattr(lexical, "POSTINGS_BUDGET", 1)
    kept = index.scores(analyze("ring", "attention long"), None, 10)
    assert [ids[p] for p, _ in kept.top] == ["2501.00002"]  # "ring" twice: title and text


def test_related_papers_by_the_word_index_and_by_telling_words_without_it(
    library: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lightnews.search import related_papers

    hits = related_papers(library, "2501.00003", limit=3)
    assert hits.mode == "lexical" and hits[0].arxiv_id == "2501.00004"  # equivariant
    assert "2501.00003" not in [h.arxiv_id for h in hits]
    monkeypatch.setattr(lexical, "open_lexical", lambda store, build_up_to=None: None)
    fallback = related_papers(library, "2501.00003", limit=3)
    assert [(h.arxiv_id, h.matched) for h in fallback] == [("2501.00004", ("words",))]


def test_a_serving_process_far_behind_catches_up_in_a_thread_of_its_own(
    library: Store, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A page request never counts the words of a whole merge: it answers from the index
    as it was while a thread catches up; a command (not serving) still catches up inline."""
    index = open_lexical(library)
    assert index is not None
    newer = [(f"2502.{n:05d}", f"Zebrafish topic {n}", "zebrafish gills") for n in range(4)]
    import_snapshot(library, _snapshot(tmp_path / "g.jsonl", newer), workers=0)
    monkeypatch.setattr(lexical, "CATCH_UP_INLINE", 2)  # 4 new papers: far behind
    lexical.catch_up_in_background(True)
    try:
        started = threading.Event()
        go_on = threading.Event()
        real = LexicalIndex.catch_up

        def slow(self: LexicalIndex, store: Store, pause: float = 0.0) -> int:
            started.set()
            assert go_on.wait(10)
            return real(self, store, pause)

        monkeypatch.setattr(LexicalIndex, "catch_up", slow)
        assert open_lexical(library) is index  # returns at once: the thread catches up
        assert started.wait(10) and index.delta_size == 0
        assert index.scores(analyze("zebrafish", ""), None, 10).top == []  # as it was
        assert open_lexical(library) is index  # a second request starts no second thread
        go_on.set()
        worker = index._worker
        assert worker is not None
        worker.join(10)
        assert index.delta_size == 4
        assert len(index.scores(analyze("zebrafish", ""), None, 10).top) == 4
    finally:
        lexical.catch_up_in_background(False)
    monkeypatch.setattr(LexicalIndex, "catch_up", real)
    more = [("2503.00001", "Zebrafish again", "zebrafish")]
    import_snapshot(library, _snapshot(tmp_path / "h.jsonl", more), workers=0)
    monkeypatch.setattr(lexical, "CATCH_UP_INLINE", 0)
    assert open_lexical(library) is index and index.delta_size == 5  # not serving: inline


def test_two_processes_saving_at_once_neither_fails(library: Store) -> None:
    # Two web processes once shared one temporary name: one moved the other's half-written
    # file into place, and the other's rename then failed (a 500).
    import threading

    index = open_lexical(library)
    assert index is not None
    failures: list[BaseException] = []

    def save() -> None:
        for _ in range(30):
            try:
                index.save(library.path)
            except OSError as error:
                failures.append(error)

    writers = [threading.Thread(target=save) for _ in range(3)]
    for writer in writers:
        writer.start()
    for writer in writers:
        writer.join()
    assert failures == []
    forget_lexical()
    loaded = LexicalIndex.load(library.path)
    assert loaded is not None and loaded.base.terms == index.base.terms
    # Only this library's: on PostgreSQL the folder is the user's cache, shared with every
    # library of the machine (another suite's save under way there is not this one's).
    assert not list(library.path.parent.glob(f"{library.path.name}*.tmp"))
