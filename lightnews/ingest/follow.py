"""Following: a reader follows a scholar (by handle, arXiv name, ORCID) or an account.

Following by a Bluesky handle or an arXiv author name adds a source reading
them (:func:`follow_scholar`); a reader of a shared instance who may not add
sources follows the scholars who already hold the identities given
(:func:`follow_fetched`). Attributions are recomputed for the scholar
followed (:mod:`lightnews.link.attribution`).

A follow says what happens next (:func:`first_fetch`): when the scholar's new
sources will first be fetched, from their schedule and the worker's tick, or
that the next ``lightnews refresh`` will, where no worker runs.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from lightnews.errors import UsageError
from lightnews.link.attribution import attribute_scholar, parse_name
from lightnews.model import Account
from lightnews.normalize.times import utc_now
from lightnews.settings import Settings, tick_period
from lightnews.store import Store
from lightnews.store.readers import ReaderId

#: Heartbeats a worker may miss and still count as running (as the queue counts them).
MISSED_BEATS = 3

__all__ = [
    "FirstFetch",
    "arxiv_author_query",
    "first_fetch",
    "follow_account",
    "follow_fetched",
    "follow_scholar",
    "unfollow_scholar",
]


def arxiv_author_query(name: str) -> str:
    """arXiv's author search: ``au:Hochreiter_S`` finds "S. Hochreiter" and "Sepp Hochreiter"."""
    parts = parse_name(name)
    surname_words = name.split()[-len(parts.surname.split()) :] if parts.surname else []
    if len(surname_words) == 1 and parts.given and surname_words[0].isalpha():
        return f"au:{surname_words[0]}_{parts.given[0][0].upper()}"
    return f'au:"{name}"'


def follow_scholar(
    store: Store,
    reader: ReaderId,
    now: str,
    *,
    handle: str | None = None,
    arxiv_author: str | None = None,
    orcid: str | None = None,
    scholar_id: int | None = None,
) -> int:
    """``reader`` follows a scholar by Bluesky handle or DID, arXiv name and/or ORCID (idempotent).

    Each identity is tied to ``scholar_id``, to the scholar who already has it,
    or to a new scholar; handles and arXiv names get a source reading them.
    Attributions are recomputed. Returns the scholar's id.
    """
    if handle:
        handle = handle.removeprefix("@").strip()
        kind = "bluesky-did" if handle.startswith("did:") else "bluesky-handle"
        scholar_id = scholar_id or store.scholar_for(kind, handle, f"@{handle}", now)
        store.add_identity(scholar_id, kind, handle)
        store.add_source("bluesky", handle, now=now, scholar_id=scholar_id)
    if arxiv_author:
        name = " ".join(arxiv_author.split())
        scholar_id = scholar_id or store.scholar_for("arxiv-name", name, name, now)
        store.add_identity(scholar_id, "arxiv-name", name)
        store.add_source(
            "arxiv-api", arxiv_author_query(name), now=now, title=name, scholar_id=scholar_id
        )
    if orcid:
        scholar_id = scholar_id or store.scholar_for("orcid", orcid, f"ORCID {orcid}", now)
        store.add_identity(scholar_id, "orcid", orcid)
    if scholar_id is None:
        raise UsageError("give a Bluesky handle, an arXiv author name or an ORCID")
    store.set_followed(reader, scholar_id, True, now)
    attribute_scholar(store, scholar_id)
    return scholar_id


def follow_fetched(
    store: Store,
    reader: ReaderId,
    now: str,
    *,
    handle: str | None = None,
    arxiv_author: str | None = None,
    orcid: str | None = None,
    scholar_id: int | None = None,
) -> tuple[list[int], list[str]]:
    """``reader`` follows a scholar without changing what the instance fetches or who is who.

    A reader of a shared instance who may not add sources (the
    ``readers_add_sources`` setting) follows the scholars who already hold the
    identities given; when none does, one new scholar with them (no source:
    what the library already holds is attributed). No identity is tied to an
    existing scholar and no source is added; ``scholar_id`` (a suggestion naming the
    scholar the account is) is followed instead of a new one. Returns the scholars followed and
    the accounts and authors given that are new to the instance, so not fetched
    (``"@handle"``, ``"arXiv author Name"``), for the reader to be told.
    """
    wanted: list[tuple[str, str]] = []
    if handle:
        handle = handle.removeprefix("@").strip()
        wanted.append(("bluesky-did" if handle.startswith("did:") else "bluesky-handle", handle))
    if arxiv_author:
        wanted.append(("arxiv-name", " ".join(arxiv_author.split())))
    if orcid:
        wanted.append(("orcid", orcid))
    if not wanted:
        raise UsageError("give a Bluesky handle, an arXiv author name or an ORCID")
    found = [store.scholar_by_identity(kind, value) for kind, value in wanted]
    followed = list(dict.fromkeys(s for s in found if s is not None))
    if scholar_id is not None and scholar_id not in followed:
        store.get_scholar(scholar_id)  # NotFound when there is none
        followed.insert(0, scholar_id)
    if not followed:
        kind, value = wanted[0]
        name = f"@{value}" if kind.startswith("bluesky") else value
        if kind == "orcid":
            name = f"ORCID {value}"
        created = store.scholar_for(kind, value, name, now)
        for kind, value in wanted[1:]:
            store.add_identity(created, kind, value)
        followed = [created]
    for scholar_id in followed:
        store.set_followed(reader, scholar_id, True, now)
        attribute_scholar(store, scholar_id)
    unfetched = [
        f"@{value}" if kind.startswith("bluesky") else f"arXiv author {value}"
        for (kind, value), owner in zip(wanted, found, strict=True)
        if owner is None and kind != "orcid"
    ]
    return followed, unfetched


