"""Normalize: one way to write a moment (UTC, ISO 8601, to the second).

Every time Lightnews stores is written by :func:`iso`, so stored times sort
as text and compare across sources.
"""

from __future__ import annotations

from datetime import UTC, datetime

__all__ = ["iso", "now_iso", "utc_now"]


def utc_now() -> datetime:
    return datetime.now(UTC)


def iso(moment: datetime) -> str:
    """``2026-12-02T16:34:51Z``: the moment in UTC, to the second."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def now_iso() -> str:
    return iso(utc_now())
