"""OPML import and export of feed sources, folders included.

Feed readers exchange subscriptions as OPML 2.0: ``<outline type="rss"
xmlUrl=...>`` elements, nested in outlines that act as folders. Import keeps
the innermost folder name; export writes one folder outline per folder.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from email.utils import format_datetime

from lxml import etree

from lightnews.errors import ParseError
from lightnews.sources.xmlsafe import parse_xml

__all__ = ["OpmlFeed", "parse_opml", "write_opml"]


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
