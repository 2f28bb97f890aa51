"""Link: find what papers an item talks about.

Identifiers in text, links and link cards (``identifiers``), titles in
headings and running text and "Surname: short title" references (``titles``,
read from text by ``references``), threads (``threads``), authors to scholars
(``attribution``) and bot accounts (``bots``). Each yields
:class:`~lightnews.model.Mention` objects with a method and a confidence; the
store decides what to keep.

There is one linker: :func:`link_titles` is what ingestion runs on every
parsed item, and ``lightnews resolve`` parses a page into the same items and
runs the same function, so both find the same links.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from lightnews.link.identifiers import (
    find_arxiv_mentions,
    find_code_links,
    find_dois,
    find_slugs,
    link_item,
)
from lightnews.link.references import parse_references
from lightnews.link.titles import Reference as TitleReference
from lightnews.link.titles import (
    TitleLookup,
    find_title_mentions,
    match_reference,
    title_weights,
)
from lightnews.model import Item, Mention, Reference

__all__ = [
    "Library",
    "find_arxiv_mentions",
    "item_references",
    "link_item",
    "link_titles",
    "merge_mentions",
]

#: Item kinds whose text may name papers by title.
TITLED_KINDS = frozenset({"article", "note", "post", "repost", "daily"})
MAX_TEXT = 20_000


def merge_mentions(*groups: list[Mention], exclude: str | None = None) -> list[Mention]:
    """One mention per paper, the surest kept."""
    best: dict[str, Mention] = {}
    for group in groups:
        for mention in group:
            if mention.arxiv_id == exclude:
                continue
            known = best.get(mention.arxiv_id)
            if known is None or mention.confidence > known.confidence:
                best[mention.arxiv_id] = mention
    return list(best.values())


class Library(TitleLookup, Protocol):
    """What linking asks of the stored library besides titles."""

    def papers_by_doi(self, dois: Sequence[str]) -> dict[str, str]: ...


def item_references(item: Item) -> tuple[Reference, ...]:
    """The "Surname: short title" references an item makes.

    A source that reads them with knowledge of its layout (a notes page, which
    cuts references back to its own headings) has put them in
    ``item.note.references``; for any other item they are read from its title
    and text here, the same way.
    """
    if item.note is not None:
        return tuple(r for r in item.note.references if r.surname and r.title)
    found: list[Reference] = []
    seen: set[tuple[str, str]] = set()
    for text in (item.title or "", (item.text or "")[:MAX_TEXT]):
        for raw in parse_references(text):
            key = (raw["surname"].casefold(), raw["title"].casefold())
            if key not in seen:
                seen.add(key)
                found.append(Reference(raw["surname"], raw["title"], raw.get("raw", "")))
    return tuple(found)


def link_titles(items: list[Item], lookup: Library, *, bar: float) -> None:
    """Add what each item names beyond arXiv ids: DOIs, titles, slugs, references; code links.

    The references an item makes are kept in ``item.references`` (so that
    those no stored paper matches can be looked up online).
    """
    weight = title_weights(lookup)
    for item in items:
        code = find_code_links(item.links)
        if code:
            item.code_links = code
        dois = find_dois([*item.links, item.text])
        by_doi = [Mention(a, "doi", 1.0, d) for d, a in lookup.papers_by_doi(dois).items()]
        slugs = [
            m
            for slug in find_slugs(item.links)
            # A paper page's URL holds its title, with the case lost: given back.
            for m in find_title_mentions(
                " ".join(w[:1].upper() + w[1:] for w in slug.split()),
                lookup,
                bar=bar,
                whole=True,
                weight=weight,
            )
        ]
        for mention in slugs:
            mention.method = "url-title"
        if by_doi or slugs:
            item.mentions = merge_mentions(item.mentions, by_doi, slugs, exclude=item.paper_id)
        if item.kind not in TITLED_KINDS:
            continue
        exclude = (item.paper_id,) if item.paper_id else ()
        found: list[Mention] = []
        if item.title and item.kind in ("article", "note"):
            found += find_title_mentions(
                item.title,
                lookup,
                bar=bar,
                whole=True,
                published=item.published,
                weight=weight,
                exclude=exclude,
            )
        item.references = item_references(item)
        for cited in item.references:
            reference = TitleReference(cited.surname, cited.title, cited.raw)
            match = match_reference(
                reference, lookup, bar=bar, published=item.published, weight=weight
            )
            if match is not None:
                found.append(match)
        if item.text:
            found += find_title_mentions(
                item.text[:MAX_TEXT],
                lookup,
                bar=bar,
                published=item.published,
                weight=weight,
                exclude=exclude,
            )
        if found:
            item.mentions = merge_mentions(item.mentions, found, exclude=item.paper_id)
