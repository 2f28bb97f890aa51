"""The common model every source parses into.

After ``parse`` nothing downstream knows whether an item came from an arXiv
listing, a lab blog's RSS or a JSON Feed: it is an :class:`Item`, and the
papers it carries or mentions are :class:`Paper` and :class:`Mention`
objects. These are plain data: no I/O, no database.

Times are ISO 8601 strings in UTC (``2025-10-03T17:59:48Z``) so that they sort
as text and cross every storage backend unchanged.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

__all__ = [
    "IDENTITY_KINDS",
    "Account",
    "Actor",
    "Author",
    "Batch",
    "ClaimedAuthor",
    "DailyDetails",
    "HasDetails",
    "Item",
    "LinkCard",
    "Mention",
    "NetworkMention",
    "NetworkPost",
    "NoteDetails",
    "Paper",
    "PostDetails",
    "Problem",
    "QueryTerm",
    "QuotedPost",
    "RecordDetails",
    "Reference",
    "Request",
    "SearchFilters",
    "SourceState",
    "Submitter",
    "Version",
    "item_extra",
    "read_extra",
]


#: How a scholar can be known: an account's stable id and its handle (``<service>-did``,
#: ``<service>-handle``), a name on arXiv papers, ORCID, OpenAlex, a homepage, a feed.
IDENTITY_KINDS = (
    "bluesky-did",
    "bluesky-handle",
    "arxiv-name",
    "orcid",
    "openalex",
    "homepage",
    "feed",
)


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


# -- what one kind of item carries beyond the common fields ------------------------------------
#
# Stored together as one JSON object (an item's ``extra`` column, ``extra`` in the
# item's JSON); :func:`item_extra` writes it and :func:`read_extra` reads it back.


def _strs(value: Any) -> tuple[str, ...]:
    return tuple(v for v in value if isinstance(v, str)) if isinstance(value, list) else ()


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _opt(value: Any) -> str | None:
    return value if isinstance(value, str) else None


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


@dataclass(frozen=True, slots=True)
class Actor:
    """An account named inside a post (who reposted it)."""

    did: str
    handle: str = ""
    name: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"did": self.did, "handle": self.handle, "name": self.name}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Actor:
        return cls(_str(data.get("did")), _str(data.get("handle")), _str(data.get("name")))


@dataclass(frozen=True, slots=True)
class LinkCard:
    """The preview of a link a post carries."""

    uri: str
    title: str = ""
    description: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"uri": self.uri, "title": self.title, "description": self.description}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> LinkCard:
        return cls(_str(data.get("uri")), _str(data.get("title")), _str(data.get("description")))


@dataclass(frozen=True, slots=True)
class QuotedPost:
    """A post quoted by another; ``unavailable`` when it was deleted or blocked."""

    uri: str
    did: str = ""
    handle: str = ""
    name: str = ""
    text: str = ""
    url: str | None = None
    unavailable: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "uri": self.uri,
            "did": self.did,
            "handle": self.handle,
            "name": self.name,
            "text": self.text,
            "url": self.url,
        }
        if self.unavailable:
            data["unavailable"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> QuotedPost:
        return cls(
            _str(data.get("uri")),
            _str(data.get("did")),
            _str(data.get("handle")),
            _str(data.get("name")),
            _str(data.get("text")),
            _opt(data.get("url")),
            data.get("unavailable") is True,
        )


@dataclass(frozen=True, slots=True)
class PostDetails:
    """A social post (or a repost of one): its ids, embeds, labels and thread context.

    ``text_full`` is the text with its links whole (as the facets give them);
    ``reposted_by`` and ``reposted_at`` are set on a repost; the ``reply_*``
    fields name the authors of the post it replies to and of its thread's root.
    """

    uri: str
    cid: str = ""
    did: str = ""
    handle: str = ""
    langs: tuple[str, ...] = ()
    mentions: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    card: LinkCard | None = None
    quote: QuotedPost | None = None
    images: tuple[str, ...] = ()
    pinned: bool = False
    labels: tuple[str, ...] = ()
    text_full: str = ""
    video_alt: str = ""
    reposted_by: Actor | None = None
    reposted_at: str | None = None
    reply_parent_author: str | None = None
    reply_parent_unavailable: bool = False
    reply_root_author: str | None = None
    reply_root_unavailable: bool = False

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "uri": self.uri,
            "cid": self.cid,
            "did": self.did,
            "handle": self.handle,
            "langs": list(self.langs),
            "mentions": list(self.mentions),
            "tags": list(self.tags),
            "card": self.card.to_json() if self.card else None,
            "quote": self.quote.to_json() if self.quote else None,
            "images": list(self.images),
            "pinned": self.pinned,
            "labels": list(self.labels),
            "text_full": self.text_full,
        }
        if self.video_alt:
            data["video_alt"] = self.video_alt
        if self.reposted_by is not None:
            data["reposted_by"] = self.reposted_by.to_json()
            data["reposted_at"] = self.reposted_at
        for end in ("parent", "root"):
            author = getattr(self, f"reply_{end}_author")
            if author:
                data[f"reply_{end}_author"] = author
            if getattr(self, f"reply_{end}_unavailable"):
                data[f"reply_{end}_unavailable"] = True
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> PostDetails:
        card, quote, by = data.get("card"), data.get("quote"), data.get("reposted_by")
        return cls(
            uri=_str(data.get("uri")),
            cid=_str(data.get("cid")),
            did=_str(data.get("did")),
            handle=_str(data.get("handle")),
            langs=_strs(data.get("langs")),
            mentions=_strs(data.get("mentions")),
            tags=_strs(data.get("tags")),
            card=LinkCard.from_json(card) if isinstance(card, dict) else None,
            quote=QuotedPost.from_json(quote) if isinstance(quote, dict) else None,
            images=_strs(data.get("images")),
            pinned=data.get("pinned") is True,
            labels=_strs(data.get("labels")),
            text_full=_str(data.get("text_full")),
            video_alt=_str(data.get("video_alt")),
            reposted_by=Actor.from_json(by) if isinstance(by, dict) else None,
            reposted_at=_opt(data.get("reposted_at")),
            reply_parent_author=_opt(data.get("reply_parent_author")),
            reply_parent_unavailable=data.get("reply_parent_unavailable") is True,
            reply_root_author=_opt(data.get("reply_root_author")),
            reply_root_unavailable=data.get("reply_root_unavailable") is True,
        )


@dataclass(frozen=True, slots=True)
class Submitter:
    """Who featured a paper on a daily-papers listing (the fields the listing gave)."""

    id: str | None = None
    name: str | None = None
    fullname: str | None = None
    avatar_url: str | None = None
    followers: int | None = None

    def to_json(self) -> dict[str, Any]:
        fields = {
            "id": self.id,
            "name": self.name,
            "fullname": self.fullname,
            "avatar_url": self.avatar_url,
            "followers": self.followers,
        }
        return {k: v for k, v in fields.items() if v is not None}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> Submitter:
        return cls(
            _opt(data.get("id")),
            _opt(data.get("name")),
            _opt(data.get("fullname")),
            _opt(data.get("avatar_url")),
            _int(data.get("followers")),
        )


@dataclass(frozen=True, slots=True)
class ClaimedAuthor:
    """An author who claimed the paper on a daily-papers listing, with their user name there."""

    name: str
    user: str

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "user": self.user}


@dataclass(frozen=True, slots=True)
class DailyDetails:
    """A daily-papers entry: the day it was featured and what the listing says of it."""

    featured_day: str | None = None
    arxiv_published: str | None = None
    submitter: Submitter | None = None
    github: str | None = None
    github_stars: int | None = None
    project_page: str | None = None
    organization: str | None = None
    keywords: tuple[str, ...] = ()
    author_participating: bool | None = None
    thumbnail: str | None = None
    discussion_id: str | None = None
    ai_summary: str | None = None
    claimed_authors: tuple[ClaimedAuthor, ...] = ()
    first_seen: str | None = None
    last_seen: str | None = None

    _ORDER = (
        "featured_day",
        "arxiv_published",
        "submitter",
        "github",
        "github_stars",
        "project_page",
        "organization",
        "keywords",
        "author_participating",
        "thumbnail",
        "discussion_id",
        "ai_summary",
        "claimed_authors",
        "first_seen",
        "last_seen",
    )

    def to_json(self) -> dict[str, Any]:
        """Only what the listing gave: empty values are left out."""
        data: dict[str, Any] = {}
        for name in self._ORDER:
            value = getattr(self, name)
            if isinstance(value, tuple):
                value = [v.to_json() if isinstance(v, ClaimedAuthor) else v for v in value]
            elif isinstance(value, Submitter):
                value = value.to_json()
            if value is not None and value != [] and value != {}:
                data[name] = value
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> DailyDetails:
        participating = data.get("author_participating")
        return cls(
            featured_day=_opt(data.get("featured_day")),
            arxiv_published=_opt(data.get("arxiv_published")),
            submitter=Submitter.from_json(_dict(data["submitter"]))
            if data.get("submitter")
            else None,
            github=_opt(data.get("github")),
            github_stars=_int(data.get("github_stars")),
            project_page=_opt(data.get("project_page")),
            organization=_opt(data.get("organization")),
            keywords=_strs(data.get("keywords")),
            author_participating=participating if isinstance(participating, bool) else None,
            thumbnail=_opt(data.get("thumbnail")),
            discussion_id=_opt(data.get("discussion_id")),
            ai_summary=_opt(data.get("ai_summary")),
            claimed_authors=tuple(
                ClaimedAuthor(_str(a.get("name")), _str(a.get("user")))
                for a in data.get("claimed_authors") or []
                if isinstance(a, dict)
            ),
            first_seen=_opt(data.get("first_seen")),
            last_seen=_opt(data.get("last_seen")),
        )


@dataclass(frozen=True, slots=True)
class Reference:
    """A "Surname: short title" reference read from an item's text; ``raw`` is where it was read."""

    surname: str
    title: str
    raw: str = ""

    def to_json(self) -> dict[str, str]:
        return {"surname": self.surname, "title": self.title, "raw": self.raw}


