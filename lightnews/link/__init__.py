"""Link: find what papers an item talks about.

Identifiers in text, links and link cards
(:mod:`lightnews.normalize.identifiers`, which the sources apply as they
parse), titles in headings and running text and "Surname: short title"
references (``titles``, read from text by
:mod:`lightnews.normalize.references`), a scholar's post describing one of their
own recent papers (``announcements``), threads (``threads``), authors to
scholars (``attribution``) and bot accounts (``bots``). Each yields
:class:`~lightnews.model.Mention` objects with a method and a confidence; the
store decides what to keep.

There is one linker: :func:`link_titles` is what ingestion runs on every
parsed item, and ``lightnews resolve`` parses a page into the same items and
runs the same function, so both find the same links.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from datetime import datetime, timedelta
from typing import Protocol, runtime_checkable

from lightnews.link.announcements import (
    ANNOUNCEMENT_ENCODER,
    WINDOW_DAYS,
    OwnPaper,
    link_announcement,
    post_words,
)
from lightnews.link.attribution import given_name_score, parse_name
from lightnews.link.meaning import TitleMeaning, link_by_meaning, load_meaning
from lightnews.link.title_words import TitleLookup, title_weights
from lightnews.link.titles import Reference as TitleReference
from lightnews.link.titles import find_title_mentions, match_reference
from lightnews.model import Item, Mention, Reference
from lightnews.normalize.identifiers import (
    find_arxiv_mentions,
    find_code_links,
    find_dois,
    find_slugs,
    link_item,
)
from lightnews.normalize.references import parse_references
from lightnews.store.suggest import PaperAuthor, SocialIdentity
from lightnews.store.views import AccountView, AuthorshipCandidate, PaperSummary

__all__ = [
    "Library",
    "find_arxiv_mentions",
    "item_references",
    "link_announcements",
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


@runtime_checkable
class ScholarLibrary(Protocol):
    """What linking a scholar's announcement asks of the stored library: who wrote what."""

    def social_identities(self) -> list[SocialIdentity]: ...

    def accounts_matching(
        self,
        service: str,
        *,
        ids: Sequence[str] = (),
        handles: Sequence[str] = (),
        names: Sequence[str] = (),
    ) -> list[AccountView]: ...

    def scholars_paper_ids(
        self, scholar_ids: Sequence[int], bar: float, limit: int = 2_000
    ) -> dict[int, list[str]]: ...

    def authorship_candidates(self, name_keys: Sequence[str]) -> list[AuthorshipCandidate]: ...

    def papers_by_ids(self, arxiv_ids: Sequence[str]) -> dict[str, PaperSummary]: ...

    def paper_row_id(self, arxiv_id: str) -> int | None: ...

    def paper_texts_of(self, paper_ids: Sequence[int]) -> list[tuple[int, str, str]]: ...

    def paper_authors(self, arxiv_ids: Sequence[str], bar: float) -> list[PaperAuthor]: ...

    def posted_about(self, account: str, arxiv_ids: Sequence[str]) -> dict[str, list[str]]: ...


@runtime_checkable
class VectorLibrary(Protocol):
    """What meaning in an announcement asks of the stored library: its papers' vectors."""

    def vectors_by_arxiv_id(
        self, arxiv_ids: Sequence[str], model: str
    ) -> dict[str, tuple[int, bytes]]: ...


#: An authorship is the poster's when it is attributed to their scholar at least this
#: surely, or when the written name fits their display name at least this well.
AUTHORSHIP_BAR = 0.5
NAME_FIT = 0.9


def _recent(published: str | None, posted: str | None) -> bool:
    if not published or not posted:
        return True
    try:
        first = datetime.fromisoformat(published.replace("Z", "+00:00")[:25])
        when = datetime.fromisoformat(posted.replace("Z", "+00:00")[:25])
    except ValueError:
        return True
    if (first.tzinfo is None) != (when.tzinfo is None):
        first, when = first.replace(tzinfo=None), when.replace(tzinfo=None)
    return when - timedelta(days=WINDOW_DAYS) <= first <= when + timedelta(days=7)


def _posters_papers(item: Item, library: ScholarLibrary) -> tuple[str, list[str]]:
    """The poster's name and the papers they wrote: through the scholar their account is
    (a confirmed identity: DID or handle), else by their display name among the authors."""
    account = item.account or ""
    handle = (item.author or "").lstrip("@").casefold()
    scholars = {
        i.scholar_id: i.scholar_name
        for i in library.social_identities()
        if (i.kind.endswith("-did") and i.value == account)
        or (i.kind.endswith("-handle") and handle and i.value.casefold().lstrip("@") == handle)
    }
    if scholars:
        ids = library.scholars_paper_ids(sorted(scholars), AUTHORSHIP_BAR)
        return next(iter(scholars.values())), sorted({a for v in ids.values() for a in v})
    names = [a.name for a in library.accounts_matching("bluesky", ids=[account]) if a.name]
    if not account or not names:
        return "", []
    wanted = parse_name(names[0])
    if not wanted.given or not wanted.surname:
        return "", []
    found = {
        c.arxiv_id
        for c in library.authorship_candidates([wanted.surname.split()[-1]])
        if parse_name(c.name, c.keyname, c.forenames).surname == wanted.surname
        and given_name_score(wanted, parse_name(c.name, c.keyname, c.forenames)) >= NAME_FIT
        and _recent(c.published, item.published)
    }
    return names[0], sorted(found)


