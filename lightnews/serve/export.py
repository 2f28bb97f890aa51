"""Out to other tools: Atom and JSON Feed of any feed, BibTeX of papers, a JSON export.

Readers keep using their feed reader, their reference manager and their own
backups: the ranked feed, a scholar's records and any search come out as Atom
1.0 and JSON Feed 1.1 (each entry carries why it is there), a story or a list
of papers as BibTeX, and everything the user owns (follows, decisions,
sources, settings) as one JSON document.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from typing import Any

from lxml import etree

from lightnews import __version__
from lightnews.errors import LightnewsError
from lightnews.normalize.names import fold
from lightnews.sources import kind_traits
from lightnews.store import Store
from lightnews.store.views import PaperPage

__all__ = ["FeedEntry", "atom_feed", "bibtex", "json_feed", "sources_opml", "user_export"]

ATOM = "http://www.w3.org/2005/Atom"


class FeedEntry:
    """One entry of an outgoing feed; ``why`` are the reasons it is in the feed, in full."""

    def __init__(self, id: str, title: str, url: str | None, updated: str | None,
                 summary: str = "", authors: Sequence[str] = (),
                 why: Sequence[str] = ()) -> None:  # fmt: skip
        self.id = id
        self.title = title
        self.url = url
        self.updated = updated or datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        self.summary = summary
        self.authors = list(authors)
        self.why = list(why)

    @property
    def text(self) -> str:
        """The summary, then why the entry is there."""
        why = "Why: " + " · ".join(self.why) if self.why else ""
        return "\n\n".join(part for part in (self.summary, why) if part)


_NOT_XML = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")


def _xml(text: str) -> str:
    """``text`` without the characters XML 1.0 cannot carry (a control character in a query)."""
    return _NOT_XML.sub("", text)


def _followable(url: str | None) -> bool:
    """Only absolute http(s) links leave in a feed: a reader would follow anything else."""
    return bool(url) and (url or "").lower().startswith(("http://", "https://"))


def atom_feed(title: str, self_url: str, entries: Iterable[FeedEntry]) -> bytes:
    """An Atom 1.0 document."""
    items = list(entries)
    root = etree.Element(f"{{{ATOM}}}feed", nsmap={None: ATOM})  # type: ignore[dict-item]
    etree.SubElement(root, f"{{{ATOM}}}title").text = _xml(title)
    etree.SubElement(root, f"{{{ATOM}}}id").text = _xml(self_url)
    etree.SubElement(root, f"{{{ATOM}}}link", rel="self", href=_xml(self_url))
    etree.SubElement(root, f"{{{ATOM}}}updated").text = max(
        (e.updated for e in items), default=datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    )
    etree.SubElement(root, f"{{{ATOM}}}generator", version=__version__).text = "Lightnews"
    for entry in items:
        node = etree.SubElement(root, f"{{{ATOM}}}entry")
        etree.SubElement(node, f"{{{ATOM}}}id").text = _xml(entry.id)
        etree.SubElement(node, f"{{{ATOM}}}title").text = _xml(entry.title)
        etree.SubElement(node, f"{{{ATOM}}}updated").text = entry.updated
        if entry.url and _followable(entry.url):
            etree.SubElement(node, f"{{{ATOM}}}link", rel="alternate", href=_xml(entry.url))
        for name in entry.authors or ["Lightnews"]:
            etree.SubElement(etree.SubElement(node, f"{{{ATOM}}}author"),
                             f"{{{ATOM}}}name").text = _xml(name)  # fmt: skip
        if entry.text:
            etree.SubElement(node, f"{{{ATOM}}}summary").text = _xml(entry.text)
    return bytes(etree.tostring(root, xml_declaration=True, encoding="UTF-8", pretty_print=True))


def json_feed(title: str, self_url: str, entries: Iterable[FeedEntry]) -> dict[str, Any]:
    """A JSON Feed 1.1 document."""
    return {
        "version": "https://jsonfeed.org/version/1.1",
        "title": title,
        "feed_url": self_url,
        "items": [
            {"id": e.id, "url": e.url if _followable(e.url) else None, "title": e.title,
             "content_text": e.text, "summary": e.summary or None,
             "date_modified": e.updated, "authors": [{"name": a} for a in e.authors],
             **({"_lightnews": {"why": e.why}} if e.why else {})}
            for e in entries
        ],
    }  # fmt: skip


def _bib_escape(text: str) -> str:
    return re.sub(r"([&%#_{}])", r"\\\1", text or "")


def bibtex(papers: Iterable[PaperPage]) -> str:
    """BibTeX entries (``@misc`` with arXiv eprint fields) for papers from the store."""
    entries = []
    used: set[str] = set()
    for paper in papers:
        authors = paper.authors
        year = (paper.published or "")[:4]
        first = fold(authors[0]).split()[-1] if authors else "anon"
        word = next((w for w in fold(paper.title or "").split() if len(w) > 3), "paper")
        key = f"{first}{year}{word}"
        while key in used:
            key += "x"
        used.add(key)
        fields = {
            "title": "{" + _bib_escape(paper.title or "") + "}",
            "author": " and ".join(_bib_escape(a) for a in authors),
            "year": year,
            "eprint": paper.arxiv_id,
            "archivePrefix": "arXiv",
            "primaryClass": paper.primary_category or "",
            "url": f"https://arxiv.org/abs/{paper.arxiv_id}",
            "doi": (paper.doi or "").split(" ")[0],
        }
        body = ",\n".join(f"  {k} = {{{v}}}" for k, v in fields.items() if v)
        entries.append(f"@misc{{{key},\n{body}\n}}\n")
    return "\n".join(entries)


def sources_opml(store: Store) -> bytes:
    """The feed sources as OPML 2.0, folders included (for any feed reader)."""
    from lightnews.sources.opml import OpmlFeed, write_opml

    return write_opml(
        OpmlFeed(r.address, r.title, r.folder)
        for r in store.list_sources()
        if kind_traits(r.kind).in_opml
    )


def _is_secret(name: str) -> bool:
    from lightnews.settings import Settings

    try:
        return Settings.lookup(name).secret
    except LightnewsError:
        return False


def user_export(store: Store) -> dict[str, Any]:
    """Everything the user owns: follows with identities, decisions, sources, settings."""
    scholars = store.list_scholars()
    return {
        "lightnews": __version__,
        "exported": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "follows": [
            {"name": s.name, "followed": s.followed,
             "identities": [i.to_json() for i in s.identities],
             "decisions": store.decisions(s.id)}
            for s in scholars
        ],
        "sources": [
            {"kind": r.kind, "url": r.address, "title": r.title, "folder": r.folder,
             "enabled": r.enabled}
            for r in store.list_sources()
        ],
        "settings": {name: value for name, value in store.saved_settings().items()
                     if not _is_secret(name)},
        "mutes": store.mutes().to_json(),
        "stories": {key: {"read": read, "saved": saved}
                    for key, (read, saved) in store.story_states().items()},
    }  # fmt: skip
