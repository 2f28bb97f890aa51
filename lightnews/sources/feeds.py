"""Blog and news feeds: RSS 0.9x/1.0/2.0, Atom and JSON Feed, as articles.

feedparser reads the XML formats from bytes our HTTP client fetched (it never
fetches anything itself here); it does not read JSON Feed, so JSON Feed 1.0
and 1.1 are mapped here. Every entry becomes an ``article`` item with
sanitized HTML (nh3 allow-list), readable text, its links, and mentions of
the arXiv papers it names.

A feed feedparser had to repair is still read, with a warning, but its
entries never replace stored ones (``Batch.well_formed``: a repaired feed is
often a cut one); one with nothing readable (no feed element, no entries) is
a ParseError recorded on the source. One bad entry costs that entry, one bad
field that field (a link that is not http(s), a date past year 9999, a JSON
Feed value of the wrong type): each is a ``Problem`` naming the entry.
"""

from __future__ import annotations

import hashlib
import re
import time
from typing import Any

import feedparser
import orjson
from lxml import etree

from lightnews.errors import ParseError
from lightnews.model import Batch, Item, Problem, SourceState
from lightnews.normalize.identifiers import link_item
from lightnews.normalize.text import clean_text, html_to_text, iso_utc, sanitize_html
from lightnews.normalize.urls import safe_url, safe_urls
from lightnews.sources import Source, SourceTraits, jsonsafe
from lightnews.sources.feedbounds import Budget, bound_feed

__all__ = ["FeedSource", "parse_feed"]

_HEADER_NOTES = (feedparser.NonXMLContentType,)
#: Numeric character references; feedparser turns them into characters with ``chr``.
_CHAR_REF = re.compile(rb"&#(?:[xX]([0-9A-Fa-f]{1,40})|([0-9]{1,40}));")
_REPLACEMENT = b"&#xFFFD;"
#: GeoRSS and GML, whose parsing in feedparser can raise on a malformed geometry.
_GEO_NAMESPACES = re.compile(rb"https?://www\.(?:georss\.org/georss|opengis\.net/gml)")


