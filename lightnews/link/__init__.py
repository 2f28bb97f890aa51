"""Link: find what papers an item talks about.

Identifiers in text, links and link cards (``identifiers``), titles in
headings and running text and "Surname: short title" references (``titles``),
threads (``threads``), authors to scholars (``attribution``) and bot accounts
(``bots``). Each yields :class:`~lightnews.model.Mention` objects with a method
and a confidence; the store decides what to keep.
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
from lightnews.link.titles import (
    Reference,
    TitleLookup,
    find_title_mentions,
    match_reference,
    title_weights,
)
from lightnews.model import Item, Mention

__all__ = ["find_arxiv_mentions", "link_item", "link_titles", "merge_mentions"]

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


def link_titles(items: list[Item], lookup: Library, *, bar: float) -> None:
    """Add what each item names beyond arXiv ids: DOIs, titles, slugs, references; code links."""
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
            for m in find_title_mentions(slug, lookup, bar=bar, whole=True, weight=weight)
        ]
        for mention in slugs:
            mention.method = "url-title"
        if by_doi or slugs:
            item.mentions = merge_mentions(item.mentions, by_doi, slugs, exclude=item.paper_id)
        if item.kind not in TITLED_KINDS:
            continue
        found: list[Mention] = []
        if item.title and item.kind in ("article", "note"):
            found += find_title_mentions(
                item.title, lookup, bar=bar, whole=True, published=item.published, weight=weight
            )
        for cited in item.note.references if item.note else ():
            if cited.surname and cited.title:
                reference = Reference(cited.surname, cited.title, cited.raw)
                match = match_reference(reference, lookup, bar=bar, weight=weight)
                if match is not None:
                    found.append(match)
        if item.text:
            found += find_title_mentions(
                item.text[:MAX_TEXT], lookup, bar=bar, published=item.published, weight=weight
            )
        if found:
            item.mentions = merge_mentions(item.mentions, found, exclude=item.paper_id)
