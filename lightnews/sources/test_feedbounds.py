"""Feed bodies built to make feedparser slow are read within seconds, and normal ones unchanged."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from lightnews.errors import ParseError
from lightnews.model import SourceState
from lightnews.settings import Settings
from lightnews.sources.feedbounds import Budget, bound_feed
from lightnews.sources.feeds import FeedSource, parse_feed

RSS = (
    b'<?xml version="1.0" encoding="utf-8"?><rss version="2.0" '
    b'xmlns:dc="http://purl.org/dc/elements/1.1/"><channel><title>t</title>'
)
END = b"</channel></rss>"
ATOM = b'<feed xmlns="http://www.w3.org/2005/Atom"><title>t</title><id>urn:f</id>'


def _item(number: int, inner: bytes = b"") -> bytes:
    return b"<item><guid>https://e.org/%d</guid><title>t%d</title>%s</item>" % (
        number,
        number,
        inner,
    )


#: CPU seconds a hostile body may cost here: each case took from 20 s to minutes before
#: its bound, and under a second after; a machine at a load of 15 stretches a process's
#: CPU time too (one read measured 1.08 s there), so the guard sits well above that.
BOUND = 3.0


def _read(body: bytes) -> tuple[float, FeedSource, object]:
    source = FeedSource("https://e.org/feed", {}, Settings(environ={}))
    begun = time.process_time()
    batch = source.read(body, SourceState(), url="https://e.org/feed")
    return time.process_time() - begun, source, batch


def test_a_long_rss_author_is_cut_before_feedparser_reads_it() -> None:
    # 120 KB of one word took feedparser's e-mail search 45 s before.
    body = RSS + _item(1, b"<author>" + b"a" * 120_000 + b"</author>") + END
    seconds, _, batch = _read(body)
    assert seconds < BOUND
    (item,) = batch.items  # type: ignore[attr-defined]
    assert item.author and len(item.author) <= 254
    assert any("author lines" in w for w in batch.warnings)  # type: ignore[attr-defined]


def test_author_lines_in_cdata_and_with_dots_are_cut_too() -> None:
    for author in (b"<![CDATA[" + b"a" * 60_000 + b"]]>", b"x@" + b"a." * 30_000):
        body = RSS + _item(1, b"<dc:creator>" + author + b"</dc:creator>") + END
        seconds, _, batch = _read(body)
        assert seconds < BOUND
        assert len(batch.items) == 1  # type: ignore[attr-defined]


def test_a_body_full_of_entries_is_read_to_the_budget_within_seconds() -> None:
    entries = b"".join(_item(n, b"<category>a</category>") for n in range(150_000))
    body = RSS + entries + END
    assert len(body) > 10_000_000
    seconds, _, batch = _read(body)
    assert seconds < 5.0
    assert len(batch.items) == 2000  # type: ignore[attr-defined]
    assert any("first 2,000 entries" in w for w in batch.warnings)  # type: ignore[attr-defined]


def test_an_entry_past_the_budget_costs_that_entry_only() -> None:
    categories = b"".join(b"<category>c%d</category>" % n for n in range(40_000))
    body = RSS + _item(1) + _item(2, categories) + _item(3) + END
    seconds, _, batch = _read(body)
    assert seconds < BOUND  # 20 s before: feedparser compares each category with all before
    assert [i.key for i in batch.items] == ["https://e.org/1", "https://e.org/3"]  # type: ignore[attr-defined]
    (problem,) = [p for p in batch.problems if "entry skipped" in p.message]  # type: ignore[attr-defined]
    assert problem.key == "https://e.org/2"


def test_tags_with_many_attributes_or_huge_values_keep_their_first_attributes() -> None:
    many = b" ".join(b'a%d="x"' % n for n in range(100_000))
    entry = (
        b'<entry><id>urn:1</id><title>t</title><link href="https://e.org/1"/>'
        b'<link rel="related" href="https://e.org/' + b"a" * 200_000 + b'"/>'
        b"<summary " + many + b">s</summary></entry>"
    )
    body = ATOM + entry + b"</feed>"
    seconds, _, batch = _read(body)
    assert seconds < BOUND  # over 2 min before
    (item,) = batch.items  # type: ignore[attr-defined]
    assert item.url == "https://e.org/1" and item.text == "s"
    assert all(len(link) < 1000 for link in item.links)


def test_a_header_past_the_budget_is_refused_with_a_reason() -> None:
    body = RSS + b"<category>c</category>" * 200_000 + _item(1) + END
    with pytest.raises(ParseError, match="before the first entry"):
        parse_feed(body)


def test_a_normal_feed_is_given_to_feedparser_unchanged(demo_dir: Path) -> None:
    for path in sorted(demo_dir.glob("blog-*.xml")):
        body = path.read_bytes()
        bounded = bound_feed(body, Budget())
        assert bounded.body == body and not bounded.warnings and not bounded.problems


def test_a_utf16_body_is_bounded_too() -> None:
    text = (RSS + _item(1, b"<author>" + b"a" * 120_000 + b"</author>") + END).decode()
    body = text.replace('encoding="utf-8"', 'encoding="utf-16"').encode("utf-16")
    seconds, _, batch = _read(body)
    assert seconds < BOUND
    assert len(batch.items) == 1  # type: ignore[attr-defined]


def _nested_json_feed(items: int) -> bytes:
    nested = b"[" * 250 + b"]" * 250
    entries = b",".join(b'{"id":"%d","x":%s}' % (n, nested) for n in range(items))
    return b'{"version":"https://jsonfeed.org/version/1.1","items":[' + entries + b"]}"


def test_a_json_feed_of_deeply_nested_arrays_reads_within_seconds() -> None:
    seconds, _, batch = _read(_nested_json_feed(3000))  # 750,000 arrays
    assert seconds < 5.0
    assert len(batch.items) == 2000  # type: ignore[attr-defined]
    begun = time.process_time()
    with pytest.raises(ParseError, match="6,275,002 arrays and objects"):
        _read(_nested_json_feed(25_000))  # 15 MB: 7 s before, and more under a bigger heap
    assert time.process_time() - begun < 1.0
