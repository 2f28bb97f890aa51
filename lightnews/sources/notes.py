"""Notes pages: a person's conference notes, split into one note per heading.

Researchers publish what they saw at a conference as one page of notes
("ICLR 2025 Paper Notes, 16 papers reviewed"). Such a page says more about
what a scholar found worth reading than any feed, but it is one document: a
story needs each note on its own, with the papers it names. This module cuts
the page at its headings and reads the "Surname: short title" references
notes are written with, so the linker can tie each note to its papers.

Format facts the splitting relies on:

* HTML or Markdown, told apart by content. Markdown is rendered with
  markdown-it (CommonMark) first, so both take the same path; ``#`` lines in
  code blocks are not headings. Markdown front matter (``---`` ... ``---``)
  gives ``title``, ``date`` and ``author``.
* Headings ``h1``-``h4`` (``#`` to ``####``) start notes; ``h5``/``h6`` are
  part of the note they sit in. A page's single ``h1``, when it comes first,
  is the page title; the text before the first note (``16 papers
  reviewed.``) describes the page. Scripts, styles, navigation, footers and
  asides are not notes.
* A note is its heading and everything up to the next heading, wherever the
  page nests it (``<article><h2/><p/></article>``, ``<section>``, plain
  siblings). Its HTML is sanitized (allow-list) before it is kept.
* A heading that names no paper ("ICLR2025 Friday Posters") is a *section*:
  the notes nested below it, and the papers its own text lists, belong to it.
  Its name drops the conference prefix ("Friday Posters").
* References are "Surname: short title". In running text they are marked by
  a conference prefix (``ICLR2025 Snell: Optimality of ... ICLR2025 Mathur:
  ...``): a title ends where the next prefix starts, at a sentence end, or
  where the writer's description visibly begins. At the start of a heading,
  line or list item the prefix is optional.
"""

from __future__ import annotations

import html as htmlmod
import re
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urldefrag, urljoin, urlsplit

import lxml.html
from lxml import etree
from markdown_it import MarkdownIt

from lightnews.errors import ParseError
from lightnews.model import Batch, Item, NoteDetails, Reference, SourceState
from lightnews.normalize import clean_text, html_to_text, iso_utc, sanitize_html
from lightnews.normalize.identifiers import link_item
from lightnews.normalize.references import PREFIX as _PREFIX
from lightnews.normalize.references import parse_references
from lightnews.normalize.references import same_paper as _same_paper
from lightnews.normalize.references import strip_prefix as _strip_prefix
from lightnews.normalize.text import strip_controls
from lightnews.normalize.urls import safe_url, safe_urls
from lightnews.sources import Source, SourceTraits

__all__ = ["NotesSource", "parse_references", "split_notes"]

_HEADINGS = ("h1", "h2", "h3", "h4")


def _wordset(words: str) -> frozenset[str]:
    return frozenset(words.split())


#: Page furniture that holds no notes (its headings are not notes either).
_FURNITURE = _wordset(
    "script style noscript template iframe object embed form nav footer aside svg math "
    "button select textarea dialog"
)

# -- reading the page ----------------------------------------------------------------------


@dataclass
class _Segment:
    heading: Any  # the heading element (lxml), None for the text before the first one
    level: int
    parts: list[str] = field(default_factory=list)


@dataclass
class _Page:
    title: str | None = None
    author: str | None = None
    date: str | None = None
    sources: list[str] = field(default_factory=list)  # Markdown source of each heading's note
    #: Why the HTML parser stopped before the end of the page (too deep, too big), if it did.
    stopped: str | None = None


