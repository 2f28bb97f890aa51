"""Sources: fetch bytes from where scholars speak and parse them into the common model.

A source is one module with one class implementing :class:`Source`. It never
does I/O itself: it says which :class:`~lightnews.model.Request` it wants
next (``first_request``, then ``Batch.next`` from each parse), and turns the
bytes the shared HTTP client fetched into a :class:`~lightnews.model.Batch`
(the pipeline calls :meth:`Source.read`: ``parse`` and the size caps).
That keeps every parser testable from a saved file (``lightnews ingest
--from-file``) and lets the pipeline save state after every page.

Built-in sources register through the ``lightnews.sources`` entry-point group,
exactly as a third-party plugin would::

    [project.entry-points."lightnews.sources"]
    my-kind = "my_package.module:MySource"
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from functools import cache
from importlib.metadata import entry_points
from typing import Any, ClassVar

from lightnews.errors import UsageError
from lightnews.model import Batch, Request, SourceState
from lightnews.normalize.limits import Limits, cap_batch
from lightnews.settings import Settings

__all__ = ["ENTRY_POINT_GROUP", "Source", "get_source_class", "registry"]

ENTRY_POINT_GROUP = "lightnews.sources"


class Source(ABC):
    """One kind of source. Subclasses set ``kind`` and ``summary`` and implement ``parse``."""

    kind: ClassVar[str]
    summary: ClassVar[str]
    #: Whether ``refresh`` may fetch it (replay-only kinds read files only).
    fetchable: ClassVar[bool] = True

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
        """:meth:`parse`, then every field cut to its size cap (what the pipeline stores).

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


def get_source_class(kind: str) -> type[Source]:
    kinds = registry()
    if kind not in kinds:
        known = ", ".join(kinds) or "none (is lightnews installed with pip?)"
        raise UsageError(f"unknown source kind {kind!r}; installed kinds: {known}")
    return kinds[kind]
