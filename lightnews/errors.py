"""The exception tree, drawn once.

Exceptions are for situations a caller can act on; bad data from a source is
*recorded* on the source's row (see :mod:`lightnews.ingest.fetch`), never allowed
to stop a run. Every exception Lightnews raises on purpose derives from
:class:`LightnewsError`::

    LightnewsError
    ├── FetchError        the network or the server did not give us the bytes
    │   ├── TooLarge      the body went over the size cap
    │   └── Blocked       the address is not one we may reach (private network)
    ├── ParseError        bytes we fetched are not the format they claim to be
    ├── NotFound          a paper, source or scholar that is not stored
    ├── UsageError        a command or argument that cannot be carried out
    │   ├── Ambiguous     several things match what was asked for: choose one
    │   ├── PastLastPage  a page number after the last page (404 on the web)
    │   └── TooExpensive  a query that would cost more than its budget: narrow it
    ├── Unavailable       the database could not carry out a read or write (disk, damage)
    │   └── Busy          another writer held the database past the bounded wait: retry
    └── SettingError      a setting with an invalid value
"""

from __future__ import annotations

from collections.abc import Iterable

__all__ = [
    "Ambiguous",
    "Blocked",
    "Busy",
    "FetchError",
    "LightnewsError",
    "NotFound",
    "ParseError",
    "PastLastPage",
    "SettingError",
    "TooExpensive",
    "TooLarge",
    "Unavailable",
    "UsageError",
]


class LightnewsError(Exception):
    """Base of every error Lightnews raises on purpose."""


class FetchError(LightnewsError):
    """A request failed: connection, timeout, HTTP status or a broken body.

    ``status`` is the HTTP status when there was one; ``retry_after`` is the
    number of seconds the server asked us to wait, when it asked; ``body`` is
    what the server sent with an error status (services explain errors there).
    """

    def __init__(
        self,
        message: str,
        *,
        status: int | None = None,
        retry_after: float | None = None,
        body: bytes = b"",
    ) -> None:
        super().__init__(message)
        self.status = status
        self.retry_after = retry_after
        self.body = body


class TooLarge(FetchError):
    """The response body is larger than the configured cap."""


class Blocked(FetchError):
    """The URL points at an address Lightnews refuses to reach."""


class ParseError(LightnewsError):
    """A payload could not be read as the format its source expects."""


class NotFound(LightnewsError):
    """The asked-for object is not stored."""


class UsageError(LightnewsError):
    """A request that cannot be carried out as given (bad id, unknown kind...)."""


class Ambiguous(UsageError):
    """Several things match what was asked for (part of a name); ``choices`` lists them.

    Each choice is ``(key, label)``: the key asks for that one alone (a scholar's
    id), the label says who or what it is.
    """

    def __init__(self, message: str, choices: Iterable[tuple[str, str]]) -> None:
        super().__init__(message)
        self.choices = tuple(choices)


class TooExpensive(UsageError):
    """A query asks for more work than one request may do (too many terms, over its time)."""


class Unavailable(LightnewsError):
    """The database could not carry out a read or a write (full disk, damaged file...).

    The operation was rolled back: a write either happened whole or not at all.
    """


class Busy(Unavailable):
    """Another writer kept the database locked for longer than the bounded wait."""


class SettingError(LightnewsError):
    """A setting has a value that does not pass its validation."""


class PastLastPage(UsageError):
    """A page number after the last page: the CLI exits 2, the web answers 404."""
