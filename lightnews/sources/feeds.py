"""Blog and news feeds: RSS 0.9x/1.0/2.0, Atom and JSON Feed, as articles.

feedparser reads the XML formats from bytes our HTTP client fetched (it never
fetches anything itself here); it does not read JSON Feed, so JSON Feed 1.0
and 1.1 are mapped here. Every entry becomes an ``article`` item with
sanitized HTML (nh3 allow-list), readable text, its links, and mentions of
the arXiv papers it names.

A feed feedparser had to repair is still read, with a warning; one with
nothing readable (no feed element, no entries) is a ParseError recorded on
the source.
"""

from __future__ import annotations

import hashlib
import time
from typing import Any

import feedparser
import orjson
from lxml import etree

from lightnews.errors import ParseError
from lightnews.link import link_item
from lightnews.model import Batch, Item, SourceState
from lightnews.normalize.text import clean_text, html_to_text, iso_utc, sanitize_html
from lightnews.sources import Source, SourceTraits

__all__ = ["FeedSource", "parse_feed"]

_HEADER_NOTES = (feedparser.NonXMLContentType,)


def _hrefs(html: str) -> list[str]:
    if "href" not in html:
        return []
    try:
        root = etree.fromstring(f"<div>{html}</div>", etree.HTMLParser())
    except (etree.XMLSyntaxError, ValueError):
        return []
    if root is None:
        return []
    hrefs = root.xpath("//a/@href")
    return [str(h) for h in hrefs] if isinstance(hrefs, list) else []


def _jsonable(value: Any) -> Any:
    if isinstance(value, time.struct_time):
        return iso_utc(value)
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if isinstance(value, str | int | float | bool) or value is None:
        return value
    return str(value)


def _article(
    key: str | None,
    title: str,
    url: str | None,
    author: str | None,
    html: str,
    published: str | None,
    updated: str | None,
    links: list[str],
    tags: list[str],
    payload: Any,
) -> Item:
    clean = sanitize_html(html)
    text = html_to_text(clean)
    all_links = list(dict.fromkeys([*(u for u in [url] if u), *links, *_hrefs(clean)]))
    if not key:
        digest = hashlib.sha1(f"{title}|{url}|{published}|{text[:200]}".encode())
        key = "sha1:" + digest.hexdigest()
    item = Item(
        key=key,
        kind="article",
        title=clean_text(html_to_text(title)),
        url=url,
        author=clean_text(author) or None,
        text=text,
        html=clean,
        published=published,
        updated=updated,
        links=all_links,
        tags=tags,
        payload=orjson.dumps(_jsonable(payload), option=orjson.OPT_NON_STR_KEYS).decode(),
    )
    item.mentions = link_item(item)
    return item


def _from_feedparser(body: bytes, url: str | None) -> Batch:
    # feedparser then follows the XML declaration (RFC 3023) for the encoding.
    headers = {"content-type": "application/xml"}
    if url:
        headers["content-location"] = url
    parsed = feedparser.parse(
        body, response_headers=headers, sanitize_html=False, resolve_relative_uris=True
    )
    batch = Batch(title=clean_text(parsed.feed.get("title")) or None)
    problem = parsed.get("bozo_exception")
    # A missing Content-Type is a note about HTTP headers, not about the feed.
    if parsed.bozo and not isinstance(problem, _HEADER_NOTES):
        if not parsed.entries and not parsed.get("version"):
            raise ParseError(f"not a readable feed: {problem or 'unknown format'}")
        batch.warnings.append(f"feed is not well-formed, read anyway: {problem}")
    for entry in parsed.entries:
        contents = entry.get("content") or []
        html = next((c.get("value", "") for c in contents if "html" in c.get("type", "")), "")
        if not html and contents:
            html = contents[0].get("value", "")
        html = html or entry.get("summary", "")
        updated = iso_utc(entry["updated_parsed"]) if "updated_parsed" in entry else None
        published = iso_utc(entry.get("published_parsed") or entry.get("created_parsed")) or updated
        batch.items.append(
            _article(
                key=entry.get("id") or entry.get("link"),
                title=entry.get("title", ""),
                url=entry.get("link"),
                author=entry.get("author"),
                html=html,
                published=published,
                updated=updated or published,
                links=[lk.get("href", "") for lk in entry.get("links", []) if lk.get("href")],
                tags=[t.get("term", "") for t in entry.get("tags", []) if t.get("term")],
                payload=dict(entry),
            )
        )
    return batch


def _from_json_feed(body: bytes) -> Batch:
    try:
        document = orjson.loads(body)
    except orjson.JSONDecodeError as error:
        raise ParseError(f"not a readable JSON Feed: {error}") from None
    if not isinstance(document, dict) or not str(document.get("version", "")).startswith(
        "https://jsonfeed.org/version/"
    ):
        raise ParseError("JSON document is not a JSON Feed (no jsonfeed.org version)")
    entries = document.get("items")
    if not isinstance(entries, list):
        raise ParseError("JSON Feed has no items list")
    batch = Batch(title=clean_text(str(document.get("title") or "")) or None)
    for entry in entries:
        if not isinstance(entry, dict):
            batch.warnings.append("JSON Feed item that is not an object skipped")
            continue
        authors = entry.get("authors") or ([entry["author"]] if entry.get("author") else [])
        names = [a.get("name", "") for a in authors if isinstance(a, dict)]
        html = entry.get("content_html") or ""
        if not html and entry.get("content_text"):
            html = (
                "<p>"
                + str(entry["content_text"]).replace("&", "&amp;").replace("<", "&lt;")
                + "</p>"
            )
        published = iso_utc(entry.get("date_published"))
        batch.items.append(
            _article(
                key=str(entry["id"]) if entry.get("id") is not None else entry.get("url"),
                title=str(entry.get("title") or ""),
                url=entry.get("url") or entry.get("external_url"),
                author=", ".join(n for n in names if n) or None,
                html=str(html or entry.get("summary") or ""),
                published=published,
                updated=iso_utc(entry.get("date_modified")) or published,
                links=[u for u in [entry.get("external_url")] if isinstance(u, str)],
                tags=[str(t) for t in entry.get("tags") or []],
                payload=entry,
            )
        )
    return batch


def parse_feed(body: bytes, url: str | None = None) -> Batch:
    """Articles of one feed document, whatever its format."""
    if body.lstrip()[:1] in (b"{", b"["):
        return _from_json_feed(body)
    if not body.strip():
        raise ParseError("empty response where a feed was expected")
    return _from_feedparser(body, url)


class FeedSource(Source):
    """A blog or news feed, fetched with conditional GET."""

    kind = "feed"
    summary = "RSS, Atom or JSON Feed of a blog or news site (its URL)"
    traits = SourceTraits(in_opml=True, filter_label="blogs and feeds", filter_order=2)

    def parse(self, body: bytes, state: SourceState, *, url: str | None = None) -> Batch:
        batch = parse_feed(body, url or self.address)
        batch.state = state
        return batch
