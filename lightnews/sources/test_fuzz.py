"""Every parser is total over its input type: bad bytes cost a field or an item, never a crash.

Property tests (hypothesis) per source kind: arbitrary bytes, the project's
own recordings cut, with hostile tokens put in, or (JSON kinds) with any value
replaced by a value of another type. Whatever comes in, a parser returns a
batch or raises ParseError, and what it returns is storable: every URL
http(s), every string UTF-8. The inputs that made the parsers raise in the
probe of issue 14 are explicit regression cases. Bounded to a few seconds per
parser; ``bench/fuzz.py`` runs the long version on the real recordings.
"""

from __future__ import annotations

import contextlib
import copy
import json
from collections.abc import Callable, Iterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from conftest import DATA, DEMO
from lightnews.errors import ParseError
from lightnews.model import Batch, Item, SourceState
from lightnews.normalize.urls import safe_url
from lightnews.settings import Settings
from lightnews.sources import get_source_class
from lightnews.sources.arxiv_snapshot import SnapshotErrors, iter_snapshot
from lightnews.sources.opml import parse_opml

ADDRESSES = {
    "feed": "https://blog.example/feed",
    "arxiv-api": "cat:cs.LG",
    "arxiv-oai": "cs",
    "arxiv-abs": "file:///x.abs",
    "bluesky": "someone.bsky.social",
    "bluesky-profile": "someone.bsky.social",
    "bluesky-starter-pack": "https://bsky.app/starter-pack/a.example/3k",
    "hf-daily": "",
    "hf-papers-feed": "https://hf.example/feed.json",
    "notes": "https://notes.example/page",
}
SEEDS = {
    "feed": [
        DEMO / "blog-lab.rss.xml",
        DEMO / "blog-notes.atom.xml",
        DEMO / "blog-digest.feed.json",
    ],
    "arxiv-api": [DEMO / "arxiv-api-cs.LG.xml"],
    "arxiv-oai": [DEMO / "arxiv-oai-cs.xml", DEMO / "arxiv-oai-cs-raw.xml"],
    "arxiv-abs": [DATA / "arxiv" / "hep-th-9901001.abs"],
    "bluesky": [DATA / "bluesky" / "getAuthorFeed.embeds.json", DEMO / "bluesky-feed.mara.json"],
    "bluesky-profile": [DATA / "bluesky" / "getProfile.ada.json"],
    "bluesky-starter-pack": [DATA / "bluesky" / "getStarterPack.json"],
    "hf-daily": [DEMO / "hf-daily-2025-11-27.json", DATA / "hf" / "daily_papers.2025-10-02.json"],
    "hf-papers-feed": [DATA / "hf" / "papers-feed.json"],
    "notes": [DEMO / "notes-neurips2025.html", DATA / "notes" / "colm2025-notes.md"],
}
TOKENS = [
    b"&#x110000;",
    b"&#xD800;",
    b"&#1;",
    b"\x00",
    b"\x0b",
    b"\xff",
    b"9" * 4301,
    b"9999-12-31T23:59:59-05:00",
    b"Fri, 31 Dec 9999 23:59:59 -0500",
    b"javascript:alert(1)",
    b"<georss:point>1</georss:point>",
    b"<h2>",
    b"\\\\",
    b"{",
    b"]",
    b'"',
    b"<",
    b"&",
]
JSON = st.recursive(
    st.none()
    | st.booleans()
    | st.integers()
    | st.floats(allow_nan=False)
    | st.text(max_size=30)
    | st.sampled_from(["9999-12-31T23:59:59-05:00", "javascript:alert(1)", "v" + "9" * 4301]),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=8), inner, max_size=3)
    ),
    max_leaves=6,
)


def _read(kind: str, body: bytes) -> Batch:
    source = get_source_class(kind)(ADDRESSES[kind], {}, Settings(environ={}))
    return source.read(body, SourceState(), url=ADDRESSES[kind])


def _strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for key, child in value.items():
            yield from _strings(key)
            yield from _strings(child)
    elif isinstance(value, list | tuple):
        for child in value:
            yield from _strings(child)


