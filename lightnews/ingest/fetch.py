"""Fetch one source: every page it has for us now, each stored as it comes.

For a source, ask it for its first request, fetch it through the shared polite
client, parse the bytes into a batch, and store the batch's items *and* the
source's new state (ETag, cursor, resumption token) together, page after page
(:func:`~lightnews.ingest.page.store_page`). So a crash loses at most the page
in flight, and the next run resumes from the saved state.

A database that stays busy past the store's wait stops the run with
:class:`~lightnews.errors.Busy` rather than being recorded as the source's
failure: the source is not broken, and the next run reads it again. A source
that fails (network, HTTP status, unreadable payload) gets the error recorded
on its row with a clear message and a next attempt time that backs off
(:mod:`lightnews.ingest.report`); nothing stored is lost.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime

from lightnews.errors import FetchError, LightnewsError, ParseError, Unavailable
from lightnews.ingest.page import store_page
from lightnews.ingest.report import RunReport, failed, succeeded
from lightnews.model import Request
from lightnews.normalize.times import iso, utc_now
from lightnews.settings import Settings
from lightnews.sources import Source, get_source_class
from lightnews.sources.http import HttpClient
from lightnews.store import BACKEND_ERRORS, SourceRow, Store, unavailable

__all__ = [
    "MAX_FOLLOW",
    "MAX_PAGES",
    "refresh_source",
]


MAX_PAGES = 10_000

MAX_FOLLOW = 50


def _source_for(row: SourceRow, settings: Settings) -> Source:
    return get_source_class(row.kind)(row.address, row.params, settings)


def refresh_source(
    store: Store,
    row: SourceRow,
    client: HttpClient,
    settings: Settings,
    *,
    source: Source | None = None,
    clock: Callable[[], datetime] = utc_now,
    on_page: Callable[[RunReport], None] | None = None,
) -> RunReport:
    """Fetch every page a source has for us now; record the outcome on its row."""
    report = RunReport(row.id, row.kind, row.address)
    started = clock()
    store.record_attempt(row.id, iso(started))
    try:
        source = source or _source_for(row, settings)
        if not source.fetchable:
            raise LightnewsError(f"source kind {row.kind} can only be read from a file")
        for host, seconds in source.host_interval(settings).items():
            client.set_host_interval(host, seconds)
        state = row.state
        request = source.first_request(state)
        follow: list[Request] = []
        while request is not None and report.pages < MAX_PAGES:
            response = client.get(
                request.url,
                params=request.params or None,
                etag=state.etag if request.conditional else None,
                last_modified=state.last_modified if request.conditional else None,
            )
            report.pages += 1
            if response.not_modified:
                report.not_modified = True
                break
            batch = source.read(response.body, state, url=response.url)
            new_state = batch.state or state
            if request.conditional:
                new_state.etag = response.etag or new_state.etag
                new_state.last_modified = response.last_modified or new_state.last_modified
            batch.state = new_state
            store_page(store, row, batch, report, iso(clock()), settings)
            follow.extend(r for r in batch.follow if r not in follow)
            state = new_state
            request = batch.next
            if on_page:
                on_page(report)
        # Requests a page called for (a thread's missing posts): best effort, no paging.
        for extra in follow[:MAX_FOLLOW]:
            try:
                response = client.get(extra.url, params=extra.params or None)
                batch = source.read(response.body, state, url=response.url)
            except (FetchError, ParseError) as error:
                report.saved.warnings.append(f"could not complete from {extra.url}: {error}")
                continue
            batch.state, batch.next, batch.follow = None, None, []
            report.pages += 1
            store_page(store, row, batch, report, iso(clock()), settings)
    except Unavailable:
        raise  # the database, not the source: nothing to record on it (see the docstring)
    except BACKEND_ERRORS as error:
        raise unavailable(error) from error
    except FetchError as error:
        message = str(error)
        detail = source.describe_error(error.body) if source and error.body else None
        if detail:
            message = f"{message}: {detail}"
        return failed(store, row, report, message, settings, clock(), error.retry_after)
    except (ParseError, LightnewsError) as error:
        return failed(store, row, report, str(error), settings, clock(), None)
    except Exception as error:  # a parser bug must not stop the other sources
        message = f"internal error while reading this source: {type(error).__name__}: {error}"
        return failed(store, row, report, message, settings, clock(), None)
    return succeeded(store, row, report, settings, clock())
