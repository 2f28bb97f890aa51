"""Sources: fetch bytes from where scholars speak and parse them into the common model.

A source is one module with one class implementing :class:`Source`. It never
does I/O itself: it says which :class:`~lightnews.model.Request` it wants
next (``first_request``, then ``Batch.next`` from each parse), and turns the
bytes the shared HTTP client fetched into a :class:`~lightnews.model.Batch`
(ingestion calls :meth:`Source.read`: ``parse`` and the size caps).
That keeps every parser testable from a saved file (``lightnews ingest
--from-file``) and lets ingestion save state after every page.

Built-in sources register through the ``lightnews.sources`` entry-point group,
exactly as a third-party plugin would::

    [project.entry-points."lightnews.sources"]
    my-kind = "my_package.module:MySource"

What the rest of Lightnews must know about a kind (its items are social posts
whose likes count, it lists daily papers, how its reposts are keyed, which
arXiv category an address follows, the network its accounts post on) is
declared on the class as :class:`SourceTraits` and read through
:func:`kind_traits` (and :func:`network`): the ranker, the store and the
pages never name a kind.
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from importlib.metadata import entry_points
from typing import Any, ClassVar

from lightnews.errors import UsageError
from lightnews.model import Batch, Request, SourceState
from lightnews.normalize.limits import Limits, cap_batch
from lightnews.settings import Settings

__all__ = [
    "ENTRY_POINT_GROUP",
    "NO_NETWORK",
    "Network",
    "Source",
    "SourceTraits",
    "all_traits",
    "get_source_class",
    "kind_traits",
    "kinds_where",
    "network",
    "registry",
]

ENTRY_POINT_GROUP = "lightnews.sources"


_REPOSTED_URI = re.compile(r":[a-z][a-z0-9+.-]*://")


@dataclass(frozen=True, slots=True)
class Network:
    """A social network whose accounts and posts the store keeps (Bluesky's, built in).

    ``service``: how the store names it (``accounts.service``, identities
    ``<service>-did`` and ``<service>-handle``, the posts the listener hears).
    ``post_url``: the web page of a post, from its URI and its author's handle.
    ``author``: the author's stable id written in a post's URI ('' if none).
    """

    service: str
    post_url: Callable[[str, str], str | None]
    author: Callable[[str], str]


#: No network installed: a service no account has, posts without pages or authors.
NO_NETWORK = Network("", lambda uri, handle: None, lambda uri: "")


@dataclass(frozen=True, slots=True)
class SourceTraits:
    """What the core needs to know about one kind of source, declared by the source.

    ``social``: its items are posts by accounts, whose likes and reposts count as
    engagement. ``daily_papers``: it lists papers picked for a day, whose upvotes
    count, and its records show as Daily Papers. ``repost_prefix``: a repost by
    an account is keyed ``<prefix><account>:<uri>`` (see :meth:`repost_key`).
    ``topic_prefix``: an address ``<prefix><category>`` follows an arXiv
    category. ``in_opml``: its address is a feed URL that OPML carries.
    ``note_pages``: its items make a page of notes. ``filter_label``: how the
    search filter names it (``None``: not offered), ordered by ``filter_order``.
    ``network``: its accounts post on this network (read through :func:`network`).
    """

    social: bool = False
    daily_papers: bool = False
    repost_prefix: str | None = None
    topic_prefix: str | None = None
    in_opml: bool = False
    note_pages: bool = False
    filter_label: str | None = None
    filter_order: int = 100
    network: Network | None = None

    def repost_key(self, account: str, uri: str) -> str:
        """The key of ``account``'s repost of the item at ``uri``."""
        if self.repost_prefix is None:
            raise ValueError("this kind of source has no reposts")
        return f"{self.repost_prefix}{account}:{uri}"

    def reposts_by(self, account: str) -> tuple[str, str] | None:
        """The key range ``[low, high)`` of ``account``'s reposts, if this kind has them."""
        if self.repost_prefix is None:
            return None
        low = f"{self.repost_prefix}{account}:"
        return low, low[:-1] + chr(ord(low[-1]) + 1)

    def reposter(self, key: str) -> str | None:
        """Who reposted, for a repost's key (None for anything else).

        The account id may hold colons (``did:plc:...``); the URI after it starts
        with its scheme (``at://``), which an account id never contains.
        """
        if self.repost_prefix is None or not key.startswith(self.repost_prefix):
            return None
        found = _REPOSTED_URI.search(key, len(self.repost_prefix))
        return key[len(self.repost_prefix) : found.start()] or None if found else None

    def topic_address(self, category: str) -> str:
        """The address of a source of this kind that follows ``category``."""
        if self.topic_prefix is None:
            raise ValueError("this kind of source does not follow categories")
        return f"{self.topic_prefix}{category}"

    def topic(self, address: str) -> str | None:
        """The arXiv category an address of this kind follows, if it follows one."""
        if self.topic_prefix is None or not address.startswith(self.topic_prefix):
            return None
        return address[len(self.topic_prefix) :] or None


class Source(ABC):
    """One kind of source. Subclasses set ``kind`` and ``summary`` and implement ``parse``."""

    kind: ClassVar[str]
    summary: ClassVar[str]
    #: Whether ``refresh`` may fetch it (replay-only kinds read files only).
    fetchable: ClassVar[bool] = True
    #: What the core needs to know about this kind (none of it by default).
    traits: ClassVar[SourceTraits] = SourceTraits()

    def __init__(
        self,
        address: str,
        params: dict[str, Any] | None = None,
        settings: Settings | None = None,
    ) -> None:
        self.address = address
        self.params = dict(params or {})
        self.settings = settings or Settings()

    def first_request(self, state: SourceState) -> Request | None:
        """The first request of a refresh, resuming from ``state``; None if nothing to fetch."""
        return Request(self.address, conditional=True)

    @abstractmethod
    def parse(self, body: bytes, state: SourceState, *, url: str | None = None) -> Batch:
        """Turn one response body into a batch. Raises ParseError on unreadable input."""

    def read(self, body: bytes, state: SourceState, *, url: str | None = None) -> Batch:
        """:meth:`parse`, then every field cut to its size cap (what ingestion stores).

        The cuts are recorded in ``Batch.problems`` with the item they cut
        (:mod:`lightnews.normalize.limits`); every source, built in or
        plugged in, gets them without doing anything.
        """
        batch = self.parse(body, state, url=url)
        cap_batch(batch, Limits.from_settings(self.settings))
        return batch

    def describe_error(self, body: bytes) -> str | None:
        """What the service says went wrong, from the body of an HTTP error (or None)."""
        return None

    @classmethod
    def host_interval(cls, settings: Settings) -> dict[str, float]:
        """Minimum seconds between requests per host that this source needs."""
        return {}


@cache
def registry() -> dict[str, type[Source]]:
    """Every installed source kind, built-in and third-party, by kind name."""
    found: dict[str, type[Source]] = {}
    for entry in entry_points(group=ENTRY_POINT_GROUP):
        cls = entry.load()
        if not (isinstance(cls, type) and issubclass(cls, Source)):
            continue
        found[entry.name] = cls
    return dict(sorted(found.items()))


def kind_traits(kind: str) -> SourceTraits:
    """The traits of an installed kind; a kind no longer installed has none."""
    found = registry().get(kind)
    return found.traits if found is not None else SourceTraits()


def all_traits() -> dict[str, SourceTraits]:
    """Traits of every installed kind, by kind name."""
    return {kind: cls.traits for kind, cls in registry().items()}


def kinds_where(test: Callable[[SourceTraits], object]) -> list[str]:
    """Installed kinds whose traits pass ``test`` (``lambda t: t.in_opml``: feed kinds)."""
    return [kind for kind, traits in all_traits().items() if test(traits)]


def network() -> Network:
    """The network whose posts and accounts the store keeps: the one an installed kind
    declares (:attr:`SourceTraits.network`), else :data:`NO_NETWORK`."""
    return next((t.network for t in all_traits().values() if t.network), NO_NETWORK)


def get_source_class(kind: str) -> type[Source]:
    kinds = registry()
    if kind not in kinds:
        known = ", ".join(kinds) or "none (is lightnews installed with pip?)"
        raise UsageError(f"unknown source kind {kind!r}; installed kinds: {known}")
    return kinds[kind]
