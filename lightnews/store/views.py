"""What the store's reads return: frozen dataclasses, the same from every backend.

The ranker, the pages, search, the CLI and the exports read the library
through these types only, so their fields are a checked contract (mypy
strict) instead of column aliases in a dict. A backend builds them from its
rows; nothing above the store sees a row. Each type that a page or a
``--json`` command prints has a ``to_json()`` whose keys are the public JSON
shape (the web API and the CLI print exactly that).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field, replace
from functools import lru_cache
from typing import Any

from lightnews.model import (
    DailyDetails,
    NoteDetails,
    PostDetails,
    RecordDetails,
    SourceState,
    item_extra,
)
from lightnews.normalize.venues import Venue, venue_from_text, venue_of
from lightnews.store.revisions import Revision, RevisionChange, changes_between

__all__ = [
    "AccountView",
    "AuthorshipCandidate",
    "CardPaper",
    "CodeLink",
    "FeedCandidate",
    "Identity",
    "ItemMatch",
    "ItemView",
    "Mutes",
    "NamedPaper",
    "PaperAuthorship",
    "PaperChange",
    "PaperHit",
    "PaperMention",
    "PaperPage",
    "PaperRecord",
    "PaperSummary",
    "SaidItem",
    "SaveResult",
    "ScholarPaper",
    "ScholarRef",
    "ScholarSummary",
    "ScholarView",
    "SourceRef",
    "SourceRow",
    "TitleCandidate",
    "VersionView",
    "code_after",
    "record_venue",
]


@dataclass(slots=True)
class SourceRow:
    """A source as stored: what it reads, its saved state and its health."""

    id: int
    kind: str
    address: str
    title: str | None
    folder: str | None
    scholar_id: int | None
    params: dict[str, Any]
    state: SourceState
    created_at: str
    last_attempt: str | None
    last_success: str | None
    last_error: str | None
    last_error_at: str | None
    error_count: int
    next_attempt: str | None
    enabled: bool

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "url": self.address,
            "title": self.title,
            "folder": self.folder,
            "last_attempt": self.last_attempt,
            "last_success": self.last_success,
            "last_error": self.last_error,
            "last_error_at": self.last_error_at,
            "error_count": self.error_count,
            "next_attempt": self.next_attempt,
            "enabled": self.enabled,
            "incomplete": self.incomplete,
        }

    @property
    def incomplete(self) -> str | None:
        """Why its last listing was not whole (missing papers, a stale batch), if it was not."""
        found = self.state.extra.get("incomplete")
        return found if isinstance(found, str) else None


@dataclass(slots=True)
class SaveResult:
    """Counts of what one save changed; all zero when the data was already stored."""

    papers_new: int = 0
    papers_updated: int = 0
    items_new: int = 0
    items_updated: int = 0
    mentions: int = 0
    unchanged: int = 0
    #: Records saved as stubs (no title: known by id only, waiting for their metadata).
    stubs: int = 0
    warnings: list[str] = field(default_factory=list)
    #: Folded surnames (``authorships.name_key``) of the authors of papers this save
    #: added or changed: the scholars to attribute again (:mod:`lightnews.link.attribution`).
    name_keys: set[str] = field(default_factory=set)

    def add(self, other: SaveResult) -> None:
        self.papers_new += other.papers_new
        self.papers_updated += other.papers_updated
        self.items_new += other.items_new
        self.items_updated += other.items_updated
        self.mentions += other.mentions
        self.unchanged += other.unchanged
        self.stubs += other.stubs
        self.warnings.extend(other.warnings)
        self.name_keys |= other.name_keys

    @property
    def changed(self) -> int:
        return self.papers_new + self.papers_updated + self.items_new + self.items_updated


@dataclass(frozen=True, slots=True)
class SourceRef:
    """A source named by id, kind and address (a scholar's sources)."""

    id: int
    kind: str
    address: str


# -- papers -----------------------------------------------------------------------------


@lru_cache(maxsize=16_384)
def record_venue(journal_ref: str | None, comments: str | None, doi: str | None) -> Venue | None:
    """:func:`~lightnews.normalize.venues.venue_of`, remembered by its three texts.

    The feed reads the venue of about 1,200 candidate papers per request, the
    same papers request after request, and reading one from its comments is
    regular-expression work (a third of the feed's ranking time on a 150k-paper
    library). The answer depends on the three texts alone (``Venue`` is
    frozen), so an edited record is read afresh.
    """
    return venue_of(journal_ref, comments, doi)


@dataclass(frozen=True, slots=True)
class PaperSummary:
    """A paper as a feed entry or a named id needs it (no abstract, no authorships)."""

    arxiv_id: str
    title: str
    authors: str
    primary_category: str | None
    published: str | None
    updated: str | None
    latest_version: int | None
    journal_ref: str | None = None
    comments: str | None = None
    doi: str | None = None
    withdrawn: bool = False

    @property
    def venue(self) -> Venue | None:
        """Where it was accepted or published, as its arXiv record says."""
        return record_venue(self.journal_ref, self.comments, self.doi)


@dataclass(frozen=True, slots=True)
class CodeLink:
    """A paper's code repository and when it first appeared (its record's or item's date)."""

    url: str
    first_seen: str | None
    item_id: int | None = None

    def to_json(self) -> dict[str, Any]:
        return {"url": self.url, "first_seen": self.first_seen, "item_id": self.item_id}


@dataclass(frozen=True, slots=True)
class PaperChange:
    """A paper's newest stored change, as the feed tells it ("v3: abstract changed").

    ``seen_at`` is when Lightnews stored it (a reader who read the story before
    that sees it again); ``dated`` the version's date on arXiv when known.
    """

    arxiv_id: str
    version: int
    seen_at: str
    note: str
    dated: str


@dataclass(frozen=True, slots=True)
class PaperHit:
    """A paper found by a search or a related-papers query, with the backend's score."""

    arxiv_id: str
    title: str
    published: str | None
    primary_category: str | None
    score: float = 0.0


@dataclass(frozen=True, slots=True)
class ItemMatch:
    """A post, article or note a search found: which, and the backend's score.

    ``unit`` is what a search shows once: a post's conversation (its root's
    key; a post that starts none is its own), an article's or note's address
    (one article read through two feeds is one result).
    """

    item_id: int
    kind: str
    unit: str
    score: float


@dataclass(frozen=True, slots=True)
class SaidItem:
    """A post, article or note as a search result shows it (``thread_posts``: how many
    stored posts its conversation has, 1 for a lone post, 0 for other kinds;
    ``published`` when the item gives no date is when the library first saw it, and
    ``dated`` says which)."""

    item_id: int
    kind: str
    title: str
    text: str
    url: str | None
    author: str | None
    published: str | None
    source_kind: str
    source: str
    thread_posts: int
    dated: bool = True


@dataclass(frozen=True, slots=True)
class VersionView:
    version: str
    date: str | None
    size: str | None

    def to_json(self) -> dict[str, Any]:
        return {"version": self.version, "date": self.date, "size": self.size}


@dataclass(frozen=True, slots=True)
class PaperAuthorship:
    """One author of a stored paper, with the scholar it is attributed to (if any)."""

    paper_id: int
    position: int
    name: str
    keyname: str | None = None
    forenames: str | None = None
    affiliations: str | None = None
    scholar_id: int | None = None
    confidence: float | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "position": self.position,
            "name": self.name,
            "keyname": self.keyname,
            "forenames": self.forenames,
            "affiliations": self.affiliations,
            "scholar_id": self.scholar_id,
            "confidence": self.confidence,
        }