def stored_urls(item: Item) -> list[str | None]:
    """Every URL of ``item`` the store keeps and a page may link: common and typed fields."""
    urls: list[str | None] = [item.url, *item.links, *item.code_links]
    if item.post is not None:
        urls += [item.post.card.uri if item.post.card else None]
        urls += [item.post.quote.url if item.post.quote else None]
    if item.daily is not None:
        daily = item.daily
        urls += [daily.github, daily.project_page, daily.thumbnail]
        urls += [daily.submitter.avatar_url if daily.submitter else None]
    return urls


def check(batch: Batch) -> None:
    """What the store relies on: http(s) URLs only, strings it can write."""
    for item in batch.items:
        for url in stored_urls(item):
            assert url is None or safe_url(url) == url, url
    for account in batch.accounts:
        assert account.avatar is None or safe_url(account.avatar) == account.avatar
    for text in _strings(asdict(batch)):
        text.encode("utf-8")  # no lone surrogates


def total(kind: str, body: bytes) -> Batch | None:
    """``kind``'s batch of ``body`` (checked), or None when it is refused with a ParseError."""
    try:
        batch = _read(kind, body)
    except ParseError as error:
        assert str(error)  # a message the user can read
        return None
    check(batch)
    return batch


def _replace_somewhere(document: Any, value: Any, choice: int) -> Any:
    """``document`` with its ``choice``-th node (in walk order) replaced by ``value``."""
    document = copy.deepcopy(document)
    places: list[tuple[Any, Any]] = []

    def walk(node: Any) -> None:
        children = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in list(children):
            places.append((node, key))
            if isinstance(child, dict | list) and len(places) < 400:
                walk(child)

    if not isinstance(document, dict | list):
        return value
    walk(document)
    if not places:
        return value
    parent, key = places[choice % len(places)]
    parent[key] = value
    return document


def _mutated(kind: str, data: st.DataObject) -> bytes:
    seed = data.draw(st.sampled_from([p for p in SEEDS[kind] if p.is_file()])).read_bytes()
    how = data.draw(st.sampled_from(["cut", "token", "json", "bytes"]))
    if how == "json" and seed.lstrip()[:1] in (b"{", b"["):
        value = data.draw(JSON)
        choice = data.draw(st.integers(0, 10_000))
        return json.dumps(_replace_somewhere(orjson.loads(seed), value, choice)).encode()
    if how == "bytes":
        return data.draw(st.binary(max_size=400))
    at = data.draw(st.integers(0, len(seed)))
    if how == "cut":
        return seed[:at]
    return seed[:at] + data.draw(st.sampled_from(TOKENS)) + seed[at:]


@pytest.mark.parametrize("kind", sorted(SEEDS))
@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_parsers_are_total(kind: str, data: st.DataObject) -> None:
    total(kind, _mutated(kind, data))


@settings(max_examples=40, deadline=None)
@given(st.binary(max_size=600) | st.sampled_from([b"<opml><body><outline xmlUrl='x'/>", b""]))
def test_opml_is_total(body: bytes) -> None:
    with contextlib.suppress(ParseError):
        parse_opml(body)


@settings(max_examples=40, deadline=None)
@given(st.lists(JSON, max_size=4))
def test_snapshot_lines_are_total(records: list[Any]) -> None:
    lines = b"\n".join(json.dumps(r).encode() for r in records)
    errors = SnapshotErrors()
    papers = list(iter_snapshot(iter(lines.splitlines(True)), errors))  # type: ignore[arg-type]
    assert len(papers) + errors.count <= len(records)


# -- the inputs that raised in issue 14's probe ---------------------------------------------

