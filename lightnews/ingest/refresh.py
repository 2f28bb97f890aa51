"""Refresh: every due source read in turn, then the stubs, then attributions.

``lightnews refresh`` (and a cron job, and each worker's refresh jobs) walks
the due sources (:func:`due_for_refresh`); each is fetched
(:mod:`lightnews.ingest.fetch`) and its unresolved references looked up online
(:mod:`lightnews.ingest.cited`); then the stubs are resolved
(:mod:`lightnews.ingest.stubs`) and scholars whose papers changed are
attributed again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from lightnews.ingest.cited import lookup_titles_online
from lightnews.ingest.fetch import refresh_source
from lightnews.ingest.page import reattribute
from lightnews.ingest.report import RunReport
from lightnews.ingest.stubs import STUBS, resolve_stubs
from lightnews.normalize.times import iso, utc_now
from lightnews.settings import Settings
from lightnews.sources.http import HttpClient
from lightnews.store import SourceRow, Store

__all__ = [
    "REPLAY_PREFIXES",
    "due_for_refresh",
    "refresh",
    "refresh_one",
]


#: Addresses of sources made by replaying files; ``refresh`` leaves them alone.
REPLAY_PREFIXES = ("file://", "demo:")


def due_for_refresh(
    store: Store, now: str, *, force: bool = False, kinds: list[str] | None = None
) -> list[SourceRow]:
    """The sources a refresh reads now: due ones (all with ``force``) that can be fetched.

    Disabled sources, replays of files and the stubs row (read by
    :func:`resolve_stubs`) are left out.
    """
    rows = store.list_sources() if force else store.due_sources(now, kinds)
    return [
        r
        for r in rows
        if r.enabled
        and (kinds is None or r.kind in kinds)
        and not r.address.startswith(REPLAY_PREFIXES)
        and (r.kind, r.address) != STUBS
    ]


def refresh_one(
    store: Store,
    row: SourceRow,
    client: HttpClient,
    settings: Settings,
    *,
    clock: Callable[[], datetime] = utc_now,
) -> RunReport:
    """One source as a refresh reads it: its pages, then its unresolved references online."""
    report = refresh_source(store, row, client, settings, clock=clock)
    if settings.resolve_online and report.unresolved:
        lookup_titles_online(store, settings, client, row, report, clock=clock)
    return report


def refresh(
    store: Store,
    settings: Settings,
    *,
    client: HttpClient | None = None,
    force: bool = False,
    kinds: list[str] | None = None,
    clock: Callable[[], datetime] = utc_now,
    on_start: Callable[[SourceRow], None] | None = None,
    on_done: Callable[[RunReport], None] | None = None,
) -> list[RunReport]:
    """Refresh every due source (all of them with ``force``), one after another."""
    rows = due_for_refresh(store, iso(clock()), force=force, kinds=kinds)
    reports = []
    own_client = client is None
    http = client or HttpClient(settings)
    try:
        for row in rows:
            if on_start:
                on_start(row)
            report = refresh_one(store, row, http, settings, clock=clock)
            reports.append(report)
            if on_done:
                on_done(report)
        if settings.resolve_online and (kinds is None or "arxiv-api" in kinds):
            reports += resolve_stubs(store, settings, http, force=force, clock=clock)
    finally:
        if own_client:
            http.close()
    reattribute(store, reports)
    return reports
