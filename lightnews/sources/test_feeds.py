"""Feed parsing against feedparser's own corpus, real lab-blog feeds and our demo feeds."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from lightnews.errors import ParseError
from lightnews.ingest.replay import ingest_bytes
from lightnews.settings import Settings
from lightnews.sources.feeds import parse_feed
from lightnews.sources.opml import OpmlFeed, parse_opml, write_opml
from lightnews.store import CommonStore, Store

CORPUS = "feeds/feedparser-tests/tests"
HOSTILE = re.compile(
    r"<script|<iframe|<object|<embed|<applet|<meta|<link|<style|\son\w+=|"
    r"javascript:|vbscript:|expression\(",
    re.I,
)
_PLAIN_EXPECT = re.compile(
    r"^Expect:\s+not bozo and entries\[0\]\['(title|link|id)'\] == u?'([^<&\\']*)'\s*$", re.M
)


def test_illformed_corpus_never_crashes_the_pipeline(
    shared: Path, store: Store, settings: Settings
) -> None:
    files = sorted(p for p in (shared / CORPUS / "illformed").rglob("*") if p.is_file())
    assert len(files) >= 19
    for path in files:
        # A source already (a replay that fails would leave no new one behind).
        store.add_source("feed", path.as_uri(), now="2026-01-01T00:00:00Z")
        report = ingest_bytes(store, "feed", path.as_uri(), path.read_bytes(), settings)
        row = store.get_source(report.source_id)
        expect = re.search(r"^Expect:\s+(.*)$", path.read_text(errors="replace"), re.M)
        if expect and not expect[1].startswith("bozo"):
            continue  # filed under illformed/ for other reasons (geo, dates): readable
        # Every broken feed is recorded as an error on its source, even when
        # feedparser could still read some entries from it.
        assert not report.ok, path.name
        assert report.error and row.last_error == report.error and row.error_count == 1
        assert "internal error" not in report.error
        assert row.next_attempt


def test_broken_feed_keeps_what_was_stored(
    demo_dir: Path, store: CommonStore, settings: Settings
) -> None:
    address = "https://northlake.example/blog/feed.xml"
    good = ingest_bytes(
        store, "feed", address, (demo_dir / "blog-lab.rss.xml").read_bytes(), settings
    )
    assert good.ok, good.error
    assert good.saved.items_new == 5
    for broken in (b"", b"<rss><channel><item><title>cut", b"\x00\xff garbage", b"{not json"):
        report = ingest_bytes(store, "feed", address, broken, settings)
        assert not report.ok
    row = store.get_source(good.source_id)
    assert row.error_count == 4 and row.last_error
    # The five stored articles are all still there (the cut feed added what it could read).
    kept = store.db.execute("SELECT count(*) FROM items WHERE url LIKE 'https://northlake%'")
    assert kept.fetchone()[0] == 5


@pytest.mark.parametrize("folder", ["rss", "atom10", "atom", "rdf"])
def test_wellformed_expectations(shared: Path, folder: str) -> None:
    checked = 0
    for path in sorted((shared / CORPUS / "wellformed" / folder).glob("*.xml")):
        body = path.read_bytes()
        batch = parse_feed(body)  # every wellformed file parses without error
        head = body[:2000].decode("utf-8", "replace")
        match = _PLAIN_EXPECT.search(head)
        if not match:
            continue
        field, expected = match[1], match[2]
        item = batch.items[0]
        actual = {"title": item.title, "link": item.url, "id": item.key}[field]
        assert actual == expected, path.name
        checked += 1
    assert checked or folder == "atom"


def test_sanitize_corpus_renders_inert(shared: Path) -> None:
    files = sorted((shared / CORPUS / "wellformed/sanitize").glob("*.xml"))
    assert len(files) > 100
    for path in files:
        try:
            batch = parse_feed(path.read_bytes())
        except ParseError:
            continue
        for item in batch.items:
            assert not HOSTILE.search(item.html), (path.name, item.html)
            assert "<" not in item.title


def test_lab_blog_feeds(shared: Path) -> None:
    for path in sorted((shared / "feeds/lab-blogs").glob("*.xml")):
        batch = parse_feed(path.read_bytes())
        assert batch.items and batch.title, path.name
        assert len({i.key for i in batch.items}) == len(batch.items)
        for item in batch.items:
            assert item.title and item.url and item.url.startswith("http")
            assert not HOSTILE.search(item.html)


def test_seed_blog_article(shared: Path) -> None:
    batch = parse_feed((shared / "seed-pages/blog/apple-ml-research.rss.xml").read_bytes())
    (item,) = batch.items
    assert item.title == "Apple Machine Learning Research at ICLR 2025"
    assert item.published == "2025-04-24T16:00:00Z"
    assert "Estimating Metric Depth" in item.text and "\n" in item.text


def test_demo_feeds_all_formats(demo_dir: Path) -> None:
    rss = parse_feed((demo_dir / "blog-lab.rss.xml").read_bytes())
    atom = parse_feed((demo_dir / "blog-notes.atom.xml").read_bytes())
    json_feed = parse_feed((demo_dir / "blog-digest.feed.json").read_bytes())
    assert (len(rss.items), len(atom.items), len(json_feed.items)) == (5, 4, 4)
    assert rss.title and atom.title and json_feed.title == "Kestrel Weekly"
    mentioned = {m.arxiv_id for b in (rss, atom, json_feed) for i in b.items for m in i.mentions}
    assert {
        "2511.18342",
        "2511.10268",
        "2510.08856",
        "cs/0112017",
        "2511.17015",
        "2511.04419",
    } <= mentioned
    hostile = next(i for i in rss.items if "group-sparse" in (i.key or ""))
    assert not HOSTILE.search(hostile.html) and "alert" not in hostile.text
    assert all(i.published for b in (rss, atom, json_feed) for i in b.items)


def test_json_feed_errors() -> None:
    with pytest.raises(ParseError, match="not a JSON Feed"):
        parse_feed(b'{"title": "no version"}')
    with pytest.raises(ParseError, match="no items"):
        parse_feed(b'{"version": "https://jsonfeed.org/version/1.1", "items": 3}')
    batch = parse_feed(
        b'{"version": "https://jsonfeed.org/version/1", "items": [7, '
        b'{"id": 1, "content_text": "a <b> & arXiv:2510.02375"}]}'
    )
    assert len(batch.items) == 1 and batch.warnings
    assert batch.items[0].mentions[0].arxiv_id == "2510.02375"
    assert "&lt;b&gt;" in batch.items[0].html


def test_opml_round_trip(demo_dir: Path) -> None:
    feeds = parse_opml((demo_dir / "sources.opml").read_bytes())
    assert len(feeds) >= 6 and {f.folder for f in feeds} >= {"Lab blogs"}
    again = parse_opml(write_opml(feeds))
    assert [(f.url, f.title, f.folder) for f in again] == [
        (f.url, f.title, f.folder) for f in sorted(feeds, key=lambda f: f.folder or "")
    ] or sorted(again, key=lambda f: f.url) == sorted(
        [OpmlFeed(f.url, f.title, f.folder) for f in feeds], key=lambda f: f.url
    )


def test_opml_rejects_non_opml() -> None:
    with pytest.raises(ParseError):
        parse_opml(b"<rss/>")
    with pytest.raises(ParseError):
        parse_opml(b"<opml><body><outline")
    entity = (
        b'<?xml version="1.0"?><!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]>'
        b'<opml><body><outline text="&e;" xmlUrl="https://a/"/></body></opml>'
    )
    try:
        feeds = parse_opml(entity)
    except ParseError:
        return
    assert all("root:" not in (f.title or "") for f in feeds)
