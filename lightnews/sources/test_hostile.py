"""Hostile inputs of every kind: no stored javascript:/data: link, no non-document read as one."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from lightnews.errors import ParseError
from lightnews.ingest.replay import ingest_bytes
from lightnews.model import Batch, SourceState
from lightnews.settings import Settings
from lightnews.sources import get_source_class
from lightnews.sources.notes import split_notes
from lightnews.store import CommonStore

BAD = [
    "javascript:alert(1)",
    "JaVaScRiPt:alert(2)",
    "data:text/html,<script>x</script>",
    " java\tscript:alert(3)",
    "vbscript:x",
]


def _read(kind: str, body: bytes, address: str = "https://example.org/x") -> Batch:
    source = get_source_class(kind)(address, {}, Settings(environ={}))
    return source.read(body, SourceState(), url=address)


def _urls(batch: Batch) -> list[str]:
    found = [u for i in batch.items for u in [i.url, *i.links] if u]
    found += [a.avatar for a in batch.accounts if a.avatar]
    for item in batch.items:
        if item.post is not None:
            found += [item.post.card.uri] if item.post.card else []
            found += [item.post.quote.url] if item.post.quote and item.post.quote.url else []
        if item.daily is not None:
            daily = item.daily
            found += [u for u in (daily.github, daily.project_page, daily.thumbnail) if u]
            submitter = daily.submitter
            found += [submitter.avatar_url] if submitter and submitter.avatar_url else []
        found += item.code_links
        for tag in ("href=", "src="):
            found += [p.split('"')[1] for p in item.html.split(tag)[1:] if p.startswith('"')]
    return found


def _assert_safe(batch: Batch) -> None:
    urls = _urls(batch)
    assert urls and all(u.startswith(("http://", "https://")) for u in urls), urls
    assert not any(bad.strip().split(":")[0].lower() in u.lower() for u in urls for bad in BAD)


@pytest.mark.parametrize("bad", BAD)
def test_rss_and_atom_links(bad: str) -> None:
    escaped = bad.replace("&", "&amp;").replace("<", "&lt;")
    rss = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>B</title><item><guid>1</guid>'
        f'<title>T</title><link>{escaped}</link><description><![CDATA[<a href="{bad}">x</a>'
        "<a href='https://ok.example/'>ok</a>]]></description></item></channel></rss>"
    ).encode()
    batch = _read("feed", rss)
    (item,) = batch.items
    assert item.url is None and item.links == ["https://ok.example/"]
    _assert_safe(batch)
    assert any(p.field == "url" and p.key and p.key.endswith("1") for p in batch.problems)


@pytest.mark.parametrize("bad", BAD)
def test_json_feed_links(bad: str) -> None:
    html = f'<a href="{bad}">x</a><a href="https://ok.example/">ok</a>'
    document = {
        "version": "https://jsonfeed.org/version/1.1",
        "items": [{"id": "1", "url": bad, "external_url": bad, "content_html": html}],
    }
    batch = _read("feed", json.dumps(document).encode())
    assert batch.items[0].url is None
    _assert_safe(batch)


@pytest.mark.parametrize("bad", BAD)
def test_bluesky_facets_cards_and_avatars(bad: str) -> None:
    text = "the paper and the code"
    post = {
        "uri": "at://did:plc:a/app.bsky.feed.post/1",
        "author": {"did": "did:plc:a", "handle": "a.example", "avatar": bad},
        "record": {
            "text": text,
            "facets": [
                {
                    "index": {"byteStart": 4, "byteEnd": 9},
                    "features": [{"$type": "app.bsky.richtext.facet#link", "uri": bad}],
                },
                {
                    "index": {"byteStart": 18, "byteEnd": 22},
                    "features": [
                        {"$type": "app.bsky.richtext.facet#link", "uri": "https://ok.example/"}
                    ],
                },
            ],
        },
        "embed": {
            "$type": "app.bsky.embed.external#view",
            "external": {"uri": bad, "title": "card"},
        },
    }
    batch = _read("bluesky", json.dumps({"feed": [{"post": post}]}).encode())
    (item,) = batch.items
    assert item.post is not None and item.post.card is None
    assert item.links == ["https://ok.example/"]
    assert "paper" in item.html and item.html.count("<a ") == 1
    _assert_safe(batch)
    assert [p.field for p in batch.problems] == ["links"]


@pytest.mark.parametrize("bad", BAD)
def test_hugging_face_links(bad: str) -> None:
    entry = {
        "paper": {"id": "2501.00001", "title": "T", "githubRepo": bad, "projectPage": bad},
        "thumbnail": bad,
        "submittedBy": {"avatarUrl": bad, "name": "n"},
    }
    batch = _read("hf-daily", json.dumps([entry]).encode())
    daily = batch.items[0].daily
    assert daily is not None and daily.github is daily.project_page is daily.thumbnail is None
    assert daily.submitter is not None and daily.submitter.avatar_url is None
    assert daily.submitter.name == "n"
    _assert_safe(batch)
    feed = {"items": [{"id": "https://hf.co/papers/2501.00001", "title": "T", "image": bad}]}
    _assert_safe(_read("hf-papers-feed", json.dumps(feed).encode()))


@pytest.mark.parametrize("bad", BAD)
def test_notes_links(bad: str) -> None:
    page = (
        f'<h2><a href="{bad}">Snell: Optimality of scaling</a></h2>'
        f'<p>See <a href="{bad}">this</a> and <a href="https://ok.example/">that</a>.</p>'
    ).encode()
    (note,) = split_notes(page, "https://notes.example/page")
    assert note.url == "https://notes.example/page#snell-optimality-of-scaling"
    assert note.links == [note.url, "https://ok.example/"]


def test_no_stored_link_from_any_kind_is_javascript(store: CommonStore, settings: Settings) -> None:
    bad = "javascript:alert(document.cookie)"
    rss = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>B</title><item><guid>g</guid>'
        f"<title>T</title><link>{bad}</link></item></channel></rss>"
    ).encode()
    report = ingest_bytes(store, "feed", "https://blog.example/feed", rss, settings)
    assert report.error is not None and "g url: link 'javascript:" in report.error
    rows = store.db.execute("SELECT url, links, html FROM items").fetchall()
    assert rows and not any("javascript" in str(value) for row in rows for value in row)


# -- documents that are not what their kind reads --------------------------------------------


def test_deeply_nested_xml_is_not_a_feed() -> None:
    deep = b'<?xml version="1.0"?>' + b"<a>" * 100_000 + b"</a>" * 100_000
    with pytest.raises(ParseError, match="not a readable feed"):
        _read("feed", deep)


def test_an_html_page_is_not_a_feed() -> None:
    with pytest.raises(ParseError, match="not a readable feed"):
        _read("feed", b"<html><body><p>Hello</p></body></html>")


def test_a_starter_pack_is_not_a_scholars_posts(data: Path) -> None:
    pack = (data / "bluesky" / "getStarterPack.json").read_bytes()
    with pytest.raises(ParseError, match="read it as bluesky-starter-pack"):
        _read("bluesky", pack, "someone.bsky.social")
    assert _read("bluesky-starter-pack", pack, "https://bsky.app/starter-pack/a/b").accounts


def test_an_entry_cut_in_two_in_a_repaired_feed_is_skipped() -> None:
    cut = (
        b'<?xml version="1.0"?><rss version="2.0"><channel><title>B</title>'
        b"<item><guid>whole</guid><title>Whole</title></item><item><title>Half"
    )
    batch = _read("feed", cut)
    assert not batch.well_formed and [i.key.rsplit("/", 1)[-1] for i in batch.items] == ["whole"]
    assert "no id or link" in str(batch.problems[0])


def test_notes_deeper_than_the_parser_reads_say_so() -> None:
    page = "<div>" * 5000 + "<h2>Snell: Optimality</h2><p>a</p>" + "</div>" * 5000
    with pytest.raises(ParseError, match=r"could not be read past a point.*depth"):
        split_notes(page.encode(), "https://notes.example/page")
    # Notes before that point are kept, and the page says it was read in part.
    batch = _read("notes", b"<h2>Yue: Inference</h2><p>b</p>" + page.encode())
    assert [i.title for i in batch.items] == ["Yue: Inference"]
    assert "read only in part" in batch.warnings[0] and not batch.well_formed


def test_a_notes_page_with_a_twelve_megabyte_paragraph_keeps_every_note() -> None:
    page = (
        "<h2>Snell: Optimality of scaling</h2><p>" + "x" * 12_000_000 + "</p>"
        "<h2>Yue: Inference scaling</h2><p>b</p>"
    )
    titles = [i.title for i in split_notes(page.encode(), "https://notes.example/page")]
    assert titles == ["Snell: Optimality of scaling", "Yue: Inference scaling"]
