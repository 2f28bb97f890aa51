"""Link: find what papers an item talks about.

Identifiers in text, links and link cards (``identifiers``), titles in
headings and running text and "Surname: short title" references (``titles``),
threads (``threads``), authors to scholars (``attribution``) and bot accounts
(``bots``). Each yields :class:`~lightnews.model.Mention` objects with a method
and a confidence; the store decides what to keep.
"""

from __future__ import annotations

from lightnews.link.identifiers import find_arxiv_mentions, link_item
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


def link_titles(items: list[Item], lookup: TitleLookup, *, bar: float) -> None:
    """Add the papers each item names by title (or by "Surname: short title") to its mentions."""
    weight = title_weights(lookup)
    for item in items:
        if item.kind not in TITLED_KINDS:
            continue
        found: list[Mention] = []
        if item.title and item.kind in ("article", "note"):
            found += find_title_mentions(
                item.title, lookup, bar=bar, whole=True, published=item.published, weight=weight
            )
        for raw in item.extra.get("references") or []:
            if isinstance(raw, dict) and raw.get("surname") and raw.get("title"):
                reference = Reference(
                    str(raw["surname"]), str(raw["title"]), str(raw.get("raw") or "")
                )
                match = match_reference(reference, lookup, bar=bar, weight=weight)
                if match is not None:
                    found.append(match)
        if item.text:
            found += find_title_mentions(
                item.text[:MAX_TEXT], lookup, bar=bar, published=item.published, weight=weight
            )
        if found:
            item.mentions = merge_mentions(item.mentions, found, exclude=item.paper_id)