def _char_ref(match: re.Match[bytes]) -> bytes:
    """A reference to a character that cannot exist (past U+10FFFF, a surrogate) as U+FFFD."""
    code = int(match[1], 16) if match[1] else int(match[2])
    if code > 0x10FFFF or 0xD800 <= code <= 0xDFFF:
        return _REPLACEMENT
    return match[0]


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


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
    url: Any,
    author: str | None,
    html: str,
    published: str | None,
    updated: str | None,
    links: list[Any],
    tags: list[str],
    payload: Any,
    problems: list[Problem],
) -> Item:
    clean = sanitize_html(html)
    text = html_to_text(clean)
    link = safe_url(url)
    all_links = safe_urls([link, *links, *_hrefs(clean)])
    if not key:
        digest = hashlib.sha1(f"{title}|{url}|{published}|{text[:200]}".encode())
        key = "sha1:" + digest.hexdigest()
    item = Item(
        key=key,
        kind="article",
        title=clean_text(html_to_text(title)),
        url=link,
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
    if url and link is None:
        problems.append(Problem(f"link {str(url)[:80]!r} dropped: not an http(s) URL", key, "url"))
    return item


def _entry_key(entry: Any) -> str | None:
    """An entry's id or link, for naming it in a problem (None when it has neither)."""
    if not isinstance(entry, dict):
        return None
    key = entry.get("id") or entry.get("link")
    return str(key)[:200] if isinstance(key, str | int) and key else None


def _feedparser(body: bytes, headers: dict[str, str]) -> Any:
    return feedparser.parse(
        body, response_headers=headers, sanitize_html=False, resolve_relative_uris=True
    )


def _from_feedparser(body: bytes, url: str | None, budget: Budget) -> Batch:
    # feedparser then follows the XML declaration (RFC 3023) for the encoding.
    headers = {"content-type": "application/xml"}
    if url:
        headers["content-location"] = url
    bounded = bound_feed(body, budget)  # what feedparser reads costs seconds at most
    body = _CHAR_REF.sub(_char_ref, bounded.body)
    geography: str | None = None
    try:
        parsed = _feedparser(body, headers)
    except Exception as error:  # feedparser's own bugs on hostile input (GeoRSS geometry)
        # Read again with the geographic namespaces unknown: their elements are skipped.
        geography = f"{type(error).__name__}: {error}"
        try:
            parsed = _feedparser(_GEO_NAMESPACES.sub(b"urn:lightnews:ignored", body), headers)
        except Exception as again:
            raise ParseError(
                f"not a readable feed: the feed parser failed ({type(again).__name__}: {again})"
            ) from None
    batch = Batch(title=clean_text(_str(parsed.feed.get("title"))) or None)
    batch.warnings += bounded.warnings
    batch.problems += bounded.problems
    problem = parsed.get("bozo_exception")
    if not parsed.entries and not parsed.get("version"):
        raise ParseError(
            f"not a readable feed: {problem or 'no RSS, Atom or RDF feed in this document'}"
        )
    if geography:
        batch.warnings.append(f"feed read without its geographic data ({geography})")
    # A missing Content-Type is a note about HTTP headers, not about the feed.
    if parsed.bozo and not isinstance(problem, _HEADER_NOTES):
        batch.warnings.append(f"feed is not well-formed, read anyway: {problem}")
        batch.well_formed = False
    for entry in parsed.entries:
        if not batch.well_formed and _entry_key(entry) is None:
            # Nothing would match it later: likely the entry the document was cut in.
            batch.problems.append(Problem("entry with no id or link in a repaired feed: skipped"))
            continue
        try:
            batch.items.append(_feedparser_entry(entry, batch.problems))
        except Exception as error:  # one entry feedparser left in a shape we cannot read
            batch.problems.append(
                Problem(f"entry skipped: {type(error).__name__}: {error}", _entry_key(entry))
            )
    return batch


def _feedparser_entry(entry: Any, problems: list[Problem]) -> Item:
    contents = [c for c in entry.get("content") or [] if isinstance(c, dict)]
    html = next((_str(c.get("value")) for c in contents if "html" in _str(c.get("type"))), "")
    if not html and contents:
        html = _str(contents[0].get("value"))
    html = html or _str(entry.get("summary"))
    # Not entry.get: feedparser would answer with published_parsed (a deprecated fallback).
    updated = iso_utc(entry["updated_parsed"]) if "updated_parsed" in entry else None
    published = iso_utc(entry.get("published_parsed") or entry.get("created_parsed")) or updated
    links = [lk.get("href") for lk in entry.get("links") or [] if isinstance(lk, dict)]
    tags = [_str(t.get("term")) for t in entry.get("tags") or [] if isinstance(t, dict)]
    return _article(
        key=_entry_key(entry),
        title=_str(entry.get("title")),
        url=entry.get("link"),
        author=_str(entry.get("author")),
        html=html,
        published=published,
        updated=updated or published,
        links=links,
        tags=[t for t in tags if t],
        payload=dict(entry),
        problems=problems,
    )


def _from_json_feed(body: bytes, budget: Budget) -> Batch:
    try:
        document = jsonsafe.loads(body)
    except orjson.JSONDecodeError as error:
        raise ParseError(f"not a readable JSON Feed: {error}") from None
    if not isinstance(document, dict) or not str(document.get("version", "")).startswith(
        "https://jsonfeed.org/version/"
    ):
        raise ParseError("JSON document is not a JSON Feed (no jsonfeed.org version)")
    entries = document.get("items")
    if not isinstance(entries, list):
        raise ParseError("JSON Feed has no items list")
    batch = Batch(title=clean_text(_str(document.get("title"))) or None)
    size = 0
    for number, entry in enumerate(entries):
        if not isinstance(entry, dict):
            batch.warnings.append("JSON Feed item that is not an object skipped")
            continue
        # The same budget as an XML feed's: what one refresh reads costs seconds at most.
        try:
            length = len(orjson.dumps(entry, option=orjson.OPT_NON_STR_KEYS))
        except (TypeError, orjson.JSONEncodeError) as error:  # nested past orjson's limit
            batch.problems.append(Problem(f"item skipped: {error}", _entry_key(entry)))
            continue
        if length > budget.entry_bytes:
            batch.problems.append(
                Problem(
                    f"item skipped: {length:,} bytes, more than an entry may hold "
                    f"({budget.entry_bytes:,})",
                    _entry_key(entry),
                )
            )
            continue
        if number >= budget.entries or size + length > budget.total_bytes:
            batch.warnings.append(
                f"read the first {number:,} items only: the rest is past what one refresh reads "
                f"({budget.entries:,} items, {budget.total_bytes:,} bytes)"
            )
            break
        size += length
        try:
            batch.items.append(_json_feed_entry(entry, batch.problems))
        except Exception as error:  # a programmer's error on one item must not lose the rest
            batch.problems.append(
                Problem(f"item skipped: {type(error).__name__}: {error}", _entry_key(entry))
            )
    return batch


def _json_feed_entry(entry: dict[str, Any], problems: list[Problem]) -> Item:
    """One JSON Feed item; a value of the wrong type counts as absent."""
    authors = entry.get("authors")
    if not isinstance(authors, list):
        authors = [entry.get("author")]
    names = [_str(a.get("name")) for a in authors if isinstance(a, dict)]
    html = _str(entry.get("content_html"))
    if not html and _str(entry.get("content_text")):
        text = _str(entry.get("content_text"))
        html = "<p>" + text.replace("&", "&amp;").replace("<", "&lt;") + "</p>"
    published = iso_utc(entry.get("date_published"))
    raw_id = entry.get("id")
    key = str(raw_id) if isinstance(raw_id, str | int) and not isinstance(raw_id, bool) else None
    url = entry.get("url") if isinstance(entry.get("url"), str) else entry.get("external_url")
    tags = entry.get("tags")
    return _article(
        key=key or _str(entry.get("url")) or None,
        title=_str(entry.get("title")),
        url=url,
        author=", ".join(n for n in names if n) or None,
        html=html or _str(entry.get("summary")),
        published=published,
        updated=iso_utc(entry.get("date_modified")) or published,
        links=[entry.get("external_url")],
        tags=[t for t in tags if isinstance(t, str)] if isinstance(tags, list) else [],
        payload=entry,
        problems=problems,
    )


def parse_feed(body: bytes, url: str | None = None, budget: Budget | None = None) -> Batch:
    """Articles of one feed document, whatever its format, read within ``budget``."""
    budget = budget or Budget()
    if body.lstrip()[:1] in (b"{", b"["):
        return _from_json_feed(body, budget)
    if not body.strip():
        raise ParseError("empty response where a feed was expected")
    return _from_feedparser(body, url, budget)


class FeedSource(Source):
    """A blog or news feed, fetched with conditional GET."""

    kind = "feed"
    summary = "RSS, Atom or JSON Feed of a blog or news site (its URL)"
    traits = SourceTraits(in_opml=True, filter_label="blogs and feeds", filter_order=2)

    def parse(self, body: bytes, state: SourceState, *, url: str | None = None) -> Batch:
        budget = Budget(
            title_chars=int(self.settings.max_title_chars),
            url_chars=int(self.settings.max_url_chars),
        )
        batch = parse_feed(body, url or self.address, budget)
        batch.state = state
        return batch