@dataclass(frozen=True, slots=True)
class PaperRecord:
    """Where the paper itself was listed (an arXiv listing, a daily-papers entry)."""

    source_kind: str
    source: str
    url: str | None
    first_seen: str
    item_id: int | None = None
    #: The listing's counts (a daily-papers entry's upvotes, comments); absent when unknown.
    engagement: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "source_kind": self.source_kind,
            "source": self.source,
            "url": self.url,
            "first_seen": self.first_seen,
            "item_id": self.item_id,
            "engagement": self.engagement,
        }


@dataclass(frozen=True, slots=True)
class PaperMention:
    """An item that mentions the paper, with who said it and how the mention was found."""

    item_id: int | None
    kind: str
    source_kind: str
    source: str
    url: str | None
    author: str | None
    account: str | None
    scholar: str | None
    title: str
    published: str | None
    text: str
    method: str
    confidence: float
    evidence: str
    #: The thread the item belongs to (its root's key; its own key when it is no reply).
    thread: str | None = None
    engagement: dict[str, int] = field(default_factory=dict)

    def to_json(self) -> dict[str, Any]:
        return {
            "item_id": self.item_id,
            "kind": self.kind,
            "source_kind": self.source_kind,
            "source": self.source,
            "url": self.url,
            "author": self.author,
            "account": self.account,
            "scholar": self.scholar,
            "title": self.title,
            "published": self.published,
            "text": self.text,
            "method": self.method,
            "confidence": self.confidence,
            "evidence": self.evidence,
            "thread": self.thread,
            "engagement": self.engagement,
        }