@dataclass(frozen=True, slots=True)
class NoteDetails:
    """One note of a notes page: where it sits on the page and the papers it cites."""

    section: str | None = None
    references: tuple[Reference, ...] = ()
    page_title: str | None = None
    level: int = 0
    position: int = 0
    is_section: bool = False
    papers_reviewed: int | None = None

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "section": self.section,
            "references": [r.to_json() for r in self.references],
            "page_title": self.page_title,
            "level": self.level,
            "position": self.position,
            "is_section": self.is_section,
        }
        if self.papers_reviewed is not None:
            data["papers_reviewed"] = self.papers_reviewed
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> NoteDetails:
        references = tuple(
            Reference(_str(r.get("surname")), _str(r.get("title")), _str(r.get("raw")))
            for r in data.get("references") or []
            if isinstance(r, dict)
        )
        return cls(
            _opt(data.get("section")),
            references,
            _opt(data.get("page_title")),
            _int(data.get("level")) or 0,
            _int(data.get("position")) or 0,
            data.get("is_section") is True,
            _int(data.get("papers_reviewed")),
        )


@dataclass(frozen=True, slots=True)
class RecordDetails:
    """An OAI-PMH record of a paper: the repository's datestamp of its last change."""

    datestamp: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"datestamp": self.datestamp}

    @classmethod
    def from_json(cls, data: dict[str, Any]) -> RecordDetails:
        return cls(_str(data.get("datestamp")))


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
    #: What its kind carries beyond these fields (at most one is set).
    post: PostDetails | None = None
    daily: DailyDetails | None = None
    note: NoteDetails | None = None
    record: RecordDetails | None = None
    #: Code repositories it links (found by linking, for a paper it is about).
    code_links: list[str] = field(default_factory=list)
    #: The "Surname: short title" references it makes (found by linking, not stored:
    #: a note's are its ``note.references``, any other item's are read from its text).
    references: tuple[Reference, ...] = ()
    paper_id: str | None = None
    mentions: list[Mention] = field(default_factory=list)
    #: The account that posted it (``Account.id``), for social items.
    account: str | None = None
    #: Keys of the first and the previous item of the conversation it replies to.
    thread_root: str | None = None
    reply_parent: str | None = None


