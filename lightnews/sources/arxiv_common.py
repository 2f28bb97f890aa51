"""What every arXiv format shares: ids, withdrawn notices, arXiv's date format.

The API, OAI-PMH (``arXiv`` and ``arXivRaw``), the metadata snapshot and the
``.abs`` files all describe the same papers slightly differently; these
helpers make them agree.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable
from datetime import date

from lightnews.normalize.text import iso_utc

__all__ = [
    "ARXIV_HOSTS",
    "announcement_day",
    "batch_fingerprint",
    "is_withdrawn",
    "rfc2822_utc",
    "small_int",
    "split_categories",
]

ARXIV_HOSTS = ("export.arxiv.org", "arxiv.org", "oaipmh.arxiv.org", "rss.arxiv.org")

_WITHDRAWN_RE = re.compile(
    r"\b(?:(?:this|the) (?:paper|article|submission|manuscript|work) (?:has been|is|was) "
    r"withdrawn|withdrawn by (?:the )?(?:author|arxiv|submitter)|paper withdrawn|"
    r"^withdrawn\b)",
    re.I,
)
_MONTHS = {
    m: i
    for i, m in enumerate(
        ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"],
        start=1,
    )
}
_RFC_RE = re.compile(
    r"^(?:\w{3},\s*)?(\d{1,2}) (\w{3}) (\d{4}) (\d{2}):(\d{2}):(\d{2}) (?:GMT|UTC|\+0000)$"
)


_SMALL_INT_RE = re.compile(r"[0-9]{1,9}")


def small_int(text: str | None) -> int | None:
    """``text`` as a count or version number: one to nine ASCII digits, else None.

    A version "v" followed by 4,301 digits is not a version (and more than
    ``int`` reads); superscripts pass ``str.isdigit`` but are not numbers.
    """
    text = (text or "").strip()
    return int(text) if _SMALL_INT_RE.fullmatch(text) else None


def is_withdrawn(comments: str | None) -> bool:
    """Whether arXiv's comments field carries a withdrawal notice."""
    return bool(comments) and _WITHDRAWN_RE.search(comments or "") is not None


def rfc2822_utc(text: str | None) -> str | None:
    """``Mon, 2 Apr 2007 19:18:42 GMT`` -> ``2007-04-02T19:18:42Z`` (fast path for arXiv)."""
    if not text:
        return None
    match = _RFC_RE.match(text.strip())
    if match and match[2] in _MONTHS:
        day, month, year, hh, mm, ss = match.groups()
        return f"{year}-{_MONTHS[month]:02d}-{int(day):02d}T{hh}:{mm}:{ss}Z"
    return iso_utc(text)


def split_categories(text: str | None, primary: str | None = None) -> list[str]:
    """Space-separated categories, primary first, without duplicates."""
    seen: list[str] = [primary] if primary else []
    for category in (text or "").split():
        if category not in seen:
            seen.append(category)
    return seen


def announcement_day(day: str) -> bool:
    """Whether arXiv announces new papers on ``day`` (``YYYY-MM-DD``, UTC): Monday to Friday.

    Listings go out Sunday to Thursday at 20:00 US Eastern, which is Monday to
    Friday in UTC; a batch on a weekend day may rightly repeat Friday's.
    """
    try:
        return date.fromisoformat(day[:10]).weekday() < 5
    except ValueError:
        return False


def batch_fingerprint(arxiv_ids: Iterable[str]) -> str:
    """A short digest of a listing's ids: the same batch served twice has the same one."""
    return hashlib.blake2b(" ".join(sorted(arxiv_ids)).encode(), digest_size=8).hexdigest()