def follow_account(store: Store, reader: ReaderId, account: Account, now: str) -> int:
    """``reader`` follows ``account`` as a scholar with a source reading its posts (idempotent)."""
    did_kind = f"{account.service}-did"
    name = account.name or account.handle or account.id
    scholar_id = store.scholar_for(did_kind, account.id, name, now)
    if account.handle:
        store.add_identity(scholar_id, f"{account.service}-handle", account.handle)
    store.add_source(
        account.service,
        account.handle or account.id,
        now=now,
        title=account.name or None,
        scholar_id=scholar_id,
    )
    store.set_followed(reader, scholar_id, True, now)
    return scholar_id


def unfollow_scholar(store: Store, reader: ReaderId, scholar_id: int, now: str) -> None:
    """``reader`` stops following a scholar (kept); when no reader follows them any more,
    their sources pause (their records stay)."""
    store.set_followed(reader, scholar_id, False, now)
    if not store.get_scholar(scholar_id).followed:  # nobody follows them now
        for source in store.scholar_sources(scholar_id):
            store.set_source_enabled(source.id, False)


@dataclass(frozen=True, slots=True)
class FirstFetch:
    """When a followed scholar's sources are first fetched.

    ``seconds`` is about how long until then (0: now), counted to the worker tick
    that finds the first of them due; ``by_worker`` is whether a worker will (else
    the next ``lightnews refresh`` will, once they are due).
    """

    seconds: int
    by_worker: bool
    sources: int

    @property
    def text(self) -> str:
        if self.by_worker:
            return (
                "First fetch now"
                if self.seconds <= 0
                else (f"First fetch in about {_duration(self.seconds)}")
            )
        if self.seconds <= 0:
            return "First fetch now, on the next `lightnews refresh` (no worker is running)"
        return (
            f"First fetch due in about {_duration(self.seconds)}, on the next "
            "`lightnews refresh` after that (no worker is running)"
        )

    def to_json(self) -> dict[str, Any]:
        return {
            "seconds": self.seconds,
            "by_worker": self.by_worker,
            "sources": self.sources,
            "text": self.text,
        }


def _duration(seconds: int) -> str:
    if seconds < 120:
        return f"{seconds} s"
    if seconds < 7200:
        return f"{round(seconds / 60)} min"
    return f"{round(seconds / 3600)} h"


def first_fetch(
    store: Store, scholar_id: int, settings: Settings, now: datetime | None = None
) -> FirstFetch | None:
    """When the scholar's sources not fetched yet will be; ``None`` when none waits.

    A source waits until its first successful fetch, due at its ``next_attempt``
    (now when it has none; later when a failed try backs off). A worker that runs
    (heard from within its last heartbeats) looks for due sources every
    :func:`~lightnews.settings.tick_period` of ``worker_tick``, on the clock's
    divisions, so the fetch comes at the first tick once the source is due.
    Workers keep the real clock, so ``now`` is the real clock too (not ``clock``).
    """
    now = now or utc_now()
    rows = [store.get_source(ref.id) for ref in store.scholar_sources(scholar_id)]
    pending = [row for row in rows if row.enabled and row.last_success is None]
    if not pending:
        return None
    due = min(
        max(now.timestamp(), datetime.fromisoformat(row.next_attempt).timestamp())
        if row.next_attempt
        else now.timestamp()
        for row in pending
    )
    heard = store.workers_heard(MISSED_BEATS * float(settings.worker_heartbeat))
    if heard:
        period = tick_period(int(settings.worker_tick))
        at = math.ceil(due / period) * period
        return FirstFetch(max(0, math.ceil(at - now.timestamp())), True, len(pending))
    return FirstFetch(max(0, math.ceil(due - now.timestamp())), False, len(pending))
