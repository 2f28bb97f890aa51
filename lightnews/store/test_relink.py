"""The relink queue a title change fills, and rewriting an item's links by title (both backends)."""

from __future__ import annotations

from lightnews.model import Item, Mention, Paper, Version
from lightnews.store import CommonStore, Store

T0, T1, T2 = "2025-01-01T00:00:00Z", "2025-02-01T00:00:00Z", "2025-03-01T00:00:00Z"


def _paper(arxiv_id: str, title: str, version: int = 1) -> Paper:
    return Paper(
        arxiv_id,
        title=title,
        abstract="We study things.",
        versions=[Version(n, T0) for n in range(1, version + 1)],
        updated=f"2025-0{version}-01T00:00:00Z",
    )


def _save(store: Store, *papers: Paper, now: str = T0) -> None:
    with store.transaction():
        store.save_papers(list(papers), now)


def test_only_a_changed_title_queues_the_paper(store: Store) -> None:
    _save(store, Paper("2501.00001"))  # a stub: no title yet
    _save(store, _paper("2501.00001", "Sparse Routing for Mixtures"), now=T1)
    assert store.retitled_papers(10) == []  # a first title is not a change
    _save(store, _paper("2501.00001", "Sparse Routing for Mixtures"), now=T1)
    assert store.retitled_papers(10) == []  # the same title again
    _save(store, _paper("2501.00001", "Dense Routing for Mixtures", 2), now=T2)
    _save(store, _paper("2501.00001", "Routing Mixtures of Experts", 3), now=T2)
    (queued,) = store.retitled_papers(10)
    # Queued once, with the title its links were made against.
    assert (queued.arxiv_id, queued.title, queued.old_title) == (
        "2501.00001",
        "Routing Mixtures of Experts",
        "Sparse Routing for Mixtures",
    )
    store.relinked([queued.paper_id])
    assert store.retitled_papers(10) == []


def test_replace_title_links_keeps_other_links(store: CommonStore) -> None:
    _save(
        store,
        _paper("2501.00001", "Sparse Routing for Mixtures"),
        _paper("2501.00002", "Graph Kernels Revisited"),
        _paper("2501.00003", "A Study of Attention Sinks", 2),
    )
    row, _ = store.add_source("feed", "https://example.org/feed.xml", now=T1)
    item = Item(
        key="a",
        kind="article",
        title="Notes",
        text="Reading list",
        links=["x"],
        mentions=[
            Mention("2501.00001", "arxiv-url", 1.0, "arxiv.org/abs/2501.00001"),
            Mention("2501.00002", "fuzzy-title", 0.9, "Graph Kernels"),
        ],
    )
    with store.transaction():
        store.save_items(row.id, [item], T1)
    ((item_id, stored),) = store.items_to_relink(
        [r[0] for r in store.db.execute("SELECT id FROM items")]
    )
    assert (stored.kind, stored.title, stored.links) == ("article", "Notes", ["x"])
    assert {m.arxiv_id: m.method for m in stored.mentions} == {
        "2501.00001": "arxiv-url",
        "2501.00002": "fuzzy-title",
    }
    assert [i for i, _ in store.title_linked_items([_id(store, "2501.00002")])] == [item_id]
    with store.transaction():
        changed = store.replace_title_links(
            item_id,
            [
                Mention("2501.00001", "exact-title", 1.0, "Sparse Routing for Mixtures"),
                Mention("2501.00003", "exact-title", 1.0, "A Study of Attention Sinks"),
            ],
        )
    assert changed == (1, 1)  # Graph Kernels unlinked, Attention Sinks linked
    ((_, after),) = store.items_to_relink([item_id])
    assert {m.arxiv_id: m.method for m in after.mentions} == {
        "2501.00001": "arxiv-url",
        "2501.00003": "exact-title",
    }  # the arXiv link stays
    version = store.db.execute(
        "SELECT paper_version FROM mentions WHERE paper_id = ?", (_id(store, "2501.00003"),)
    ).fetchone()[0]
    assert version == 2  # the link names the version it was made against


def _id(store: CommonStore, arxiv_id: str) -> int:
    row = store.db.execute("SELECT id FROM papers WHERE arxiv_id = ?", (arxiv_id,)).fetchone()
    return int(row[0])
