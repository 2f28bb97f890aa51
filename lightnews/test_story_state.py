"""A story says what is true of its paper now: venue, withdrawal (store, feed, page, export)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from starlette.testclient import TestClient

from lightnews.model import Author, Paper, Version
from lightnews.rank import rank_stories
from lightnews.serve.export import bibtex
from lightnews.serve.web import create_app
from lightnews.settings import Settings
from lightnews.store import SQLiteStore, Store

NOW = "2025-12-01T00:00:00Z"


def paper(arxiv_id: str, **fields: object) -> Paper:
    defaults: dict[str, object] = dict(
        title=f"A study {arxiv_id}", abstract="We study things.", authors=[Author("Ada Example")],
        categories=["cs.LG"], published="2025-11-30T10:00:00Z", updated="2025-11-30T10:00:00Z",
        versions=[Version(1, "2025-11-30T10:00:00Z")],
    )  # fmt: skip
    defaults.update(fields)
    return Paper(arxiv_id, **defaults)  # type: ignore[arg-type]


def save(store: Store, *papers: Paper) -> None:
    with store.transaction():
        store.save_papers(list(papers), NOW)


def test_venue_and_withdrawal_in_the_feed(store: Store) -> None:
    save(store, paper("2511.00001", comments="Accepted at ICLR 2025 (oral)"),
         paper("2511.00002", comments="This paper has been withdrawn by the author",
               withdrawn=True),
         paper("2511.00003", comments="Submitted to ICML 2026"))  # fmt: skip
    ranked = rank_stories(store, limit=None, now=datetime(2025, 12, 1, tzinfo=UTC))
    stories = {s.arxiv_id: s for s in ranked}
    assert "accepted at ICLR 2025 (oral)" in stories["2511.00001"].why
    assert stories["2511.00001"].to_json()["venue"] == "accepted at ICLR 2025 (oral)"
    assert stories["2511.00002"].why[0] == "withdrawn by its authors"
    assert stories["2511.00002"].to_json()["withdrawn"] is True
    assert stories["2511.00003"].venue is None
    page = store.get_paper("2511.00001")
    assert page.venue is not None and page.to_json()["venue"]["label"] == "ICLR 2025 (oral)"
    assert "@inproceedings{" in bibtex([page])
    assert "Withdrawn" in bibtex([store.get_paper("2511.00002")])


def test_story_page_badge_and_banner(tmp_path: Path) -> None:
    path = tmp_path / "lightnews.db"
    with SQLiteStore(path) as store:
        save(store, paper("2511.00001", journal_ref="Phys.Rev.D76:013009,2007"),
             paper("2511.00002", comments="This paper has been withdrawn by the author",
                   withdrawn=True))  # fmt: skip
    app = create_app(str(path), Settings(environ={}).with_overrides(resolve_online=False))
    with TestClient(app, base_url="http://localhost") as client:
        html = client.get("/paper/2511.00001").text
        assert "Published in Phys.Rev.D 2007" in html
        html = client.get("/paper/2511.00002").text
        assert "<strong>Withdrawn:</strong>" in html
