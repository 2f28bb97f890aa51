"""What happened to one source in one run, and how the outcome is recorded on its row.

A run that stored what it read is a success; problems met in the input (items
cut, links dropped) still show on the row as its error. A run that failed
records the error and a next attempt time that backs off exponentially from a
quarter of the refresh period, doubling per failure (``retry_max_hours`` caps it,
and a server's ``Retry-After`` is respected).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timedelta

from lightnews.model import Item
from lightnews.normalize.times import iso
from lightnews.settings import Settings
from lightnews.store import SaveResult, SourceRow, Store

__all__ = [
    "RunReport",
    "failed",
    "succeeded",
]


@dataclass(slots=True)
class RunReport:
    """What happened to one source in one run."""

    source_id: int
    kind: str
    address: str
    ok: bool = True
    pages: int = 0
    not_modified: bool = False
    saved: SaveResult = field(default_factory=SaveResult)
    error: str | None = None
    next_attempt: str | None = None
    #: Items naming papers by "Surname: short title" that no stored paper matched.
    unresolved: list[Item] = field(default_factory=list)

    def to_json(self) -> dict[str, object]:
        return {
            "source_id": self.source_id,
            "kind": self.kind,
            "url": self.address,
            "ok": self.ok,
            "pages": self.pages,
            "not_modified": self.not_modified,
            "papers_new": self.saved.papers_new,
            "papers_updated": self.saved.papers_updated,
            "items_new": self.saved.items_new,
            "items_updated": self.saved.items_updated,
            "mentions": self.saved.mentions,
            "warnings": self.saved.warnings,
            "error": self.error,
            "next_attempt": self.next_attempt,
        }


def _backoff(settings: Settings, failures: int, retry_after: float | None) -> timedelta:
    """Wait before the next attempt: doubles per failure from one refresh period, capped."""
    base = timedelta(minutes=int(settings.refresh_minutes)) / 4
    wait = min(base * (1 << min(failures, 16)), timedelta(hours=int(settings.retry_max_hours)))
    if retry_after is not None:
        wait = max(wait, timedelta(seconds=retry_after))
    return wait


def succeeded(
    store: Store, row: SourceRow, report: RunReport, settings: Settings, now: datetime
) -> RunReport:
    """Record a run that stored what it read; problems in the input still show as errors."""
    next_attempt = iso(now + timedelta(minutes=int(settings.refresh_minutes)))
    report.next_attempt = next_attempt
    store.record_success(row.id, iso(now), next_attempt, clean=not report.saved.warnings)
    if report.saved.warnings:
        problems = list(dict.fromkeys(report.saved.warnings))
        message = "; ".join(problems[:3]) + (
            f" (and {len(problems) - 3} more)" if len(problems) > 3 else ""
        )
        store.record_failure(row.id, message, iso(now), next_attempt)
        report.ok = False
        report.error = message
    return report


def failed(
    store: Store,
    row: SourceRow,
    report: RunReport,
    message: str,
    settings: Settings,
    now: datetime,
    retry_after: float | None,
) -> RunReport:
    next_attempt = iso(now + _backoff(settings, row.error_count, retry_after))
    store.record_failure(row.id, message, iso(now), next_attempt)
    report.ok = False
    report.error = message
    report.next_attempt = next_attempt
    return report