class HasDetails(Protocol):
    """Anything carrying an item's kind-specific fields (an :class:`Item`, a stored view)."""

    @property
    def post(self) -> PostDetails | None: ...

    @property
    def daily(self) -> DailyDetails | None: ...

    @property
    def note(self) -> NoteDetails | None: ...

    @property
    def record(self) -> RecordDetails | None: ...

    @property
    def code_links(self) -> Sequence[str]: ...


def item_extra(item: HasDetails) -> dict[str, Any]:
    """The JSON object an item's kind-specific fields are stored as (``extra``)."""
    found = item.post or item.daily or item.note or item.record
    data = found.to_json() if found is not None else {}
    if item.code_links:
        data["code_links"] = list(item.code_links)
    return data


def read_extra(
    kind: str, data: dict[str, Any]
) -> tuple[PostDetails | None, DailyDetails | None, NoteDetails | None, RecordDetails | None]:
    """:func:`item_extra` read back for an item of ``kind``: ``(post, daily, note, record)``."""
    if not data:
        return None, None, None, None
    if kind in ("post", "repost"):
        return PostDetails.from_json(data), None, None, None
    if kind == "daily":
        return None, DailyDetails.from_json(data), None, None
    if kind == "note":
        return None, None, NoteDetails.from_json(data), None
    if kind == "paper" and "datestamp" in data:
        return None, None, None, RecordDetails.from_json(data)
    return None, None, None, None


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
        return any(
            (self.subject, self.since, self.until, self.scholar_id is not None, self.source_kind)
        )


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


@dataclass(frozen=True, slots=True)
class NetworkMention:
    """A paper a network post names: an arXiv id, ``doi:…`` or ``openreview:…``."""

    paper: str
    method: str
    confidence: float
    evidence: str = ""


@dataclass(frozen=True, slots=True)
class NetworkPost:
    """A post (or a repost, or a quote) heard on the network that names a paper."""

    uri: str
    did: str
    kind: str
    time_us: int
    mentions: tuple[NetworkMention, ...]
    subject: str | None = None
    text: str = ""
    created_at: str | None = None
    payload: str = ""
