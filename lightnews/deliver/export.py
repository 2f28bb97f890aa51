"""Out to other tools: Atom and JSON Feed of any feed, BibTeX of papers, a JSON export.

Readers keep using their feed reader, their reference manager and their own
backups: the ranked feed, a scholar's records and any search come out as Atom
1.0 and JSON Feed 1.1 (each entry carries why it is there), a story or a list
of papers as BibTeX, and everything the user owns (follows, decisions,
sources, settings) as one JSON document, which :func:`read_export` and
:func:`user_import` read back in (a restore, a move to another instance).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Any

from bibtexparser.entrypoint import write_string
from bibtexparser.library import Library
from bibtexparser.model import Entry, Field
from bibtexparser.writer import BibtexFormat
from lxml import etree
from pylatexenc.latexencode import UnicodeToLatexEncoder

from lightnews import __version__
from lightnews.errors import LightnewsError, UsageError
from lightnews.normalize.names import fold
from lightnews.sources import kind_traits
from lightnews.store import ReaderId, Store
from lightnews.store.views import PaperPage

__all__ = [
    "FeedEntry",
    "ImportReport",
    "atom_feed",
    "bibtex",
    "bibtex_entry",
    "json_feed",
    "read_export",
    "sources_opml",
    "tex_escape",
    "user_export",
    "user_import",
]

ATOM = "http://www.w3.org/2005/Atom"


class FeedEntry:
    """One entry of an outgoing feed; ``why`` are the reasons it is in the feed, in full."""

    def __init__(
        self,
        id: str,
        title: str,
        url: str | None,
        updated: str | None,
        summary: str = "",
        authors: Sequence[str] = (),
        why: Sequence[str] = (),
    ) -> None:
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
            etree.SubElement(
                etree.SubElement(node, f"{{{ATOM}}}author"), f"{{{ATOM}}}name"
            ).text = _xml(name)
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
            {
                "id": e.id,
                "url": e.url if _followable(e.url) else None,
                "title": e.title,
                "content_text": e.text,
                "summary": e.summary or None,
                "date_modified": e.updated,
                "authors": [{"name": a} for a in e.authors],
                **({"_lightnews": {"why": e.why}} if e.why else {}),
            }
            for e in entries
        ],
    }


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
        kind, where = (
            ("inproceedings", "booktitle") if venue.kind == "conference" else ("article", "journal")
        )
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
    mutes = store.mutes(reader)
    return {
        "lightnews": __version__,
        "exported": datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "follows": [
            {
                "name": s.name,
                "followed": s.id in mine,
                "muted": str(s.id) in mutes.scholar,
                "identities": [i.to_json() for i in s.identities],
                "decisions": store.decisions(s.id),
            }
            for s in scholars
            if s.id in mine or str(s.id) in mutes.scholar or store.decisions(s.id)
        ],
        "sources": [
            {
                "kind": r.kind,
                "url": r.address,
                "title": r.title,
                "folder": r.folder,
                "enabled": r.enabled,
                "muted": str(r.id) in mutes.source,
            }
            for r in store.list_sources()
        ],
        "settings": {
            name: value
            for name, value in {**store.saved_settings(), **store.reader_settings(reader)}.items()
            if not _is_secret(name)
        },
        "mutes": mutes.to_json(),  # scholars and sources by this library's ids: see "muted"
        "stories": {
            key: {"read": read, "saved": saved}
            for key, (read, saved) in store.story_states(reader).items()
        },
    }


#: What an export holds, each part with its JSON type ("lightnews" is the version that wrote it).
_EXPORT_PARTS: dict[str, type] = {
    "lightnews": str,
    "follows": list,
    "sources": list,
    "settings": dict,
    "mutes": dict,
    "stories": dict,
}
_LONGEST = 2000  # characters of a name, address or identity taken from an export


def read_export(data: bytes) -> dict[str, Any]:
    """The document ``lightnews export`` wrote, checked in its outline (a UsageError says
    why it is not one); its entries are checked one by one by :func:`user_import`."""
    import orjson

    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as error:
        raise UsageError(f"not a Lightnews export: not JSON ({error})") from None
    if not isinstance(document, dict):
        raise UsageError("not a Lightnews export: not a JSON object")
    wrong = [
        name for name, kind in _EXPORT_PARTS.items() if not isinstance(document.get(name), kind)
    ]
    if wrong:
        raise UsageError(
            f"not a Lightnews export (what `lightnews export` writes): "
            f"{', '.join(wrong)} missing or of the wrong type"
        )
    return document


@dataclass(slots=True)
class ImportReport:
    """What an import changed (each count: things that were not so before), the entries it
    could not take (``left_out``, each with why) and what an export cannot carry over
    (``notes``)."""

    follows: int = 0
    decisions: int = 0
    sources: int = 0
    settings: int = 0
    mutes: int = 0
    stories: int = 0
    left_out: list[str] = field(default_factory=list)
    remarks: list[str] = field(default_factory=list)

    @property
    def changed(self) -> int:
        return (
            self.follows + self.decisions + self.sources + self.settings + self.mutes + self.stories
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "follows": self.follows,
            "decisions": self.decisions,
            "sources": self.sources,
            "settings": self.settings,
            "mutes": self.mutes,
            "stories": self.stories,
            "left_out": self.left_out,
            "remarks": self.remarks,
        }


def _text(value: object) -> str | None:
    """A short one-line text from an export, or None."""
    if not isinstance(value, str) or not value.strip() or len(value) > _LONGEST:
        return None
    if any(ord(c) < 32 or ord(c) == 127 for c in value):
        return None
    return value.strip()


def _scholar_for(store: Store, entry: dict[str, Any], now: str) -> int:
    """The scholar an export's entry names: found by an identity, else by name, else made."""
    from lightnews.model import IDENTITY_KINDS

    pairs: list[tuple[str, str]] = []
    for identity in entry.get("identities") or []:
        kind = identity.get("kind") if isinstance(identity, dict) else None
        value = _text(identity.get("value")) if isinstance(identity, dict) else None
        if kind not in IDENTITY_KINDS or value is None:
            raise UsageError(
                f"an identity of {str(entry.get('name'))[:60]!r} is not "
                f"KIND and VALUE: {str(identity)[:80]}"
            )
        pairs.append((str(kind), value))
    name = _text(entry.get("name"))
    if name is None:
        raise UsageError(f"a scholar without a name: {str(entry)[:80]}")
    owners = (store.scholar_by_identity(kind, value) for kind, value in pairs)
    found = next((owner for owner in owners if owner is not None), None)
    if found is None and not pairs:
        found = next((s.id for s in store.list_scholars() if s.name == name), None)
    scholar_id = found if found is not None else store.create_scholar(name, now)
    for kind, value in pairs:
        store.add_identity(scholar_id, kind, value)  # one known elsewhere stays where it is
    return scholar_id


