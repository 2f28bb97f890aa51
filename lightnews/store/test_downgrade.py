"""A worse copy never replaces what is stored: cut records and repaired documents."""

from __future__ import annotations

from pathlib import Path

from lightnews.ingest.replay import ingest_bytes
from lightnews.model import Item, Paper, Version
from lightnews.settings import Settings
from lightnews.store import CommonStore, Store
from lightnews.store.downgrade import cut_short, item_kept_reason


def test_cut_short_is_a_strict_prefix() -> None:
    assert cut_short("We write down a toy", "We write down a toy model.")
    assert cut_short("We write down a toy  ", "We write down a toy model.")  # end blanks aside
    assert cut_short("", "anything")
    assert not cut_short("We write down a toy model.", "We write down a toy model.")
    assert not cut_short("We write down a toy model. And more.", "We write down a toy model.")
    assert not cut_short("We write up a toy", "We write down a toy model.")
    assert not cut_short("text", None) and not cut_short("text", "")


def test_a_cut_marked_as_such_is_cut_short() -> None:
    stored = "<p>We write down a toy model of the thing, and solve it.</p>"
    for fresh in (
        "<p>We write down a toy…</p>",
        "<p>We write down a toy [...]</p>",
        "<p>We write down a toy model (…)</p>",
        "<p>We write down a t...</p>",
        '<p>We write down a toy <a href="https://x.example/post">Read more</a></p>',
        "<p>We write down a toy model of the thing, Continue reading →</p>",
        "<p>We write down a toy model [ … ]</p>",
    ):
        assert cut_short(fresh, stored), fresh
    changed = "<p>We write down a toy model of the thing, and solve it twice.</p>"
    for fresh in ("<p>We write down another model…</p>", changed):  # not the stored text
        assert not cut_short(fresh, stored), fresh
    assert not cut_short("A title…", None)


def test_a_marked_excerpt_after_the_whole_item_keeps_the_full_text(
    store: CommonStore, settings: Settings
) -> None:
    def feed(text: str) -> bytes:
        return (
            '<?xml version="1.0"?><rss version="2.0"><channel><title>Lab</title>'
            "<link>https://lab.example/</link><item><title>A post</title>"
            "<link>https://lab.example/post</link><guid>https://lab.example/post</guid>"
            f"<description><![CDATA[{text}]]></description></item></channel></rss>"
        ).encode()

    whole = "<p>" + "We write down a toy model of the thing, and solve it. " * 12 + "</p>"
    address = "https://lab.example/feed.xml"
    assert ingest_bytes(store, "feed", address, feed(whole), settings).ok
    (full,) = store.db.execute("SELECT text FROM items").fetchone()
    for excerpt in (
        whole[:200] + " […]",
        whole[:200] + "...",
        whole[:180] + ' <a href="https://lab.example/post">Read more</a>',
    ):
        report = ingest_bytes(store, "feed", address, feed(excerpt), settings)
        assert store.db.execute("SELECT text FROM items").fetchone()[0] == full
        assert "stored copy kept" in " ".join(report.saved.warnings)


def test_item_kept_reason() -> None:
    stored = {"title": "A title", "text": "Full text of the post."}
    assert item_kept_reason(
        stored, Item("k", "article", "A title", text="Full text"), well_formed=True
    )
    assert item_kept_reason(
        stored, Item("k", "article", "A", text="Full text of the post."), well_formed=True
    )
    assert not item_kept_reason(
        stored, Item("k", "article", "A title", text="New text."), well_formed=True
    )
    assert item_kept_reason(
        stored, Item("k", "article", "A title", text="New text."), well_formed=False
    )


def test_a_cut_abs_record_after_the_whole_one_keeps_the_full_text(
    store: CommonStore, settings: Settings, data: Path
) -> None:
    whole = (data / "arxiv" / "hep-th-9901001.abs").read_bytes()
    first = ingest_bytes(store, "arxiv-abs", "file:///whole.abs", whole, settings)
    assert first.ok
    full = store.get_paper("hep-th/9901001").abstract
    assert full.endswith("is very simple.")
    cut = whole[: whole.index(b"The solution") + len(b"The solution is sh")]  # no closing \\
    report = ingest_bytes(store, "arxiv-abs", "file:///cut.abs", cut, settings)
    assert store.get_paper("hep-th/9901001").abstract == full
    assert report.error is not None and "cut short" in report.error
    assert report.saved.papers_updated == 0
    # The same record cut, replayed as the source that read the whole one: its item stays.
    again = ingest_bytes(store, "arxiv-abs", "file:///whole.abs", cut, settings)
    (text,) = store.db.execute(
        "SELECT i.text FROM items i JOIN sources s ON s.id = i.source_id "
        "WHERE s.address = 'file:///whole.abs'"
    ).fetchone()
    assert text == full and again.saved.items_updated == 0


def test_a_cut_feed_after_the_whole_one_keeps_the_full_items(
    store: CommonStore, settings: Settings, demo_dir: Path
) -> None:
    whole = (demo_dir / "blog-lab.rss.xml").read_bytes()
    address = "https://northlake.example/blog/feed.xml"
    assert ingest_bytes(store, "feed", address, whole, settings).ok
    before = dict(store.db.execute("SELECT key, text FROM items"))
    # Cut in the middle of the third entry's text (after its guid), as a dropped connection does.
    third = [i for i in range(len(whole)) if whole.startswith(b"<content:encoded>", i)][2]
    cut = whole[: third + 400]
    report = ingest_bytes(store, "feed", address, cut, settings)
    after = dict(store.db.execute("SELECT key, text FROM items"))
    assert after == before and max(len(t) for t in before.values()) > 500
    assert report.error is not None and "not well-formed" in report.error
    assert "stored copy kept" in " ".join(report.saved.warnings)


def test_a_paper_cut_short_in_a_newer_record_keeps_the_stored_text(store: Store) -> None:
    abstract = "A long abstract that says everything the paper does, in full. " * 10
    whole = Paper("2501.00001", "Title", abstract, versions=[Version(1, "2025-01-01T00:00:00Z")])
    store.save_papers([whole], "2025-01-02T00:00:00Z")
    newer = Paper(
        "2501.00001", "Title", abstract[:448], versions=[Version(2, "2025-02-01T00:00:00Z")]
    )
    saved = store.save_papers([newer], "2025-02-02T00:00:00Z")
    paper = store.get_paper("2501.00001")
    assert paper.abstract == abstract.strip() or paper.abstract == abstract
    assert [v.version for v in paper.versions] == ["v1", "v2"]  # the rest still merges
    assert saved.warnings == [
        "2501.00001: stored abstract kept: the new one is the stored one cut short"
    ]
    changed = Paper("2501.00001", "Title", "A different abstract.", versions=[Version(3)])
    store.save_papers([changed], "2025-03-02T00:00:00Z")
    assert store.get_paper("2501.00001").abstract == "A different abstract."
