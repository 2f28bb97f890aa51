"""Replay: a saved response parsed and stored as if its source had fetched it.

``lightnews ingest --from-file`` (and the demo) run the same parse and store
steps as a refresh on bytes read from disk. A replay gets a source row of its
own; one that fails leaves no new row behind.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from pathlib import Path

from lightnews.errors import LightnewsError, Unavailable
from lightnews.ingest.page import reattribute, store_page
from lightnews.ingest.report import RunReport, failed, succeeded
from lightnews.model import SourceState
from lightnews.normalize.times import iso, utc_now
from lightnews.settings import Settings
from lightnews.sources import get_source_class
from lightnews.store import BACKEND_ERRORS, SourceRow, Store, unavailable

__all__ = [
    "ingest_bytes",
    "ingest_file",
]


def ingest_bytes(
    store: Store,
    kind: str,
    address: str,
    body: bytes,
    settings: Settings,
    *,
    clock: Callable[[], datetime] = utc_now,
) -> RunReport:
    """Parse and store a saved response as if ``kind`` had fetched it from ``address``.

    The replay gets a source row of its own (``address`` is usually a
    ``file://`` URL). A replay that fails leaves no new row behind: a file that could
    not be read is not a source every reader would see failing; a row that was there
    before (the file read once already) gets the error, like any other source.
    """
    source_class = get_source_class(kind)
    now = iso(clock())
    row, created = store.add_source(kind, address, now=now)
    report = RunReport(row.id, kind, address, pages=1)
    store.record_attempt(row.id, now)
    try:
        source = source_class(address, row.params, settings)
        batch = source.read(body, SourceState(), url=address)
        batch.state = None  # a replay does not move the source's cursor
        store_page(store, row, batch, report, now, settings)
    except Unavailable:
        raise
    except BACKEND_ERRORS as error:
        raise unavailable(error) from error
    except LightnewsError as error:
        return _replay_failed(store, row, created, report, str(error), settings, clock())
    except Exception as error:
        message = f"internal error while reading this file: {type(error).__name__}: {error}"
        return _replay_failed(store, row, created, report, message, settings, clock())
    reattribute(store, [report])
    return succeeded(store, row, report, settings, clock())


def _replay_failed(
    store: Store,
    row: SourceRow,
    created: bool,
    report: RunReport,
    message: str,
    settings: Settings,
    now: datetime,
) -> RunReport:
    """A replay that failed: its new row goes again, an old one records the error."""
    if not created:
        return failed(store, row, report, message, settings, now, None)
    store.remove_source(row.id)
    report.ok = False
    report.error = message
    return report


def ingest_file(
    store: Store,
    kind: str,
    path: Path,
    settings: Settings,
    *,
    clock: Callable[[], datetime] = utc_now,
) -> RunReport:
    """Replay a saved response from ``path`` (see :func:`ingest_bytes`)."""
    body = path.read_bytes()
    return ingest_bytes(store, kind, path.resolve().as_uri(), body, settings, clock=clock)