def link_announcements(
    items: Sequence[Item],
    library: ScholarLibrary,
    weight: Callable[[str], float],
    *,
    encode: Callable[[str], Sequence[float]] | None = None,
    vectors: Callable[[Sequence[str]], dict[str, Sequence[float]]] | None = None,
) -> None:
    """Join each post by a known scholar to the recent paper of theirs it describes.

    Only posts that name no paper otherwise are judged (a post that writes an
    identifier or a title is linked by those). ``encode`` and ``vectors``
    (the library's encoder and its stored paper vectors) add meaning to the
    words; without them the words-only model judges.
    """
    for item in items:
        if item.kind != "post" or item.mentions or not item.text:
            continue
        _, ids = _posters_papers(item, library)
        if not ids:
            continue
        summaries = library.papers_by_ids(ids)
        recent = [s for s in summaries.values() if _recent(s.published, item.published)]
        if not recent:
            continue
        rows = {a: library.paper_row_id(a) for a in (s.arxiv_id for s in recent)}
        texts = {
            r[0]: r[2] for r in library.paper_texts_of([i for i in rows.values() if i is not None])
        }
        authors: dict[str, list[str]] = {}
        for author in library.paper_authors([s.arxiv_id for s in recent], 0.0):
            authors.setdefault(author.arxiv_id, []).append(author.name)
        told = library.posted_about(item.account or "", [s.arxiv_id for s in recent])
        stored = dict(vectors([s.arxiv_id for s in recent])) if vectors and encode else {}
        if encode and len(stored) < len(recent):
            # A paper not embedded yet is encoded here as embedding will store it, so that
            # the judgement does not hang on whether the embedding job has run: the same
            # post, read again once it has, would otherwise be judged by the other model.
            from lightnews.embed import paper_text

            for s in recent:
                if s.arxiv_id not in stored:
                    text = paper_text(s.title, texts.get(rows[s.arxiv_id] or -1, ""))
                    stored[s.arxiv_id] = _half(encode(text))
        papers = [
            OwnPaper(
                s.arxiv_id,
                s.title,
                texts.get(rows[s.arxiv_id] or -1, ""),
                s.published,
                tuple(authors.get(s.arxiv_id, ())),
                tuple(stored[s.arxiv_id]) if s.arxiv_id in stored else None,
                tuple(told.get(s.arxiv_id, ())),
            )
            for s in recent
        ]
        # The post's own words are encoded, as the model was fitted (links, handles out).
        vector = encode(post_words(item.text)) if encode and stored else None
        found = link_announcement(item.text, papers, weight, posted=item.published, vector=vector)
        if found is not None:
            item.mentions = merge_mentions(item.mentions, [found], exclude=item.paper_id)


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


def link_titles(
    items: list[Item], lookup: Library, *, bar: float, semantic: str = "minilm-int8"
) -> None:
    """Add what each item names beyond arXiv ids: DOIs, titles, slugs, references; code links.

    The references an item makes are kept in ``item.references`` (so that
    those no stored paper matches can be looked up online). Titles written in
    other words are then linked by meaning on pages that say when their papers
    appeared (:mod:`lightnews.link.meaning`, with the ``semantic`` encoder when
    it is installed; ``"off"`` skips it).
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
    meaning = load_meaning(semantic)
    link_by_meaning(items, lookup, weight, meaning)
    if isinstance(lookup, ScholarLibrary):
        encode, vectors = _announcement_meaning(lookup, semantic, meaning)
        link_announcements(items, lookup, weight, encode=encode, vectors=vectors)


def _half(vector: Sequence[float]) -> list[float]:
    """``vector`` rounded as a library stores it (half precision)."""
    import numpy as np

    return [float(v) for v in np.asarray(vector, dtype=np.float16)]


def _announcement_meaning(
    lookup: object, semantic: str, meaning: TitleMeaning | None
) -> tuple[
    Callable[[str], Sequence[float]] | None,
    Callable[[Sequence[str]], dict[str, Sequence[float]]] | None,
]:
    """The post encoder and the stored paper vectors announcements are judged with: only
    the encoder the announcement model was fitted with (another's cosines are on another
    scale), and only when it is installed; else none, and the words-only model judges."""
    if meaning is None or semantic != ANNOUNCEMENT_ENCODER or not isinstance(lookup, VectorLibrary):
        return None, None
    from lightnews.embed.index import from_blob

    def vectors(arxiv_ids: Sequence[str]) -> dict[str, Sequence[float]]:
        found = lookup.vectors_by_arxiv_id(arxiv_ids, semantic)
        return {a: [float(v) for v in from_blob(blob)] for a, (_, blob) in found.items()}

    return meaning.vector, vectors