@dataclass(frozen=True, slots=True)
class CardPaper:
    """What a feed card shows of a paper, read for every card of a page at once.

    The story page needs a paper's mentions, records and revisions; a card
    needs its abstract, authors, code, newest version and whether it was
    withdrawn, so the feed reads only that, for all its cards in a few queries.
    ``code`` is sorted as :attr:`PaperPage.code`; ``last_version_date`` is the
    date of its newest listed version.
    """

    arxiv_id: str
    abstract: str
    authorships: tuple[PaperAuthorship, ...]
    code: tuple[str, ...]
    latest_version: int | None
    last_version_date: str | None
    withdrawn: bool
    #: Known only by its id (its metadata not fetched yet).
    stub: bool = False


@dataclass(frozen=True, slots=True)
class PaperPage:
    """A paper with its authors, versions, links, records and mentions (the story page)."""

    arxiv_id: str
    stub: bool
    title: str
    authorships: tuple[PaperAuthorship, ...]
    abstract: str
    primary_category: str | None
    categories: tuple[str, ...]
    published: str | None
    updated: str | None
    versions: tuple[VersionView, ...]
    latest_version: int | None
    doi: str | None
    journal_ref: str | None
    comments: str | None
    license: str | None
    withdrawn: bool
    code: tuple[str, ...]
    records: tuple[PaperRecord, ...]
    mentions: tuple[PaperMention, ...]
    #: Its text at each version Lightnews saw it change (empty when it never changed).
    revisions: tuple[Revision, ...] = ()
    #: Its code repositories with when each first appeared, earliest first.
    code_links: tuple[CodeLink, ...] = ()

    @property
    def code_released(self) -> CodeLink | None:
        """The first code link that appeared after the paper (a day's grace), if any."""
        return code_after(self.published, self.code_links)

    @property
    def changes(self) -> list[RevisionChange]:
        """What changed from each stored version to the next, oldest first, each dated
        by arXiv's date of its version when the record gives it."""
        dates = {v.version: v.date for v in self.versions}
        return [
            replace(c, dated=dates.get(f"v{c.version}")) for c in changes_between(self.revisions)
        ]

    @property
    def authors(self) -> list[str]:
        return [a.name for a in self.authorships]

    @property
    def links(self) -> dict[str, str]:
        """Where to read it: the abstract page, the PDF, the DOI, the code."""
        base = self.arxiv_id
        links = {"abs": f"https://arxiv.org/abs/{base}", "pdf": f"https://arxiv.org/pdf/{base}"}
        if self.doi:
            links["doi"] = f"https://doi.org/{self.doi.split()[0]}"
        if self.code:
            links["code"] = self.code[0]
        return links

    @property
    def venue(self) -> Venue | None:
        """Where it was accepted or published: its arXiv record, else what a post beside an
        OpenReview forum link says (:mod:`lightnews.normalize.venues`)."""
        found = record_venue(self.journal_ref, self.comments, self.doi)
        if found is not None:
            return found
        for mention in self.mentions:
            if "openreview.net/forum" in f"{mention.url or ''} {mention.text}":
                found = venue_from_text(mention.text)
                if found is not None:
                    return found
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "arxiv_id": self.arxiv_id,
            "stub": self.stub,
            "title": self.title,
            "authors": self.authors,
            "authorships": [a.to_json() for a in self.authorships],
            "abstract": self.abstract,
            "primary_category": self.primary_category,
            "categories": list(self.categories),
            "published": self.published,
            "updated": self.updated,
            "versions": [v.to_json() for v in self.versions],
            "latest_version": self.latest_version,
            "doi": self.doi,
            "journal_ref": self.journal_ref,
            "comments": self.comments,
            "license": self.license,
            "withdrawn": self.withdrawn,
            "venue": venue.to_json() if (venue := self.venue) else None,
            "links": self.links,
            "code": list(self.code),
            "records": [r.to_json() for r in self.records],
            "mentions": [m.to_json() for m in self.mentions],
            "changes": [c.to_json() for c in self.changes],
            "code_links": [c.to_json() for c in self.code_links],
        }


def code_after(published: str | None, links: Sequence[CodeLink]) -> CodeLink | None:
    """The first of ``links`` that appeared more than a day after ``published``."""
    if not published:
        return None
    from datetime import UTC, datetime, timedelta

    try:
        edge = datetime.fromisoformat(published.replace("Z", "+00:00")) + timedelta(days=1)
    except ValueError:
        return None
    if edge.tzinfo is None:  # a date alone ("2025-03-01"): UTC, as the links' times are
        edge = edge.replace(tzinfo=UTC)
    for link in links:
        try:
            seen = datetime.fromisoformat((link.first_seen or "").replace("Z", "+00:00"))
        except ValueError:
            continue
        if seen.tzinfo is None:
            seen = seen.replace(tzinfo=edge.tzinfo)
        if seen > edge:
            return link
    return None


