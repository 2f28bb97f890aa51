"""The common model every source parses into.

After ``parse`` nothing downstream knows whether an item came from an arXiv
listing, a lab blog's RSS or a JSON Feed: it is an :class:`Item`, and the
papers it carries or mentions are :class:`Paper` and :class:`Mention`
objects. These are plain data: no I/O, no database.

Times are ISO 8601 strings in UTC (``2025-10-03T17:59:48Z``) so that they sort
as text and cross every storage backend unchanged.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "Account",
    "Author",
    "Batch",
    "Item",
    "Mention",
    "Paper",
    "Problem",
    "QueryTerm",
    "Request",
    "SearchFilters",
    "SourceState",
    "Version",
]


@dataclass(slots=True)
class Author:
    """A paper author as written, with the parts arXiv gives when it gives them."""

    name: str
    keyname: str | None = None
    forenames: str | None = None
    suffix: str | None = None
    affiliations: list[str] = field(default_factory=list)


@dataclass(slots=True)
class Version:
    """One arXiv version: ``v1`` is 1. ``date`` is ISO 8601 UTC when known."""

    number: int
    date: str | None = None
    size: str | None = None


@dataclass(slots=True)
class Paper:
    """The canonical work, keyed by its versionless arXiv id.

    ``categories`` has the primary category first. A paper created only
    because something mentioned its id is a *stub*: ``title`` is empty and
    the next metadata that arrives fills it in.
    """

    arxiv_id: str
    title: str = ""
    abstract: str = ""
    authors: list[Author] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    published: str | None = None
    updated: str | None = None
    versions: list[Version] = field(default_factory=list)
    doi: str | None = None
    journal_ref: str | None = None
    comments: str | None = None
    license: str | None = None
    submitter: str | None = None
    withdrawn: bool = False

    @property
    def primary_category(self) -> str | None:
        return self.categories[0] if self.categories else None

    @property
    def latest_version(self) -> int | None:
        return max((v.number for v in self.versions), default=None)

    @property
    def is_stub(self) -> bool:
        return not self.title


@dataclass(slots=True)
class Mention:
    """An item's reference to a paper: how it was found and how sure we are."""

    arxiv_id: str
    method: str
    confidence: float
    evidence: str = ""


@dataclass(slots=True)
class Account:
    """A person's account on a social service: who speaks, with the counts a profile shows.

    ``service`` is ``bluesky`` today; ``id`` is the stable identifier there (a
    DID), ``handle`` the changeable one. ``pinned`` is the key of the pinned
    item, if any. ``payload`` keeps the original profile as the service sent it.
    """

    service: str
    id: str
    handle: str = ""
    name: str = ""
    description: str = ""
    avatar: str | None = None
    followers: int | None = None
    following: int | None = None
    posts: int | None = None
    pinned: str | None = None
    created: str | None = None
    payload: str = ""


@dataclass(slots=True)
class Item:
    """One unit of content from a source: a post, an article, a paper record, a note.

    ``key`` identifies the item within its source (a feed GUID, an arXiv id, a
    post URI); storing the same key twice updates rather than duplicates.
    ``payload`` keeps the original bytes of this unit so every page can link
    back to, and re-derive from, what the source really sent.
    """

    key: str
    kind: str
    title: str = ""
    url: str | None = None
    author: str | None = None
    text: str = ""
    html: str = ""
    published: str | None = None
    updated: str | None = None
    links: list[str] = field(default_factory=list)
    tags: list[str] = field(default_factory=list)
    engagement: dict[str, int] = field(default_factory=dict)
    payload: str = ""
    extra: dict[str, Any] = field(default_factory=dict)
    paper_id: str | None = None
    mentions: list[Mention] = field(default_factory=list)
    #: The account that posted it (``Account.id``), for social items.
    account: str | None = None
    #: Keys of the first and the previous item of the conversation it replies to.
    thread_root: str | None = None
    reply_parent: str | None = None


@dataclass(frozen=True, slots=True)
class QueryTerm:
    """One term of a search: words that must appear together, a prefix, or an exclusion."""

    words: str
    prefix: bool = False
    exclude: bool = False


@dataclass(frozen=True, slots=True)
class SearchFilters:
    """Narrowing a search: subject (``cs.LG`` or a whole archive ``cs``), dates, who, where."""

    subject: str | None = None
    since: str | None = None
    until: str | None = None
    scholar_id: int | None = None
    source_kind: str | None = None

    def __bool__(self) -> bool:
        return any((self.subject, self.since, self.until, self.scholar_id is not None,
                    self.source_kind))  # fmt: skip


@dataclass(slots=True)
class SourceState:
    """What a source remembers between runs (stored on its row)."""

    etag: str | None = None
    last_modified: str | None = None
    cursor: str | None = None
    resumption_token: str | None = None
    extra: dict[str, Any] = field(default_factory=dict)


@dataclass(slots=True)
class Request:
    """The next thing a source wants fetched. ``conditional`` sends ETag/Last-Modified."""

    url: str
    params: dict[str, str | int] = field(default_factory=dict)
    conditional: bool = False


@dataclass(frozen=True, slots=True)
class Problem:
    """One bad field or item that cost only itself: recorded on the source, the rest stored.

    ``key`` is the item's key (or the paper's arXiv id) when one record is
    concerned, ``field`` the field that was dropped or cut (None: the whole
    record was skipped).
    """

    message: str
    key: str | None = None
    field: str | None = None

    def __str__(self) -> str:
        where = f"{self.key} {self.field}" if self.key and self.field else self.key or self.field
        return f"{where}: {self.message}" if where else self.message


@dataclass(slots=True)
class Batch:
    """What parsing one response gives: items, papers, the next page and the new state.

    ``warnings`` are problems worth showing the user that did not stop the
    parse (a feed that is not well-formed but still readable); ``problems``
    the fields and items that were dropped or cut, each naming its item.
    ``well_formed`` is False when the document had to be repaired to be read:
    its items may be cut short, so they never replace stored ones.
    """

    items: list[Item] = field(default_factory=list)
    papers: list[Paper] = field(default_factory=list)
    next: Request | None = None
    state: SourceState | None = None
    warnings: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)
    title: str | None = None
    accounts: list[Account] = field(default_factory=list)
    #: Further requests this response calls for (a thread's missing posts), fetched
    #: after the ``next`` pages and parsed by the same source.
    follow: list[Request] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    well_formed: bool = True
