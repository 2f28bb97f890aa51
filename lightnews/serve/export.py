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

from bibtexparser.entrypoint import write_string
from bibtexparser.library import Library
from bibtexparser.model import Entry, Field
from bibtexparser.writer import BibtexFormat
from lxml import etree
from pylatexenc.latexencode import UnicodeToLatexEncoder

from lightnews import __version__
from lightnews.errors import LightnewsError
from lightnews.normalize.names import fold
from lightnews.sources import kind_traits
from lightnews.store import ReaderId, Store
from lightnews.store.views import PaperPage

__all__ = [
    "FeedEntry",
    "atom_feed",
    "bibtex",
    "bibtex_entry",
    "json_feed",
    "sources_opml",
    "tex_escape",
    "user_export",
]

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


#: Unicode to TeX for BibTeX values: letters with accents become ``{\\"u}``, TeX's special
#: characters (``& % # _ { } ~ ^ \\``) their escaped forms; a character TeX has no name
#: for stays as it is (BibTeX files are UTF-8 today).
_TEX = UnicodeToLatexEncoder(
    non_ascii_only=False,
    replacement_latex_protection="braces-all",
    unknown_char_policy="keep",
    unknown_char_warning=False,
)
#: Math as arXiv gives it (``$\\ell_1$``): already TeX, kept as written.
_MATH = re.compile(r"(\$\$.+?\$\$|\$[^$]+\$)")


def tex_escape(text: str) -> str:
    """``text`` as a BibTeX value: TeX-special characters escaped, math kept as written.

    >>> tex_escape("Müller & Søn: 50% of $O(n^2)$")
    'M{\\\\"u}ller {\\\\&} S{\\\\o}n: 50{\\\\%} of $O(n^2)$'
    """
    parts = _MATH.split(text or "")
    return "".join(part if i % 2 else _TEX.unicode_to_latex(part) for i, part in enumerate(parts))


def _bib_name(name: str) -> str:
    """One author for BibTeX's ``and``-list: a name BibTeX would split wrongly is braced whole.

    A comma means "Last, First" to BibTeX, and a word "and" separates authors:
    a collaboration's name ("The ATLAS Collaboration, and others") stays one name.
    """
    escaped = tex_escape(" ".join(name.split()))
    if "," in name or re.search(r"\band\b", name, re.I):
        return "{" + escaped + "}"
    return escaped


def _bib_key(paper: PaperPage, used: set[str]) -> str:
    authors = paper.authors
    year = (paper.published or "")[:4]
    first = fold(authors[0]).split()[-1] if authors and fold(authors[0]).split() else "anon"
    word = next((w for w in fold(paper.title or "").split() if len(w) > 3), "paper")
    key = re.sub(r"[^a-z0-9]", "", f"{first}{year}{word}".lower()) or "paper"
    while key in used:
        key += "x"
    used.add(key)
    return key


def bibtex_entry(paper: PaperPage, key: str) -> Entry:
    """The BibTeX entry of one paper, keeping arXiv's eprint fields whatever its type.

    ``@inproceedings`` with ``booktitle`` when it was accepted at a conference
    or workshop, ``@article`` with ``journal`` when a journal published it
    (:attr:`PaperPage.venue`), else ``@misc``. Authors keep their order; every
    value is TeX-escaped (:func:`tex_escape`); the title is braced so that
    styles keep its capitals; a withdrawn paper says so in ``note``.
    """
    venue = paper.venue
    kind, where = "misc", ""
    if venue is not None:
        kind, where = ("inproceedings", "booktitle") if venue.kind == "conference" else (
            "article", "journal")  # fmt: skip
    year = str(venue.year) if venue and venue.year else (paper.published or "")[:4]
    fields = [
        ("title", "{" + tex_escape(paper.title or "") + "}"),
        ("author", " and ".join(_bib_name(a) for a in paper.authors if a.strip())),
        (where, tex_escape(venue.name) if venue and where else ""),
        ("year", year),
        ("eprint", paper.arxiv_id),
        ("archivePrefix", "arXiv"),
        ("primaryClass", paper.primary_category or ""),
        ("url", f"https://arxiv.org/abs/{paper.arxiv_id}"),
        ("doi", (paper.doi or "").split(" ")[0]),
        ("note", "Withdrawn by its authors on arXiv" if paper.withdrawn else ""),
    ]
    return Entry(kind, key, [Field(name, value) for name, value in fields if name and value])


def bibtex(papers: Iterable[PaperPage]) -> str:
    """BibTeX of papers from the store (written by bibtexparser, one entry per paper)."""
    library = Library()
    used: set[str] = set()
    for paper in papers:
        library.add(bibtex_entry(paper, _bib_key(paper, used)))
    if not library.entries:
        return ""
    style = BibtexFormat()  # type: ignore[no-untyped-call]
    style.indent = "  "
    style.block_separator = "\n\n"
    return write_string(library, bibtex_format=style).strip() + "\n"


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


def user_export(store: Store, reader: ReaderId) -> dict[str, Any]:
    """Everything ``reader`` owns (follows with identities, mutes, stories, their settings),
    with the decisions, sources and settings of the library they share."""
    scholars = store.list_scholars()
    mine = store.follows(reader)
    return {
        "lightnews": __version__,
        "exported": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "follows": [
            {"name": s.name, "followed": s.id in mine,
             "identities": [i.to_json() for i in s.identities],
             "decisions": store.decisions(s.id)}
            for s in scholars
            if s.id in mine or store.decisions(s.id)
        ],
        "sources": [
            {"kind": r.kind, "url": r.address, "title": r.title, "folder": r.folder,
             "enabled": r.enabled}
            for r in store.list_sources()
        ],
        "settings": {name: value for name, value in {**store.saved_settings(),
                     **store.reader_settings(reader)}.items() if not _is_secret(name)},
        "mutes": store.mutes(reader).to_json(),
        "stories": {key: {"read": read, "saved": saved}
                    for key, (read, saved) in store.story_states(reader).items()},
    }  # fmt: skip
