"""Links by title made again when a new version changes a paper's title (both backends)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

from conftest import hf_corpus
from lightnews.ingest.relink import relink_retitled
from lightnews.ingest.replay import ingest_bytes
from lightnews.link import find_arxiv_mentions, link_titles
from lightnews.model import Item, Paper, Version
from lightnews.settings import Settings
from lightnews.sources.arxiv_api import parse_api_feed
from lightnews.store import Store

DEPTH_PRO, DART, TWISTED = "2410.02073", "2410.08159", "2410.01920"
NEW_DEPTH_PRO = "Zero-Shot Metric Geometry from a Single Photograph at Interactive Rates"
NEW_DART = "Generative Modelling of Pictures Without Markov Chains"
#: A later record (made up) that carries Depth Pro's first title.
COMPANION = "2501.00001"
BLOG = "https://machinelearning.apple.com/rss.xml"
LATER = "2026-02-01T00:00:00Z"


def _library(store: Store, shared: Path, data: Path, settings: Settings) -> list[Paper]:
    """The 11k real papers of the Hugging Face corpus, the lab's 13 papers, the lab's post."""
    store.save_papers(hf_corpus(shared), "2026-01-01T00:00:00Z")
    feed = (data / "arxiv/iclr2025-lab-papers.xml").read_bytes()
    assert ingest_bytes(store, "arxiv-api", "test:papers", feed, settings).ok
    post = (shared / "seed-pages/blog/apple-ml-research.rss.xml").read_bytes()
    assert ingest_bytes(store, "feed", BLOG, post, settings).ok
    papers, *_ = parse_api_feed(feed)
    return papers


def _linked(store: Store, key_part: str) -> dict[str, tuple[str, int | None]]:
    """``arxiv id: (method, paper version)`` of the links of items whose key holds ``key_part``."""
    rows = store.db.execute(  # type: ignore[attr-defined]
        "SELECT p.arxiv_id, m.method, m.paper_version FROM mentions m "
        "JOIN papers p ON p.id = m.paper_id JOIN items i ON i.id = m.item_id "
        "WHERE i.key LIKE ?",
        (f"%{key_part}%",),
    ).fetchall()
    return {r[0]: (r[1], r[2]) for r in rows}


def _post(store: Store, settings: Settings, key: str, text: str) -> None:
    row, _ = store.add_source("feed", "https://example.org/posts.xml", now=LATER)
    item = Item(key=key, kind="post", text=text, published=LATER)
    item.mentions = find_arxiv_mentions([text])
    link_titles([item], store, bar=settings.link_bar)
    store.save_items(row.id, [item], LATER)


def test_title_change_unlinks_relinks_and_links(
    store: Store, settings: Settings, shared: Path, data: Path
) -> None:
    papers = _library(store, shared, data, settings)
    article = _linked(store, "iclr-2025")
    assert {DEPTH_PRO, DART, TWISTED} <= article.keys()
    assert article[DEPTH_PRO][0] in ("exact-title", "fuzzy-title")
    _post(store, settings, "post-new-title", f"Just read “{NEW_DEPTH_PRO}”: a striking result.")
    _post(store, settings, "post-by-id", f"Depth for everyone: https://arxiv.org/abs/{DEPTH_PRO}")
    assert DEPTH_PRO not in _linked(store, "post-new-title")  # no paper has that title yet
    assert _linked(store, "post-by-id")[DEPTH_PRO][0] != "exact-title"
    by_id_before = _linked(store, "post-by-id")

    # v2 of Depth Pro and of DART change their titles; a later record takes Depth Pro's
    # first title (the post that named it now names that record).
    by_id = {p.arxiv_id: p for p in papers}
    v2 = [Version(1, "2024-10-01T12:00:00Z"), Version(2, "2025-12-01T00:00:00Z")]
    retitled = [
        dataclasses.replace(
            by_id[DEPTH_PRO], title=NEW_DEPTH_PRO, versions=v2, updated="2025-12-01T00:00:00Z"
        ),
        dataclasses.replace(
            by_id[DART], title=NEW_DART, versions=v2, updated="2025-12-01T00:00:00Z"
        ),
        dataclasses.replace(by_id[DEPTH_PRO], arxiv_id=COMPANION),
    ]
    with store.transaction():
        store.save_papers(retitled, LATER)
    queued = {p.arxiv_id: p.old_title for p in store.retitled_papers(10)}
    assert queued == {DEPTH_PRO: by_id[DEPTH_PRO].title, DART: by_id[DART].title}

    report = relink_retitled(store, bar=settings.link_bar)

    assert report.papers == 2 and report.unlinked >= 2 and report.linked >= 2
    article = _linked(store, "iclr-2025")
    assert DEPTH_PRO not in article and DART not in article  # its text names neither now
    assert COMPANION in article  # re-linked: the title it names is that record's
    assert TWISTED in article  # a link to a paper whose title did not change stays
    method, version = _linked(store, "post-new-title")[DEPTH_PRO]
    assert method in ("exact-title", "fuzzy-title") and version == 2  # linked, against v2
    assert _linked(store, "post-by-id") == by_id_before  # a link by arXiv id is left alone
    assert store.retitled_papers(10) == []
    assert relink_retitled(store, bar=settings.link_bar).papers == 0


def test_next_linking_pass_relinks(
    store: Store, settings: Settings, shared: Path, data: Path
) -> None:
    """Ingesting any page runs the pass: a retitled paper is not left waiting."""
    papers = _library(store, shared, data, settings)
    dart = next(p for p in papers if p.arxiv_id == DART)
    with store.transaction():
        store.save_papers(
            [
                dataclasses.replace(
                    dart,
                    title=NEW_DART,
                    updated="2025-12-01T00:00:00Z",
                    versions=[
                        Version(1, "2024-10-09T12:00:00Z"),
                        Version(2, "2025-12-01T00:00:00Z"),
                    ],
                )
            ],
            LATER,
        )
    assert [p.arxiv_id for p in store.retitled_papers(10)] == [DART]
    post = (shared / "seed-pages/blog/apple-ml-research.rss.xml").read_bytes()
    assert ingest_bytes(store, "feed", BLOG, post, settings).ok  # unchanged page, next pass
    assert store.retitled_papers(10) == []
    assert DART not in _linked(store, "iclr-2025")
    assert DEPTH_PRO in _linked(store, "iclr-2025")
