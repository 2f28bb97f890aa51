"""OPML import and export of feed sources, folders included.

Feed readers exchange subscriptions as OPML 2.0: ``<outline type="rss"
xmlUrl=...>`` elements, nested in outlines that act as folders. Import keeps
the innermost folder name; export writes one folder outline per folder.
:func:`read_subscriptions` reads a reader's own file for ``sources add --opml``:
each address checked as one typed by hand, each title cut to the title limit.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime
from pathlib import Path

from lxml import etree

from lightnews.errors import ParseError, UsageError
from lightnews.normalize import validate
from lightnews.sources.xmlsafe import parse_xml

__all__ = [
    "MAX_OPML_BYTES",
    "MAX_OPML_FEEDS",
    "OpmlFeed",
    "Subscription",
    "Subscriptions",
    "parse_opml",
    "read_subscriptions",
    "write_opml",
]

#: An OPML file larger than this, or listing more feeds, is not a reader's subscriptions.
MAX_OPML_BYTES = 15 * 1024 * 1024
MAX_OPML_FEEDS = 5000


@dataclass(frozen=True, slots=True)
class OpmlFeed:
    url: str
    title: str | None = None
    folder: str | None = None
    site: str | None = None


def parse_opml(body: bytes) -> list[OpmlFeed]:
    """Every feed in an OPML document, with the folder it sits in."""
    root = parse_xml(body, "an OPML document")
    if etree.QName(root).localname.lower() != "opml":
        raise ParseError(f"expected <opml>, got <{etree.QName(root).localname}>")
    body_node = root.find("body")
    if body_node is None:
        raise ParseError("OPML document has no <body>")
    feeds: list[OpmlFeed] = []

    def walk(node: etree._Element, folder: str | None) -> None:
        for outline in node.findall("outline"):
            url = outline.get("xmlUrl") or outline.get("xmlurl")
            title = outline.get("title") or outline.get("text")
            if url:
                feeds.append(OpmlFeed(url.strip(), title, folder, outline.get("htmlUrl")))
            else:
                walk(outline, title or folder)

    walk(body_node, None)
    return feeds


def write_opml(feeds: Iterable[OpmlFeed], title: str = "Lightnews sources") -> bytes:
    """An OPML 2.0 document of ``feeds``, grouped by folder."""
    root = etree.Element("opml", version="2.0")
    head = etree.SubElement(root, "head")
    etree.SubElement(head, "title").text = title
    etree.SubElement(head, "dateCreated").text = format_datetime(datetime.now(UTC))
    body = etree.SubElement(root, "body")
    folders: dict[str | None, etree._Element] = {}
    for feed in feeds:
        parent = body
        if feed.folder:
            if feed.folder not in folders:
                folders[feed.folder] = etree.SubElement(
                    body, "outline", text=feed.folder, title=feed.folder
                )
            parent = folders[feed.folder]
        attributes = {"type": "rss", "text": feed.title or feed.url, "xmlUrl": feed.url}
        if feed.title:
            attributes["title"] = feed.title
        if feed.site:
            attributes["htmlUrl"] = feed.site
        etree.SubElement(parent, "outline", attributes)
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))


@dataclass(frozen=True, slots=True)
class Subscription:
    """A feed of a reader's OPML file, ready to follow: its checked address, title and folder."""

    address: str
    title: str | None
    folder: str | None


@dataclass(frozen=True, slots=True)
class Subscriptions:
    """The feeds of an OPML file that can be followed, and those refused (address, why)."""

    feeds: tuple[Subscription, ...]
    refused: tuple[tuple[str, str], ...]

    @property
    def none_followable(self) -> bool:
        """The file lists feeds, and not one of them can be followed."""
        return bool(self.refused) and not self.feeds


def read_subscriptions(path: Path, folder: str | None, title_chars: int) -> Subscriptions:
    """The feeds of a reader's OPML file, each address checked as ``sources add URL`` checks it
    (those refused are left out, with why) and each title and folder cut to ``title_chars``;
    ``folder``, when given, files them all. A file that is not a list of subscriptions (too
    large, unreadable, too many feeds) is a usage error: the reader's file, not a failed fetch."""
    if path.stat().st_size > MAX_OPML_BYTES:
        raise UsageError(
            f"{path} is over {MAX_OPML_BYTES // (1024 * 1024)} MB: not an OPML "
            "list of subscriptions"
        )
    try:
        listed = parse_opml(path.read_bytes())
    except ParseError as error:
        raise UsageError(f"{path}: {error}") from None
    if len(listed) > MAX_OPML_FEEDS:
        raise UsageError(f"{path} lists {len(listed):,} feeds: at most {MAX_OPML_FEEDS:,}")
    feeds: list[Subscription] = []
    refused: list[tuple[str, str]] = []
    for feed in listed:
        try:
            address = validate.feed_address(feed.url)
        except UsageError as error:
            refused.append((feed.url, str(error)))
            continue
        title = feed.title[:title_chars] if feed.title else None
        group = folder or (feed.folder[:title_chars] if feed.folder else None)
        feeds.append(Subscription(address, title, group))
    return Subscriptions(tuple(feeds), tuple(refused))
