"""A story says what is true of its paper now: venue, withdrawal (store, feed, page, export)."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

from starlette.testclient import TestClient

from lightnews.deliver.export import bibtex
from lightnews.model import Author, Paper, Version
from lightnews.rank import rank_stories
from lightnews.serve.app import create_app
from lightnews.settings import Settings
from lightnews.store import SQLiteStore, Store
from lightnews.store.readers import LOCAL_READER

NOW = "2025-12-01T00:00:00Z"


def paper(arxiv_id: str, **fields: object) -> Paper:
    defaults: dict[str, object] = dict(
        title=f"A study {arxiv_id}",
        abstract="We study things.",
        authors=[Author("Ada Example")],
        categories=["cs.LG"],
        published="2025-11-30T10:00:00Z",
        updated="2025-11-30T10:00:00Z",
        versions=[Version(1, "2025-11-30T10:00:00Z")],
    )
    defaults.update(fields)
    return Paper(arxiv_id, **defaults)  # type: ignore[arg-type]


def save(store: Store, *papers: Paper) -> None:
    with store.transaction():
        store.save_papers(list(papers), NOW)


def test_venue_and_withdrawal_in_the_feed(store: Store) -> None:
    save(
        store,
        paper("2511.00001", comments="Accepted at ICLR 2025 (oral)"),
        paper("2511.00002", comments="This paper has been withdrawn by the author", withdrawn=True),
        paper("2511.00003", comments="Submitted to ICML 2026"),
    )
    ranked = rank_stories(store, LOCAL_READER, limit=None, now=datetime(2025, 12, 1, tzinfo=UTC))
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
        save(
            store,
            paper("2511.00001", journal_ref="Phys.Rev.D76:013009,2007"),
            paper(
                "2511.00002", comments="This paper has been withdrawn by the author", withdrawn=True
            ),
        )
    app = create_app(str(path), Settings(environ={}).with_overrides(resolve_online=False))
    with TestClient(app, base_url="http://localhost") as client:
        html = client.get("/paper/2511.00001").text
        assert "Published in Phys.Rev.D 2007" in html
        html = client.get("/paper/2511.00002").text
        assert "<strong>Withdrawn:</strong>" in html


# -- versions: real version histories of ../shared/fixtures/arxiv/abs (orig/ and ftp/) -------

ABS = "arxiv/abs/{}/arxiv/papers/{}/{}.abs"
T1, T2, T3 = "2025-11-01T00:00:00Z", "2025-11-20T00:00:00Z", "2025-11-29T00:00:00Z"


def real(shared: Path, where: str, name: str) -> Paper:
    from lightnews.sources.arxiv_abs import parse_abs

    path = shared / ABS.format(where, name[:4], name)
    return parse_abs(path.read_text(encoding="utf-8", errors="replace"))


def vector(value: float) -> bytes:
    import struct

    return struct.pack("<4e", value, 0.0, 0.0, 0.0)


def test_new_version_changes_abstract_reembeds_diffs_and_resurfaces(
    store: Store, shared: Path
) -> None:
    v1, v2 = real(shared, "orig", "1605.09669v1"), real(shared, "ftp", "1605.09669")
    assert v1.abstract != v2.abstract and v2.latest_version == 2
    with store.transaction():
        store.save_papers([v1], T1)
    [(row, _, _)] = store.unembedded_papers(10)
    store.save_vectors("test-model", [(row, vector(1.0))])
    assert store.vector_versions("1605.09669") == {"test-model": 1}
    store.mark_story(LOCAL_READER, "1605.09669", T1, read=True)

    with store.transaction():
        store.save_papers([v2], T2)
    # The text changed: its old vector is gone and it is queued for a new one.
    assert [r[0] for r in store.unembedded_papers(10)] == [row]
    assert store.vector_versions("1605.09669") == {}
    store.save_vectors("test-model", [(row, vector(0.5))])
    assert store.vector_versions("1605.09669") == {"test-model": 2}

    page = store.get_paper("1605.09669")
    [change] = page.changes
    assert change.note == "v2: abstract changed" and change.seen_at == T2
    # Dated by arXiv's date of v2 (the record's), not by when this library stored it.
    v2_date = next(v.date for v in v2.versions if v.number == 2)
    assert v2_date and change.dated == v2_date != T2
    ops = {op for op, _ in change.abstract}
    assert ops == {"=", "-", "+"}
    # The diff rebuilds both texts, word for word.
    assert " ".join(w for op, w in change.abstract if op != "+").split() == v1.abstract.split()
    assert " ".join(w for op, w in change.abstract if op != "-").split() == v2.abstract.split()
    assert page.to_json()["changes"][0]["note"] == "v2: abstract changed"

    # Saving the same versions again changes nothing.
    with store.transaction():
        store.save_papers([v1, v2], T3)
    assert len(store.get_paper("1605.09669").changes) == 1

    # Read before v2 arrived: the story comes back, saying why.
    ranked = rank_stories(store, LOCAL_READER, limit=None, now=datetime(2025, 11, 30, tzinfo=UTC))
    story = next(s for s in ranked if s.arxiv_id == "1605.09669")
    assert story.why[0] == "new since you read it: v2: abstract changed"
    assert "v2: abstract changed" not in story.why  # said once, not again as a reason of its own
    assert "read" not in story.why and story.to_json()["revision"] == "v2: abstract changed"


def test_real_withdrawal_shows_everywhere(store: Store, shared: Path, tmp_path: Path) -> None:
    v1, v2 = real(shared, "orig", "0906.3336v1"), real(shared, "ftp", "0906.3336")
    assert not v1.withdrawn and v2.withdrawn
    with store.transaction():
        store.save_papers([v1], T1)
    with store.transaction():
        store.save_papers([v2], T2)
    page = store.get_paper("0906.3336")
    assert page.withdrawn and page.changes[-1].note == "v2: withdrawn"
    ranked = rank_stories(store, LOCAL_READER, limit=None, now=datetime(2025, 11, 30, tzinfo=UTC))
    story = next(s for s in ranked if s.arxiv_id == "0906.3336")
    assert story.why[0] == "withdrawn by its authors" and "v2: withdrawn" in story.why
    assert "Withdrawn by its authors" in bibtex([page])


def test_hand_made_title_change_on_the_story_page(shared: Path, tmp_path: Path) -> None:
    from dataclasses import replace

    v1 = real(shared, "orig", "0906.3336v1")
    v2 = replace(
        v1,
        title="Lower order eigenvalues of the biharmonic operator on manifolds",
        versions=[*v1.versions, Version(2, "2009-07-01T00:00:00Z")],
        updated="2009-07-01T00:00:00Z",
    )
    path = tmp_path / "lightnews.db"
    with SQLiteStore(path) as store:
        save(store, v1)
        with store.transaction():
            store.save_papers([v2], T2)
        assert [c.note for c in store.get_paper("0906.3336").changes] == ["v2: title changed"]
    app = create_app(str(path), Settings(environ={}).with_overrides(resolve_online=False))
    with TestClient(app, base_url="http://localhost") as client:
        html = client.get("/paper/0906.3336").text
        # arXiv's date of v2, and when this library stored it (a later edit of the same
        # version, a journal reference added, is stored under it).
        assert "v2: title changed</strong> · 2009-07-01 on arXiv, stored 2025-11-20" in html
        assert "<del>Lower order eigenvalues of the biharmonic operator</del>" in html
    from click.testing import CliRunner

    from lightnews.cli import cli

    shown = CliRunner().invoke(cli, ["--db", str(path), "show", "0906.3336"])
    assert (
        shown.exit_code == 0
        and "v2: title changed (on arXiv 2009-07-01, stored 2025-11-20)" in shown.output
    )
    # Stored the day arXiv dates it: one date, as the page gives it.
    with SQLiteStore(path) as store, store.transaction():
        store.db.execute("UPDATE paper_revisions SET seen_at = '2009-07-01T09:00:00Z'")
    shown = CliRunner().invoke(cli, ["--db", str(path), "show", "0906.3336"])
    assert "v2: title changed (on arXiv 2009-07-01)\n" in shown.output, shown.output


# -- code links ------------------------------------------------------------------------------


def test_code_links_from_text_and_items_with_when_they_appeared(
    store: Store, tmp_path: Path
) -> None:
    from lightnews.model import Item

    v1 = paper(
        "2511.00010",
        abstract="We study things. Code: https://github.com/ada/things.",
        published="2025-11-01T10:00:00Z",
        updated="2025-11-01T10:00:00Z",
        versions=[Version(1, "2025-11-01T10:00:00Z")],
    )
    v2 = paper(
        "2511.00010",
        abstract=v1.abstract,
        published="2025-11-01T10:00:00Z",
        comments="Accepted at ICLR 2026; code at github.com/ada/things-v2",
        updated="2025-11-25T10:00:00Z",
        versions=[*v1.versions, Version(2, "2025-11-25T10:00:00Z")],
    )
    save(store, v1)
    [link] = store.get_paper("2511.00010").code_links
    assert (link.url, link.first_seen) == ("https://github.com/ada/things", "2025-11-01T10:00:00Z")
    assert store.get_paper("2511.00010").code_released is None
    ranked = rank_stories(store, LOCAL_READER, limit=None, now=datetime(2025, 11, 2, tzinfo=UTC))
    assert "code released" not in ranked[0].why

    with store.transaction():
        store.save_papers([v2], "2025-11-26T00:00:00Z")
    page = store.get_paper("2511.00010")
    assert [c.url for c in page.code_links] == [
        "https://github.com/ada/things",
        "https://github.com/ada/things-v2",
    ]
    assert page.code_released is not None and page.code_released.url.endswith("things-v2")
    ranked = rank_stories(store, LOCAL_READER, limit=None, now=datetime(2025, 11, 26, tzinfo=UTC))
    story = next(s for s in ranked if s.arxiv_id == "2511.00010")
    assert "code released" in story.why and story.code_released == "2025-11-25T10:00:00Z"

    # A daily-papers entry linking a repository weeks later: another code link, dated by it.
    source, _ = store.add_source("hf-daily", "https://hf.example/api/daily", now=NOW)
    entry = Item(
        key="hf:2511.00010",
        kind="daily",
        title=v1.title,
        paper_id="2511.00010",
        published="2025-11-28T00:00:00Z",
        links=["https://github.com/ada/hf-repo"],
        code_links=["https://github.com/ada/hf-repo"],
    )
    with store.transaction():
        store.save_items(source.id, [entry], NOW)
    links = store.code_links(["2511.00010"])["2511.00010"]
    assert links[-1].url == "https://github.com/ada/hf-repo"
    assert links[-1].first_seen == "2025-11-28T00:00:00Z" and links[-1].item_id is not None
