"""Stubs: papers known only because something named their id, given their metadata.

A post naming an arXiv paper the library lacks makes the paper a stub at once
(:mod:`lightnews.store.network`); :func:`resolve_stubs` asks arXiv for them in
batches by id, through the stubs' own source row, so an outage backs off like
any source's.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from lightnews.ingest.fetch import refresh_source
from lightnews.ingest.report import RunReport
from lightnews.normalize.times import iso, utc_now
from lightnews.settings import Settings
from lightnews.sources.arxiv_api import ArxivApiSource
from lightnews.sources.http import HttpClient
from lightnews.store import Store

__all__ = [
    "STUBS",
    "STUB_BATCH",
    "STUB_LIMIT",
    "STUB_TRIES",
    "resolve_stubs",
]


#: The source row that resolves stubs, and how many ids it asks arXiv for at once.
STUBS = ("arxiv-api", "stubs")

STUB_BATCH = 50

STUB_LIMIT = 500

#: Times a stub is asked of arXiv before it is left (an id arXiv does not know).
STUB_TRIES = 5


def resolve_stubs(
    store: Store,
    settings: Settings,
    client: HttpClient,
    *,
    force: bool = False,
    clock: Callable[[], datetime] = utc_now,
    batch: int = STUB_BATCH,
) -> list[RunReport]:
    """Fetch the metadata of papers known only because something mentioned their id.

    Politely, in batches by id list through the arXiv API (``batch`` ids a
    request, the shared client keeping arXiv's interval between requests);
    offline (or when arXiv fails) the error is recorded on the stubs row and
    they wait for the next run after its backoff. After a run that went well,
    the next run fetches the stubs made since (a post naming a paper the
    library lacks makes one at once) without waiting a refresh period; stubs
    arXiv did not answer for are asked again once the period is over (at most
    ``STUB_TRIES`` times). Papers that network posts named before posts made
    stubs are made stubs first.
    """
    now = iso(clock())
    row, _ = store.add_source(*STUBS, now=now, title="Papers mentioned before their metadata")
    held = not force and bool(row.next_attempt) and (row.next_attempt or "") > now
    if held and row.error_count:
        return []
    store.add_network_stubs(now)
    ids = store.stub_ids(STUB_LIMIT, max_lookups=1 if held else STUB_TRIES)
    reports = []
    for start in range(0, len(ids), batch):
        chunk = ids[start : start + batch]
        source = ArxivApiSource("id:" + ",".join(chunk), settings=settings)
        report = refresh_source(
            store, store.get_source(row.id), client, settings, source=source, clock=clock
        )
        reports.append(report)
        if not report.ok:
            break
        store.count_lookups(chunk)
    return reports
