"""A reader's word on papers and their saved lists: kept per reader, read back as signals."""

from __future__ import annotations

import random

import pytest

from lightnews.errors import UsageError
from lightnews.model import Author, Paper
from lightnews.store import Store
from lightnews.store.readers import ReaderId

NOW = "2026-08-01T00:00:00+00:00"
ME, OTHER = ReaderId(3), ReaderId(4)


def test_feedback_lists_and_signals(store: Store) -> None:
    papers = [
        Paper(f"2601.0000{i}", title=f"Paper {i}", authors=[Author("A. Writer")]) for i in range(6)
    ]
    store.save_papers(papers, NOW)
    row = {p.arxiv_id: store.paper_row_id(p.arxiv_id) or 0 for p in papers}
    a, b, c, d, e, f = (row[p.arxiv_id] for p in papers)

    store.mark_story(ME, "2601.00000", NOW, saved=True)
    store.mark_story(ME, "2601.00001", NOW, saved=True)
    store.set_saved_list(ME, "2601.00001", "robots")
    store.set_saved_list(ME, "2601.00001", "vision")
    store.set_saved_list(ME, "2601.00005", "vision")  # filed, not saved: no signal
    store.mark_story(ME, "2601.00002", NOW, read=True)
    store.set_paper_feedback(ME, d, "not-interested", NOW)
    store.set_paper_feedback(ME, e, "more-like-this", NOW)
    store.set_paper_feedback(OTHER, f, "not-interested", NOW)

    signals = store.learning_signals(ME)
    assert sorted(signals.saved) == sorted([(a, ""), (b, "robots"), (b, "vision"), (e, "")])
    assert signals.read == (c,)
    assert signals.not_interested == (d,)
    lists = {"robots": ["2601.00001"], "vision": ["2601.00001", "2601.00005"]}
    assert store.saved_lists(ME) == lists
    assert store.paper_feedback(OTHER) == {f: "not-interested"}

    store.set_paper_feedback(ME, d, "more-like-this", NOW)  # one word at a time
    store.set_paper_feedback(ME, e, None, NOW)  # taken back
    store.set_saved_list(ME, "2601.00001", "robots", filed=False)
    assert store.paper_feedback(ME) == {d: "more-like-this"}
    assert sorted(store.learning_signals(ME).saved) == sorted([(a, ""), (b, "vision"), (d, "")])
    with pytest.raises(UsageError):
        store.set_paper_feedback(ME, a, "meh", NOW)


def test_random_papers_are_those_with_vectors(store: Store) -> None:
    papers = [Paper(f"2601.{i:05d}", title=f"Paper {i}") for i in range(40)]
    store.save_papers(papers, NOW)
    with_vectors = [store.paper_row_id(p.arxiv_id) or 0 for p in papers[::2]]
    store.save_vectors("minilm-int8", [(i, bytes(8)) for i in with_vectors])
    drawn = store.random_paper_ids(10, "minilm-int8", random.Random(1))
    assert len(drawn) == 10 and len(set(drawn)) == 10 and set(drawn) <= set(with_vectors)
    every = store.random_paper_ids(100, "minilm-int8", random.Random(2))
    assert sorted(every) == sorted(with_vectors)
    assert store.random_paper_ids(5, "static", random.Random(1)) == []