RSS = (
    '<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title>{}'
    "<item><guid>ok</guid><title>Fine</title><link>https://blog.example/ok</link></item>"
    "</channel></rss>"
)
ATOM_GEO = (
    b'<?xml version="1.0"?><feed xmlns="http://www.w3.org/2005/Atom" '
    b'xmlns:georss="http://www.georss.org/georss" xmlns:gml="http://www.opengis.net/gml">'
    b"<entry><id>geo</id><title>t</title><georss:where><gml:Polygon><gml:exterior>"
    b"<gml:LinearRing><gml:posList>a b</gml:posList></gml:LinearRing></gml:exterior>"
    b"</gml:Polygon></georss:where></entry><entry><id>ok</id><title>Fine</title></entry></feed>"
)
JSON_FEED = {"version": "https://jsonfeed.org/version/1.1", "title": "Blog"}
LATE = "9999-12-31T23:59:59-05:00"
ABS = (
    "\\\\\narXiv:2501.00001\nFrom: A <a@example.org>\nDate: Mon, 2 Apr 2007 19:18:42 GMT (1kb)\n"
    "Date (revised {}): {}\nTitle: A title\nAuthors: A. Writer\n\\\\\n  An abstract.\n\\\\\n"
)
OAI = (
    '<?xml version="1.0"?><OAI-PMH xmlns="http://www.openarchives.org/OAI/2.0/"><ListRecords>'
    "<record><header><identifier>oai:arXiv.org:2501.00001</identifier>"
    "<datestamp>2025-01-02</datestamp></header><metadata>"
    '<arXivRaw xmlns="http://arxiv.org/OAI/arXivRaw/"><id>2501.00001</id><title>T</title>'
    '<version version="v{}"><date>{}</date></version></arXivRaw></metadata></record>'
    "</ListRecords></OAI-PMH>"
)
FEED_POST = {
    "uri": "at://did:plc:a/app.bsky.feed.post/1",
    "record": {"text": "see the paper", "createdAt": LATE},
    "indexedAt": "0001-01-01T00:00:00+05:00",
}
REGRESSIONS: list[tuple[str, bytes, Callable[[Batch | None], bool]]] = [
    # Out-of-range dates (iso_utc raised OverflowError): the date is dropped, the item kept.
    (
        "feed",
        RSS.format(
            f"<item><guid>late</guid><title>L</title><pubDate>{LATE}</pubDate></item>"
        ).encode(),
        lambda b: (
            b is not None
            and [i.key.rsplit("/", 1)[-1] for i in b.items] == ["late", "ok"]
            and b.items[0].published is None
        ),
    ),
    (
        "feed",
        json.dumps({**JSON_FEED, "items": [{"id": "late", "date_published": LATE}]}).encode(),
        lambda b: b is not None and b.items[0].published is None,
    ),
    (
        "bluesky",
        json.dumps({"feed": [{"post": FEED_POST}]}).encode(),
        lambda b: b is not None and len(b.items) == 1 and b.items[0].published is None,
    ),
    (
        "hf-daily",
        json.dumps(
            [
                {
                    "paper": {
                        "id": "2501.00001",
                        "title": "T",
                        "publishedAt": LATE,
                        "submittedOnDailyAt": LATE,
                    }
                }
            ]
        ).encode(),
        lambda b: b is not None and len(b.papers) == 1 and b.papers[0].published is None,
    ),
    (
        "hf-papers-feed",
        json.dumps(
            {
                "items": [
                    {"id": "https://hf.co/papers/2501.00001", "title": "T", "date_published": LATE}
                ]
            }
        ).encode(),
        lambda b: b is not None and len(b.items) == 1,
    ),
    (
        "arxiv-abs",
        ABS.format("v2", "Fri, 31 Dec 9999 23:59:59 -0500").encode(),
        lambda b: b is not None and b.papers[0].title == "A title",
    ),
    ("arxiv-oai", OAI.format("1", LATE).encode(), lambda b: b is not None and len(b.papers) == 1),
    (
        "notes",
        f"---\ndate: {LATE}\n---\n## Snell: Optimality of scaling\n\nbody\n".encode(),
        lambda b: b is not None and len(b.items) == 1,
    ),
    # Wrong-typed JSON Feed and Hugging Face fields: ignored, the item kept.
    (
        "feed",
        json.dumps(
            {
                **JSON_FEED,
                "items": [
                    {
                        "id": 1,
                        "title": 5,
                        "url": 7,
                        "tags": "abc",
                        "authors": True,
                        "content_html": 3,
                    }
                ],
            }
        ).encode(),
        lambda b: b is not None and len(b.items) == 1 and b.items[0].title == "",
    ),
    (
        "feed",
        json.dumps(
            {**JSON_FEED, "items": [{"id": "a", "tags": 5, "author": 3, "url": {"a": 1}}]}
        ).encode(),
        lambda b: b is not None and len(b.items) == 1 and b.items[0].url is None,
    ),
    (
        "hf-daily",
        json.dumps(
            [
                {
                    "paper": {
                        "id": "2501.00001",
                        "authors": "abc",
                        "title": ["x"],
                        "ai_keywords": 5,
                        "summary": 3,
                    }
                }
            ]
        ).encode(),
        lambda b: b is not None and len(b.papers) == 1 and b.papers[0].authors == [],
    ),
    (
        "hf-daily",
        json.dumps([{"paper": {"id": "2501.00001", "upvotes": 2**70}}]).encode(),
        lambda b: b is not None and "upvotes" not in b.items[0].engagement,
    ),
    # feedparser's own exceptions: a character past U+10FFFF, a malformed GeoRSS polygon.
    (
        "feed",
        RSS.format("<item><guid>x</guid><title>a &#x110000; b</title></item>").encode(),
        lambda b: b is not None and b.items[0].title == "a \ufffd b",
    ),
    (
        "feed",
        ATOM_GEO,
        lambda b: b is not None and [i.key.rsplit("/", 1)[-1] for i in b.items] == ["geo", "ok"],
    ),
    # A control character in a notes page (a text and a link).
    (
        "notes",
        b"<h2>Snell: Optimality</h2><p>a</p>&#1;b<br>c<h2>Yue: Inference</h2><p>d</p>",
        lambda b: b is not None and len(b.items) == 2,
    ),
    (
        "notes",
        b'<h2>Snell: Optimality</h2><p style="background:url(/a\x0cb)">'
        b'<a href="/p&#12;q">x</a></p>',
        lambda b: b is not None and b.items[0].links[-1] == "https://notes.example/pq",
    ),
    (
        "notes",
        b'<h2><a href="/x&#1;y">Snell: Optimality</a></h2><p>a</p>',
        lambda b: b is not None and len(b.items) == 1,
    ),
    # A 4,301-digit arXiv version: the version is dropped, the paper kept.
    (
        "arxiv-abs",
        ABS.format("v" + "9" * 4301, "Mon, 2 Apr 2007 19:18:42 GMT").encode(),
        lambda b: (
            b is not None
            and [v.number for v in b.papers[0].versions] == [1]
            and b.problems[0].field == "versions"
        ),
    ),
    (
        "arxiv-oai",
        OAI.format("9" * 4301, "Mon, 2 Apr 2007 19:18:42 GMT").encode(),
        lambda b: b is not None and b.papers[0].versions == [],
    ),
]


@pytest.mark.parametrize(
    ("kind", "body", "expected"),
    REGRESSIONS,
    ids=[f"{k}-{n}" for n, (k, _, _) in enumerate(REGRESSIONS)],
)
def test_inputs_that_raised_before(
    kind: str, body: bytes, expected: Callable[[Batch | None], bool]
) -> None:
    assert expected(total(kind, body))


def test_a_4301_digit_version_in_a_snapshot_line_costs_only_the_version() -> None:
    line = json.dumps(
        {
            "id": "2501.00001",
            "title": "T",
            "versions": [
                {"version": "v1", "created": "Mon, 2 Apr 2007 19:18:42 GMT"},
                {"version": "v" + "9" * 4301, "created": LATE},
            ],
        }
    ).encode()
    errors = SnapshotErrors()
    (paper,) = iter_snapshot(iter([line]), errors)  # type: ignore[arg-type]
    assert [v.number for v in paper.versions] == [1] and errors.count == 0


def test_seeds_are_present() -> None:
    missing = [str(p) for paths in SEEDS.values() for p in paths if not Path(p).is_file()]
    assert not missing