def user_import(
    store: Store, reader: ReaderId, document: dict[str, Any], now: str, *, actor: str
) -> ImportReport:
    """Take what :func:`user_export` wrote (checked by :func:`read_export`) into ``reader``'s
    state and the library: follows with their identities, mutes, read and saved stories, the
    reader's settings, and the shared decisions, sources and settings (audited as ``actor``).

    Running it twice changes nothing more. Entries that cannot be taken are left out and
    said in the report; a story of an item without a paper (``item:ID``) names an entry of
    the library it came from and is left out.
    """
    from lightnews.normalize import validate
    from lightnews.normalize.arxiv_ids import parse_arxiv_id
    from lightnews.settings import Settings
    from lightnews.sources import registry
    from lightnews.store.readers import READER_SETTINGS

    report = ImportReport()
    left = report.left_out.append
    followed = store.follows(reader)
    mutes = store.mutes(reader)
    for entry in document["follows"]:
        if not isinstance(entry, dict):
            left(f"a follow that is not an object: {str(entry)[:80]}")
            continue
        try:
            scholar_id = _scholar_for(store, entry, now)
        except UsageError as error:
            left(str(error))
            continue
        if entry.get("followed") is True and scholar_id not in followed:
            store.set_followed(reader, scholar_id, True, now)
            report.follows += 1
        if entry.get("muted") is True and str(scholar_id) not in mutes.scholar:
            store.set_mute(reader, "scholar", str(scholar_id), now)
            report.mutes += 1
        decisions = entry.get("decisions")
        if not isinstance(decisions, dict):
            decisions = {}
        known = store.decisions(scholar_id)
        for arxiv_id, decision in decisions.items():
            parsed = parse_arxiv_id(str(arxiv_id))
            if parsed is None or decision not in ("confirm", "reject"):
                left(
                    f"a decision on {str(arxiv_id)[:40]!r}: not an arXiv id and "
                    f"confirm or reject ({str(decision)[:20]!r})"
                )
                continue
            if known.get(parsed.base) != decision:
                store.set_decision(scholar_id, parsed.base, str(decision), now, by=actor)
                store.audit(
                    actor, f"attribution.{decision}", f"#{scholar_id} {parsed.base} (import)", now
                )
                report.decisions += 1
    kinds = registry()
    for entry in document["sources"]:
        kind = entry.get("kind") if isinstance(entry, dict) else None
        address = entry.get("url") if isinstance(entry, dict) else None
        if kind not in kinds or not isinstance(address, str) or len(address) > _LONGEST:
            left(f"a source of no installed kind or with no address: {str(entry)[:80]}")
            continue
        assert isinstance(entry, dict)
        try:
            traits = kind_traits(str(kind))
            if traits.in_opml or traits.note_pages:  # an address on the web
                address = validate.web_address(address, f"a {kind} source")
        except UsageError as error:
            left(str(error))
            continue
        title, folder = _text(entry.get("title")), _text(entry.get("folder"))
        row, created = store.add_source(str(kind), address, now=now, title=title, folder=folder)
        if created:
            store.audit(actor, "sources.add", f"#{row.id} {row.kind} {row.address} (import)", now)
            if entry.get("enabled") is False:
                store.set_source_enabled(row.id, False)
            report.sources += 1
        if entry.get("muted") is True and str(row.id) not in mutes.source:
            store.set_mute(reader, "source", str(row.id), now)
            report.mutes += 1
    shared, own = store.saved_settings(), store.reader_settings(reader)
    for name, value in document["settings"].items():
        try:
            setting = Settings.lookup(str(name))
            setting.convert(str(value), f"setting {setting.name}")
        except LightnewsError as error:
            left(str(error))
            continue
        if setting.secret:
            continue  # never exported; one written by hand is not taken either
        if setting.name in READER_SETTINGS:
            if own.get(setting.name) != str(value):
                store.save_reader_setting(reader, setting.name, str(value))
                report.settings += 1
        elif shared.get(setting.name) != str(value):
            store.save_setting(setting.name, str(value))
            store.audit(actor, "settings.set", f"{setting.name} = {value} (import)", now)
            report.settings += 1
    words = document["mutes"].get("keyword")
    for word in words if isinstance(words, list) else []:
        keyword = _text(word)
        if keyword is None:
            left(f"a muted keyword that is not a word: {str(word)[:40]!r}")
        elif keyword.lower() not in mutes.keyword:
            store.set_mute(reader, "keyword", keyword.lower(), now)
            report.mutes += 1
    states = store.story_states(reader)
    items = 0
    for key, state in document["stories"].items():
        if str(key).startswith("item:"):
            items += 1
            continue
        try:
            story = validate.story_key(str(key))
        except UsageError as error:
            left(str(error))
            continue
        read_at = state.get("read") if isinstance(state, dict) else None
        saved_at = state.get("saved") if isinstance(state, dict) else None
        if not all(v is None or _text(v) for v in (read_at, saved_at)):
            left(f"story {story}: read and saved are times or null")
            continue
        before = states.get(story, (None, None))
        if read_at and before[0] != read_at:
            store.mark_story(reader, story, str(read_at), read=True)
        if saved_at and before[1] != saved_at:
            store.mark_story(reader, story, str(saved_at), saved=True)
        if (read_at and before[0] != read_at) or (saved_at and before[1] != saved_at):
            report.stories += 1
    if items:
        report.remarks.append(
            f"{items} stories of entries without a paper (item:ID) not taken: "
            "their ids are the exporting library's"
        )
    by_id = sum(
        len(v)
        for k, v in document["mutes"].items()
        if k in ("scholar", "source") and isinstance(v, list)
    )
    if by_id and not any(
        isinstance(e, dict) and "muted" in e for e in [*document["follows"], *document["sources"]]
    ):
        report.remarks.append(
            f"{by_id} mutes of scholars or sources not taken: this (older) "
            "export names them by the exporting library's ids"
        )
    return report