def _decode(body: bytes | str) -> str:
    if isinstance(body, str):
        text = body
    else:
        if b"\x00" in body[:4096]:
            raise ParseError("not a readable notes page: the body is binary data")
        try:
            text = body.decode("utf-8-sig")
        except UnicodeDecodeError:
            declared = re.search(rb"charset=[\"']?([\w.:-]+)", body[:4096], re.I)
            try:
                text = body.decode(declared[1].decode() if declared else "cp1252", "replace")
            except LookupError:
                text = body.decode("cp1252", "replace")
    sample = text[:4096]
    odd = sum(1 for c in sample if c == "\ufffd" or (ord(c) < 32 and c not in "\t\n\r\f"))
    if sample and odd > max(8, len(sample) // 20):
        raise ParseError("not a readable notes page: the body is not text")
    # A stray control character is dropped: the HTML parser refuses a page that holds one.
    return strip_controls(text)


_HTML_HINT = re.compile(
    r"<(?:!doctype\s+html|html|head|body|main|article|section|div|p|h[1-6]|ul|ol|table)\b", re.I
)


def _is_html(text: str) -> bool:
    head = text.lstrip()
    if head.startswith("<"):
        return True
    first = head.split("\n", 1)[0]
    if re.match(r"#{1,6}\s|---\s*$", first):
        return False
    return bool(_HTML_HINT.search(text[:20000]))


def _front_matter(text: str) -> tuple[dict[str, str], str]:
    """Markdown front matter as simple ``key: value`` pairs, and the text after it."""
    lines = text.lstrip("\ufeff").split("\n")
    if not lines or lines[0].strip() != "---":
        return {}, text
    for end in range(1, min(len(lines), 200)):
        if lines[end].strip() in ("---", "..."):
            fields: dict[str, str] = {}
            for line in lines[1:end]:
                key, colon, value = line.partition(":")
                if colon and key.strip() and not key.startswith((" ", "\t")):
                    fields[key.strip().lower()] = value.strip().strip("\"'")
            return fields, "\n".join(lines[end + 1 :])
    return {}, text


def _markdown(text: str) -> tuple[str, _Page]:
    fields, rest = _front_matter(text)
    md = MarkdownIt("commonmark")
    tokens = md.parse(rest)
    lines = rest.split("\n")
    starts = [
        t.map[0]
        for t in tokens
        if t.type == "heading_open" and t.tag in _HEADINGS and t.map is not None
    ]
    ends = [*starts[1:], len(lines)] if starts else []
    sources = ["\n".join(lines[a:b]).strip() for a, b in zip(starts, ends, strict=True)]
    page = _Page(
        title=clean_text(fields.get("title")) or None,
        author=clean_text(fields.get("author")) or None,
        date=iso_utc(fields.get("date")),
        sources=sources,
    )
    return md.renderer.render(tokens, md.options, {}), page


def _meta(document: Any) -> _Page:
    page = _Page()
    title = document.find(".//title")
    if title is not None:
        page.title = clean_text(title.text_content()) or None
    for meta in document.iter("meta"):
        name = (meta.get("name") or meta.get("property") or meta.get("itemprop") or "").lower()
        content = meta.get("content") or ""
        if name in ("author", "article:author", "dc.creator") and not page.author:
            page.author = clean_text(content) or None
        elif name in ("article:published_time", "date", "dc.date", "datepublished"):
            page.date = page.date or iso_utc(content.strip())
    return page


def _segments(root: Any) -> tuple[_Segment, list[_Segment]]:
    """The text before the first heading, and each heading with what follows it."""
    holders: set[Any] = set()
    for heading in root.iter(*_HEADINGS):
        ancestors = list(heading.iterancestors())
        if any(a.tag in _FURNITURE for a in ancestors if isinstance(a.tag, str)):
            continue
        holders.update(ancestors)
    preamble = _Segment(None, 0)
    segments: list[_Segment] = []
    current = preamble

    def add_text(text: str | None) -> None:
        if text and text.strip():
            current.parts.append(htmlmod.escape(text))

    def walk(element: Any) -> None:
        nonlocal current
        for child in element:
            tag = child.tag.lower() if isinstance(child.tag, str) else None
            if tag is None or tag in _FURNITURE:
                pass
            elif tag in _HEADINGS:
                current = _Segment(child, int(tag[1]))
                segments.append(current)
            elif child in holders:
                add_text(child.text)
                walk(child)
            else:
                current.parts.append(
                    etree.tostring(child, encoding="unicode", method="html", with_tail=False)
                )
            add_text(child.tail)

    add_text(root.text)
    try:
        walk(root)
    except RecursionError:
        raise ParseError("not a readable notes page: its headings are nested too deeply") from None
    return preamble, segments


def _heading_link(heading: Any, page_url: str) -> tuple[str | None, str | None]:
    """The heading's own link (resolved) and anchor, when it has them."""
    anchor = heading.get("id")
    link = None
    for a in heading.iter("a"):
        anchor = anchor or a.get("id") or a.get("name")
        href = (a.get("href") or "").strip()
        if href and link is None:
            resolved = urljoin(page_url, href) if page_url else href
            scheme = urlsplit(resolved).scheme.lower()
            page_scheme = urlsplit(page_url).scheme.lower()
            if scheme in ("http", "https") or (scheme and scheme == page_scheme):
                link = resolved
    return link, (anchor.strip() or None) if anchor else None


def _slug(text: str) -> str:
    return re.sub(r"[^\w]+", "-", text.casefold()).strip("-_")[:80]


_TIME = re.compile(r"<time\b[^>]*\bdatetime=\"([^\"]+)\"", re.I)
_ISO_DAY = re.compile(r"(?<![\d-])(\d{4}-\d{2}-\d{2})(?![\d-])")
_HREF = re.compile(r"<a\b[^>]*\bhref=\"([^\"]+)\"", re.I)
_REVIEWED = re.compile(
    r"\b(\d{1,4})\s+(?:papers?|works?|talks?|posters?)\s+"
    r"(?:reviewed|covered|summari[sz]ed|read|discussed|noted)\b",
    re.I,
)


def _note_date(heading: str, html: str, text: str) -> str | None:
    for value in _TIME.findall(html):
        moment = iso_utc(htmlmod.unescape(value))
        if moment:
            return moment
    first_line = text.split("\n", 1)[0]
    for place in (heading, first_line):
        day = _ISO_DAY.search(place)
        if day and iso_utc(day[1]):
            return iso_utc(day[1])
    return None


@dataclass
class _Note:
    heading: str
    level: int
    link: str | None
    anchor: str | None
    html: str
    text: str
    payload: str
    heading_refs: list[dict[str, str]]
    text_refs: list[dict[str, str]]
    is_section: bool = False
    section: str | None = None


def _absolute(page_url: str, link: str) -> str | None:
    """``link`` resolved against the page (None drops a link that cannot be resolved)."""
    try:
        return strip_controls(urljoin(page_url, link.strip()))
    except ValueError:
        return None


def _read(
    text: str, page_url: str, *, markdown: bool | None = None
) -> tuple[_Page, str, list[_Note]]:
    """The page's facts, its intro text and its notes (raw, before they become items)."""
    if markdown is None:
        markdown = not _is_html(text)
    page = _Page()
    if markdown:
        text, page = _markdown(text)
    if not text.strip():
        raise ParseError("no notes found: the page is empty")
    try:
        # No libxml2 limit on text size and depth 2048 rather than 256: the body is
        # already capped (http_max_bytes), and a cut page must not lose its notes.
        parser = lxml.html.HTMLParser(huge_tree=True)
        document = lxml.html.document_fromstring(text, parser=parser)
    except (etree.ParserError, ValueError) as error:
        raise ParseError(f"not a readable notes page: {error}") from None
    fatal = [e.message for e in parser.error_log if e.level_name == "FATAL"]
    if fatal:
        page.stopped = clean_text(fatal[0]).split(",")[0]
    if not isinstance(document, lxml.html.HtmlElement):
        raise ParseError("not a readable notes page: no HTML document in it")
    found = _meta(document)
    page.title = page.title or found.title
    page.author = page.author or found.author
    page.date = page.date or found.date
    if page_url and urlsplit(page_url).scheme:
        document.rewrite_links(lambda link: _absolute(page_url, link))
    body = document.find(".//body")
    root = body if body is not None else document
    main = next((m for m in root.iter("main") if next(m.iter(*_HEADINGS), None) is not None), None)
    preamble, segments = _segments(main if main is not None else root)
    if not segments and not markdown and re.search(r"^#{1,4}\s+\S", text, re.M):
        return _read(text, page_url, markdown=True)  # Markdown with some HTML in it
    h1s = [s for s in segments if s.level == 1]
    intro_parts = list(preamble.parts)
    if segments and len(h1s) == 1 and segments[0].level == 1 and len(segments) > 1:
        title_segment = segments.pop(0)
        page.title = clean_text(title_segment.heading.text_content()) or page.title
        intro_parts += title_segment.parts
        if markdown and page.sources:
            page.sources.pop(0)
    intro = html_to_text(sanitize_html("".join(intro_parts)))
    notes: list[_Note] = []
    sources = page.sources if markdown and len(page.sources) == len(segments) else []
    for number, segment in enumerate(segments):
        heading = clean_text(segment.heading.text_content())
        raw_html = "".join(segment.parts)
        clean = sanitize_html(raw_html)
        note_text = html_to_text(clean)
        if not heading and not note_text:
            continue
        link, anchor = _heading_link(segment.heading, page_url)
        payload = (
            sources[number]
            if sources
            else (
                etree.tostring(segment.heading, encoding="unicode", method="html", with_tail=False)
                + raw_html
            )
        )
        notes.append(
            _Note(
                heading=heading,
                level=segment.level,
                link=link,
                anchor=anchor,
                html=clean,
                text=note_text,
                payload=payload,
                heading_refs=parse_references(heading),
                text_refs=parse_references(note_text),
            )
        )
    return page, intro, notes


def _assign_sections(notes: list[_Note]) -> None:
    """Mark section headings, and give every note the section it belongs to."""
    for number, note in enumerate(notes):
        deeper = number + 1 < len(notes) and notes[number + 1].level > note.level
        prefixed = _PREFIX.match(note.heading) is not None
        note.is_section = not note.heading_refs and (prefixed or deeper or bool(note.text_refs))
    stack: list[tuple[int, str]] = []
    for note in notes:
        while stack and stack[-1][0] >= note.level:
            stack.pop()
        if note.is_section:
            note.section = _strip_prefix(note.heading)
            stack.append((note.level, note.section))
        else:
            note.section = stack[-1][1] if stack else None
    # A note the page does not nest belongs to the section whose text lists its paper.
    sections = [n for n in notes if n.is_section]
    for note in notes:
        if note.section is not None or not note.heading_refs:
            continue
        note.section = next(
            (
                s.section
                for s in sections
                if any(_same_paper(r, h) for r in s.text_refs for h in note.heading_refs)
            ),
            None,
        )


def _refine(notes: list[_Note]) -> None:
    """A reference that runs on past a title the page's own headings give is cut back to it."""
    headed = [r for n in notes for r in n.heading_refs]
    for note in notes:
        for reference in note.text_refs:
            for known in headed:
                title, short = reference["title"], known["title"]
                if (
                    reference["surname"].casefold() == known["surname"].casefold()
                    and len(title) > len(short)
                    and title.casefold().startswith(short.casefold())
                    and not title[len(short)].isalnum()
                ):
                    reference["title"] = short
                    at = reference["raw"].casefold().find(short.casefold())
                    if at >= 0:
                        reference["raw"] = reference["raw"][: at + len(short)]
                    break


def _unique(references: list[dict[str, str]]) -> list[dict[str, str]]:
    seen: set[tuple[str, str]] = set()
    kept = []
    for reference in references:
        key = (reference["surname"].casefold(), reference["title"].casefold())
        if key not in seen:
            seen.add(key)
            kept.append(dict(reference))
    return kept


def split_notes(
    html_or_markdown: str | bytes, page_url: str, warnings: list[str] | None = None
) -> list[Item]:
    """One ``note`` item per heading of a notes page (HTML or Markdown).

    Raises ParseError for a body that is not text and for a page without
    notes ("no notes found"). A page the HTML parser could not read to its
    end (nested too deeply, say) keeps the notes before that point, with a
    warning in ``warnings``.
    """
    text = _decode(html_or_markdown)
    page, intro, notes = _read(text, page_url)
    if page.stopped and not notes:
        raise ParseError(
            f"no notes found: the page could not be read past a point ({page.stopped})"
        )
    if page.stopped and warnings is not None:
        warnings.append(f"notes page read only in part ({page.stopped}): later notes are missing")
    if not notes:
        if not text.strip():
            raise ParseError("no notes found: the page is empty")
        raise ParseError("no notes found: the page has no headings (h1-h4, or # to ####)")
    _assign_sections(notes)
    _refine(notes)
    reviewed = _REVIEWED.search(f"{page.title or ''}\n{intro}")
    if reviewed is None:
        reviewed = _REVIEWED.search("\n".join(n.text for n in notes))
    base = urldefrag(page_url)[0] if page_url else ""
    page_date = page.date or _note_date("", sanitize_html(intro), intro)
    items: list[Item] = []
    used: set[str] = set()
    for position, note in enumerate(notes):
        slug = note.anchor or _slug(note.heading) or str(position)
        unique, count = slug, 1
        while unique in used:
            count += 1
            unique = f"{slug}-{count}"
        used.add(unique)
        url = safe_url(note.link) or safe_url(f"{base}#{note.anchor or unique}")
        hrefs = [htmlmod.unescape(h) for h in _HREF.findall(note.html)]
        details = NoteDetails(
            section=note.section,
            references=tuple(
                Reference(r["surname"], r["title"], r.get("raw", ""))
                for r in _unique(note.heading_refs + note.text_refs)
            ),
            page_title=page.title,
            level=note.level,
            position=position,
            is_section=note.is_section,
            papers_reviewed=int(reviewed[1]) if reviewed else None,
        )
        item = Item(
            key=f"{base}#{unique}",
            kind="note",
            title=note.heading,
            url=url,
            author=page.author,
            text=note.text,
            html=note.html,
            published=_note_date(note.heading, note.html, note.text) or page_date,
            links=safe_urls([url, *hrefs]),
            payload=note.payload,
            note=details,
        )
        item.mentions = link_item(item)
        items.append(item)
    return items


class NotesSource(Source):
    """A page of someone's paper notes (HTML or Markdown), one note per heading.

    Address: the page's URL. Fetched with conditional GET; every refresh
    re-reads the page and the store keeps notes that did not change as they were.
    """

    kind = "notes"
    summary = "a page of paper notes, HTML or Markdown (its URL); one note per heading"
    traits = SourceTraits(note_pages=True, filter_label="notes", filter_order=4)

    def parse(self, body: bytes, state: SourceState, *, url: str | None = None) -> Batch:
        warnings: list[str] = []
        items = split_notes(body, url or self.address, warnings)
        title = items[0].note.page_title if items and items[0].note else None
        return Batch(
            items=items, state=state, title=title, warnings=warnings, well_formed=not warnings
        )
