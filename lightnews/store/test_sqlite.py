"""The SQLite store: migrations, idempotent saves, merge rules, stubs, search, health."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

import pytest

from lightnews.errors import NotFound, UsageError
from lightnews.model import Author, Item, Mention, Paper, SourceState, Version
from lightnews.search import parse_query, search_papers
from lightnews.store import BACKEND_ERRORS, CommonStore, SQLiteStore, Store

NOW = "2025-11-30T12:00:00Z"


def paper(arxiv_id: str = "2510.02375", **changes: object) -> Paper:
    fields: dict[str, object] = {
        "title": "Sparse Ring Attention",
        "abstract": "We route blocks of tokens to a ring of experts.",
        "authors": [Author("Mara Lindqvist"), Author("Tobias Achterberg-Reyes")],
        "categories": ["cs.LG", "cs.CL"],
        "published": "2025-10-02T17:59:48Z",
        "updated": "2025-10-02T17:59:48Z",
        "versions": [Version(1, "2025-10-02T17:59:48Z")],
    }
    fields.update(changes)
    return Paper(arxiv_id, **fields)  # type: ignore[arg-type]


def test_fresh_database_is_migrated_and_in_wal(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "a" / "b.db")
    assert store.schema_version >= 1
    assert store.db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
    assert store.migrate() == []  # nothing left to apply
    version = store.schema_version
    store.close()
    again = SQLiteStore(tmp_path / "a" / "b.db")
    assert again.schema_version == version
    again.close()


def test_a_file_moved_over_the_library_is_read_and_written_from_then_on(tmp_path: Path) -> None:
    """A restore that moves a copy over a running library's file: the store's open
    connections would go on with the old file, which no path leads to any more."""
    library, backup = tmp_path / "library.db", tmp_path / "backup.db"
    with SQLiteStore(backup) as other:
        other.save_papers([paper("2501.00001", title="Kept in the backup")], NOW)
    store = SQLiteStore(library)
    store.save_papers([paper("2501.00002", title="Written before the restore")], NOW)
    for suffix in ("-wal", "-shm"):
        Path(f"{library}{suffix}").unlink(missing_ok=True)
    backup.replace(library)
    assert store.get_paper("2501.00001").title == "Kept in the backup"
    store.save_papers([paper("2501.00003", title="Written after the restore")], NOW)
    store.close()
    with SQLiteStore(library) as again:
        assert again.get_paper("2501.00003").title == "Written after the restore"
        with pytest.raises(NotFound):
            again.get_paper("2501.00002")


def test_saving_twice_changes_nothing(store: CommonStore) -> None:
    first = store.save_papers([paper()], NOW)
    assert first.papers_new == 1
    before = store.db.execute("SELECT modified, content_hash FROM papers").fetchall()
    second = store.save_papers([paper()], "2026-01-01T00:00:00Z")
    assert second.changed == 0 and second.unchanged == 1
    after = store.db.execute("SELECT modified, content_hash FROM papers").fetchall()
    assert [tuple(r) for r in before] == [tuple(r) for r in after]
    assert store.counts()["authorships"] == 2


def test_newer_version_wins_and_versions_merge(store: Store) -> None:
    store.save_papers([paper(versions=[Version(1, "2025-10-02T17:59:48Z", "1mb")])], NOW)
    newer = paper(
        title="Sparse Ring Attention (v2)",
        updated="2025-11-01T00:00:00Z",
        versions=[Version(2, "2025-11-01T00:00:00Z")],
        doi=None,
        authors=[Author("Mara Lindqvist")],
    )
    assert store.save_papers([newer], NOW).papers_updated == 1
    # An older record arriving later does not undo the newer one, but fills gaps.
    older = paper(doi="10.1/x", versions=[Version(1, "2025-10-02T17:59:48Z")])
    store.save_papers([older], NOW)
    shown = store.get_paper("2510.02375v1")
    assert shown.title == "Sparse Ring Attention (v2)"
    assert shown.authors == ["Mara Lindqvist"]
    assert [v.version for v in shown.versions] == ["v1", "v2"]
    assert shown.versions[0].size == "1mb"
    assert shown.doi == "10.1/x" and shown.latest_version == 2
    assert shown.published == "2025-10-02T17:59:48Z"


def test_a_record_with_nothing_new_changes_nothing(store: CommonStore) -> None:
    """Its hash differs from the stored one, so it is merged, and the merge keeps the row."""
    newer = paper(
        doi="10.1/x", updated="2025-11-01T00:00:00Z", versions=[Version(2, "2025-11-01T00:00:00Z")]
    )
    store.save_papers([newer], NOW)
    before = store.db.execute("SELECT * FROM papers").fetchall()
    older = paper(abstract="", versions=[Version(2, "2025-11-01T00:00:00Z")], updated=None)
    assert store.save_papers([older], "2026-01-01T00:00:00Z").unchanged == 1
    assert [tuple(r) for r in store.db.execute("SELECT * FROM papers")] == [
        tuple(r) for r in before
    ]
    if store.sql.name == "sqlite":  # migration 0010 (PostgreSQL has no FTS5 buffer)
        assert (
            store.db.execute("SELECT v FROM papers_fts_config WHERE k = 'hashsize'").fetchone()[0]
            == 64 * 1024 * 1024
        )


def test_stub_from_mention_is_filled_in_later(store: Store) -> None:
    source, _ = store.add_source("feed", "https://blog.example/feed", now=NOW)
    item = Item(
        key="post-1",
        kind="article",
        title="We liked this",
        mentions=[Mention("2510.02375", "arxiv-url", 1.0, "arxiv.org/abs/2510.02375")],
    )
    saved = store.save_items(source.id, [item], NOW)
    assert saved.items_new == 1 and saved.mentions == 1
    stub = store.get_paper("2510.02375")
    assert stub.stub and stub.title == "" and len(stub.mentions) == 1
    assert store.save_papers([Paper("2510.02375")], NOW).changed == 0  # a stub never overwrites
    store.save_papers([paper()], NOW)
    filled = store.get_paper("2510.02375")
    assert not filled.stub and filled.title == "Sparse Ring Attention"
    assert filled.mentions[0].url is None and filled.mentions[0].kind == "article"


def test_items_are_idempotent_and_updates_replace_mentions(store: CommonStore) -> None:
    source, created = store.add_source("feed", "https://blog.example/feed", now=NOW)
    assert created and not store.add_source("feed", "https://blog.example/feed", now=NOW)[1]
    item = Item(
        key="k",
        kind="article",
        title="A",
        text="see arXiv:2510.02375",
        mentions=[Mention("2510.02375", "arxiv-id", 1.0)],
    )
    assert store.save_items(source.id, [item], NOW).items_new == 1
    assert store.save_items(source.id, [item], NOW).unchanged == 1
    item.mentions = [Mention("2401.00001", "arxiv-id", 1.0)]
    assert store.save_items(source.id, [item], NOW).items_updated == 1
    rows = store.db.execute(
        "SELECT p.arxiv_id FROM mentions m JOIN papers p ON p.id = m.paper_id"
    ).fetchall()
    assert [r[0] for r in rows] == ["2401.00001"]


def test_search_weights_titles_and_survives_any_query(store: Store) -> None:
    store.save_papers(
        [
            paper("2510.00001", title="Diffusion models for text", abstract="About attention."),
            paper("2510.00002", title="Attention is what you route", abstract="Diffusion aside."),
            paper("2510.00003", title="Unrelated", abstract="Nothing here."),
        ],
        NOW,
    )
    hits = search_papers(store, "attention")
    assert [h.arxiv_id for h in hits][:2] == ["2510.00002", "2510.00001"]
    assert search_papers(store, "lindqvist")  # authors are indexed
    assert [h.arxiv_id for h in search_papers(store, "2510.00003")] == ["2510.00003"]
    assert [h.arxiv_id for h in search_papers(store, "https://arxiv.org/abs/2510.00003v2")] == [
        "2510.00003"
    ]
    assert [h.arxiv_id for h in search_papers(store, "diffus*")] != []
    assert [h.arxiv_id for h in search_papers(store, "attention -text")] == ["2510.00002"]
    for hostile in ['"', "AND", "NEAR(", "*", "title:x", "')--", "(((", "-", ""]:
        search_papers(store, hostile)  # never an FTS syntax error
    assert parse_query("  ") == []
    assert store.search_papers(parse_query("-only -excluded"), 10) == []


def test_remove_source_keeps_papers(store: Store) -> None:
    source, _ = store.add_source("arxiv-api", "cat:cs.LG", now=NOW)
    store.save_items(source.id, [Item(key="2510.02375", kind="paper", paper_id="2510.02375")], NOW)
    store.save_papers([paper()], NOW)
    store.remove_source(source.id)
    assert store.counts()["items"] == 0 and store.get_paper("2510.02375").title
    with pytest.raises(NotFound):
        store.get_source(source.id)


def test_source_health_and_state(store: Store) -> None:
    source, _ = store.add_source("feed", "https://x.example/feed", now=NOW)
    store.save_state(
        source.id,
        SourceState(
            etag='"e"', last_modified="lm", cursor="c", resumption_token="t", extra={"a": 1}
        ),
    )
    store.record_failure(source.id, "HTTP 500", NOW, "2025-11-30T13:00:00Z")
    store.record_failure(source.id, "HTTP 502", NOW, "2025-11-30T14:00:00Z")
    row = store.get_source(source.id)
    assert row.state == SourceState('"e"', "lm", "c", "t", {"a": 1})
    assert (row.error_count, row.last_error) == (2, "HTTP 502")
    assert store.due_sources("2025-11-30T13:30:00Z") == []
    assert [s.id for s in store.due_sources("2025-11-30T14:00:00Z")] == [source.id]
    store.record_success(source.id, NOW, "2025-12-01T00:00:00Z")
    row = store.get_source(source.id)
    assert (row.error_count, row.last_error, row.last_success) == (0, None, NOW)


def test_get_paper_errors(store: Store) -> None:
    with pytest.raises(UsageError):
        store.get_paper("not an id")
    with pytest.raises(NotFound):
        store.get_paper("2510.99999")


def test_failed_write_rolls_back(store: CommonStore) -> None:
    store.save_papers([paper()], NOW)
    with pytest.raises(BACKEND_ERRORS), store.transaction():
        store.db.execute("DELETE FROM papers")
        store.db.execute("INSERT INTO sources (kind, address) VALUES (NULL, NULL)")
    assert store.counts()["papers"] == 1


def test_very_common_queries_rank_the_newest_window(
    store: Store, monkeypatch: pytest.MonkeyPatch
) -> None:
    from lightnews.store import search_common

    store.save_papers(
        [paper(f"2510.0000{n}", title=f"Model number {n}", abstract="x") for n in range(1, 6)]
        + [paper("2510.00009", title="Rare gem", abstract="model")],
        NOW,
    )
    monkeypatch.setattr(search_common, "SEARCH_WINDOW", 3)
    common = [h.arxiv_id for h in search_papers(store, "model", limit=10)]
    assert len(common) == 3 and "2510.00001" not in common  # the oldest fall outside
    assert [h.arxiv_id for h in search_papers(store, "rare")] == ["2510.00009"]


def test_stopwords_are_left_out_of_queries_with_other_words(store: Store) -> None:
    store.save_papers([paper("2510.00001", title="Chain of thought for images", abstract="x")], NOW)
    assert [h.arxiv_id for h in search_papers(store, "chain of thought for")] == ["2510.00001"]
    assert [h.arxiv_id for h in search_papers(store, "of")] == ["2510.00001"]  # alone, kept
    assert search_papers(store, '"thought of chain"') == []  # phrases keep every word


def test_hyphenated_compounds_are_their_words(store: Store) -> None:
    store.save_papers(
        [
            paper(
                "2510.00001",
                title="Text to image models, structure aware",
                abstract="chain of thought",
            )
        ],
        NOW,
    )
    assert [h.arxiv_id for h in search_papers(store, "Text-to-Image structure-aware")] == [
        "2510.00001"
    ]
    assert [h.arxiv_id for h in search_papers(store, "Chain-of-Thought")] == ["2510.00001"]


def test_search_filters(store: Store) -> None:
    from lightnews.model import SearchFilters

    store.save_papers(
        [
            paper(
                "2510.00001",
                title="Attention in vision",
                categories=["cs.CV"],
                published="2025-10-01T00:00:00Z",
            ),
            paper(
                "2511.00002",
                title="Attention in language",
                categories=["cs.CL", "cs.LG"],
                published="2025-11-01T00:00:00Z",
            ),
            paper(
                "2511.00003",
                title="Attention in physics",
                categories=["physics.comp-ph"],
                published="2025-11-02T00:00:00Z",
            ),
        ],
        NOW,
    )

    def ids(**f: object) -> list[str]:
        found = search_papers(store, "attention", filters=SearchFilters(**f))  # type: ignore[arg-type]
        return sorted(h.arxiv_id for h in found)

    assert ids(subject="cs.LG") == ["2511.00002"]
    assert ids(subject="cs") == ["2510.00001", "2511.00002"]
    assert ids(since="2025-11-01") == ["2511.00002", "2511.00003"]
    assert ids(until="2025-10-31") == ["2510.00001"]
    source, _ = store.add_source("feed", "https://x.example/feed", now=NOW)
    store.save_items(
        source.id,
        [Item(key="k", kind="article", mentions=[Mention("2511.00003", "arxiv-id", 1.0)])],
        NOW,
    )
    assert ids(source_kind="feed") == ["2511.00003"]
    scholar = store.create_scholar("Mara Lindqvist", NOW)
    store.add_identity(scholar, "arxiv-name", "Mara Lindqvist")
    from lightnews.link.attribution import attribute_scholar

    attribute_scholar(store, scholar)
    assert ids(scholar_id=scholar) == ["2510.00001", "2511.00002", "2511.00003"]


def test_a_library_embedded_before_the_default_changed_keeps_its_encoder(tmp_path: Path) -> None:
    """Migration 0011: vectors of another encoder pin the library to it (no silent re-embed)."""
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    for number, _, script in SQLiteStore._migrations():
        if number <= 10:
            conn.executescript(script + f"\nPRAGMA user_version = {number};")
    conn.execute(
        "INSERT INTO papers (arxiv_id, title, first_seen, modified) "
        "VALUES ('2501.00001', 'T', 'x', 'x')"
    )
    conn.execute("INSERT INTO paper_vectors (paper_id, model, vector) VALUES (1, 'static', x'00')")
    conn.commit()
    conn.close()
    with SQLiteStore(db) as store:
        assert store.saved_settings()["semantic"] == "static"
    with SQLiteStore(tmp_path / "new.db") as store:  # a new library takes the default
        assert "semantic" not in store.saved_settings()


def test_card_papers_are_what_the_paper_page_shows(store: CommonStore) -> None:
    """One batched read gives each card what ``get_paper`` gives, for many papers at once."""
    store.save_papers(
        [
            paper(
                "2510.00001",
                abstract="Code at https://github.com/lab/ring and https://github.com/lab/aaa.",
                versions=[Version(1, "2025-10-02T17:59:48Z"), Version(2, "2025-11-03T08:00:00Z")],
            ),
            paper("2510.00002", withdrawn=True, authors=[Author(f"Author {n}") for n in range(9)]),
            paper("2510.00003", authors=[]),
            Paper("2510.00004"),  # a stub: known by its id alone
        ],
        NOW,
    )
    source, _ = store.add_source("feed", "https://blog.example/feed", now=NOW)
    store.save_items(
        source.id,
        [
            Item(
                key="a",
                kind="article",
                title="On rings",
                text="arXiv:2510.00003 is good",
                code_links=["https://github.com/other/ring3"],
                mentions=[Mention("2510.00003", "arxiv-id", 1.0)],
            ),
            Item(key="b", kind="article", title="No text"),
        ],
        NOW,
    )
    wanted = ["2510.00001", "2510.00002", "2510.00003", "2510.00004", "2510.09999"]
    cards = store.card_papers(wanted)
    assert sorted(cards) == wanted[:4]  # a paper not stored is not there
    for arxiv_id, card in cards.items():
        page = store.get_paper(arxiv_id)
        assert card.arxiv_id == page.arxiv_id
        assert card.abstract == page.abstract
        assert card.authorships == page.authorships
        assert card.code == page.code
        assert card.latest_version == page.latest_version
        assert card.last_version_date == (page.versions[-1].date if page.versions else None)
        assert card.withdrawn == page.withdrawn
    assert cards["2510.00001"].code == ("https://github.com/lab/aaa", "https://github.com/lab/ring")
    assert cards["2510.00001"].last_version_date == "2025-11-03T08:00:00Z"
    names = [a.name for a in cards["2510.00002"].authorships]
    assert names == [f"Author {n}" for n in range(9)]
    assert cards["2510.00003"].code == ("https://github.com/other/ring3",)
    assert cards["2510.00002"].withdrawn and not cards["2510.00001"].withdrawn
    assert store.card_papers([]) == {}
    ids = [r[0] for r in store.db.execute("SELECT id FROM items ORDER BY key").fetchall()]
    assert store.item_texts([*ids, 10**9]) == {ids[0]: "arXiv:2510.00003 is good", ids[1]: ""}
    assert store.item_texts([]) == {}


def test_code_links_are_read_from_abstracts_and_comments_whatever_the_case() -> None:
    """The quick look for a repository host before the full search misses none: in the
    abstract or the comments, in capitals, after non-ASCII text; "digit" finds none."""
    from lightnews.store.merge import PAPER_COLUMNS
    from lightnews.store.writes import text_code_links

    def values(arxiv_id: str, abstract: str, comments: str | None) -> list[Any]:
        row: list[Any] = [None] * len(PAPER_COLUMNS)
        row[0] = arxiv_id
        row[PAPER_COLUMNS.index("abstract")] = abstract
        row[PAPER_COLUMNS.index("comments")] = comments
        return row

    found = text_code_links(
        [
            values("1", "Code: GitHub.com/Lab/Repo.", None),
            values("2", "Ten digits, legitimately.", "12 pages; code at gitlab.com/a/b"),
            values("3", "Müller's code: https://GITHUB.COM/m/x", ""),
            values("4", "Digit recognition, no code.", "git is mentioned, no host"),
        ],
        "2025-01-01",
    )
    assert found == [
        ("1", "https://github.com/Lab/Repo", "2025-01-01"),
        ("2", "https://gitlab.com/a/b", "2025-01-01"),
        ("3", "https://github.com/m/x", "2025-01-01"),
    ]