# -- items ------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class NamedPaper:
    """A paper an item names, and how sure the link is."""

    arxiv_id: str
    title: str
    method: str
    confidence: float

    def to_json(self) -> dict[str, Any]:
        return {
            "arxiv_id": self.arxiv_id,
            "title": self.title,
            "method": self.method,
            "confidence": self.confidence,
        }


@dataclass(frozen=True, slots=True)
class ItemView:
    """One stored item (an article, a note, a post, a daily-papers entry) and its papers."""

    id: int
    kind: str
    title: str
    url: str | None
    author: str | None
    text: str
    html: str
    published: str | None
    engagement: dict[str, int]
    source_id: int
    source: str
    source_kind: str
    record_of: str | None
    post: PostDetails | None = None
    daily: DailyDetails | None = None
    note: NoteDetails | None = None
    record: RecordDetails | None = None
    code_links: tuple[str, ...] = ()
    papers: tuple[NamedPaper, ...] = ()

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "kind": self.kind,
            "title": self.title,
            "url": self.url,
            "author": self.author,
            "text": self.text,
            "html": self.html,
            "published": self.published,
            "engagement": self.engagement,
            "extra": item_extra(self),
            "source_id": self.source_id,
            "source": self.source,
            "source_kind": self.source_kind,
            "record_of": self.record_of,
            "papers": [p.to_json() for p in self.papers],
        }


@dataclass(frozen=True, slots=True)
class FeedCandidate:
    """A recent item as the ranker reads it: who said it, where, about which papers.

    ``followed_scholar`` is the followed scholar who put it in their feed (posted
    or reposted it), if any.
    """

    id: int
    key: str
    kind: str
    title: str
    url: str | None
    author: str | None
    account: str | None
    engagement: dict[str, int]
    reply_parent: str | None
    thread_root: str | None
    published: str | None
    time: str
    source_id: int
    source_kind: str
    source: str
    record_of: str | None
    mentioned: tuple[str, ...]
    bot: bool = False
    followed_scholar: int | None = None

    @property
    def papers(self) -> list[str]:
        """The papers it is about: the one it records, else the ones it mentions."""
        return [self.record_of] if self.record_of else list(self.mentioned)


# -- people -----------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Identity:
    kind: str
    value: str

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "value": self.value}


@dataclass(frozen=True, slots=True)
class ScholarRef:
    """A scholar by id and name (the feed's header of followed scholars)."""

    id: int
    name: str


@dataclass(frozen=True, slots=True)
class ScholarView:
    """A scholar with their identities."""

    id: int
    name: str
    followed: bool
    created_at: str
    identities: tuple[Identity, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "followed": self.followed,
            "created_at": self.created_at,
            "identities": [i.to_json() for i in self.identities],
        }


@dataclass(frozen=True, slots=True)
class ScholarSummary:
    """A scholar in the list: identities and how many records are attributed to them."""

    id: int
    name: str
    followed: bool
    records: int
    identities: tuple[Identity, ...]

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.name,
            "followed": self.followed,
            "records": self.records,
            "identities": [i.to_json() for i in self.identities],
        }


@dataclass(frozen=True, slots=True)
class AccountView:
    """A social account as stored, with whether it looks automated."""

    service: str
    id: str
    handle: str
    name: str
    description: str
    avatar: str | None
    followers: int | None
    following: int | None
    posts: int | None
    pinned: str | None
    created: str | None
    bot: bool
    bot_reason: str | None


@dataclass(frozen=True, slots=True)
class AuthorshipCandidate:
    """An authorship whose surname matches a scholar's, with its paper's context."""

    paper_id: int
    position: int
    name: str
    keyname: str | None
    forenames: str | None
    scholar_id: int | None
    confidence: float | None
    arxiv_id: str
    categories: str
    published: str | None
    coauthors: str | None


@dataclass(frozen=True, slots=True)
class ScholarPaper:
    """A record attributed to a scholar, with the name it was written under."""

    arxiv_id: str
    title: str
    abstract: str
    primary_category: str | None
    categories: str
    published: str | None
    updated: str | None
    withdrawn: bool
    confidence: float
    name_as_written: str


@dataclass(frozen=True, slots=True)
class Mutes:
    """What the user muted: scholar ids and source ids (as text) and keywords."""

    scholar: frozenset[str] = frozenset()
    source: frozenset[str] = frozenset()
    keyword: frozenset[str] = frozenset()

    def __bool__(self) -> bool:
        return bool(self.scholar or self.source or self.keyword)

    def to_json(self) -> dict[str, list[str]]:
        return {
            "scholar": sorted(self.scholar),
            "source": sorted(self.source),
            "keyword": sorted(self.keyword),
        }


@dataclass(frozen=True, slots=True)
class TitleCandidate:
    """A paper a lookup offers: its id, title, author surname keys and date."""

    arxiv_id: str
    title: str
    surnames: tuple[str, ...] = ()
    published: str | None = None
