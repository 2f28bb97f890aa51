"""Checks of what people type, in one place for the command line and the web forms.

A handle with a space, an ORCID iD with a wrong check digit, ``cs.XX`` or
``2025-13-45`` must not become a scholar, a source or an empty answer: each is
refused where it was typed, with what is wrong and what would be right
(``UsageError``: exit status 2 on the command line, HTTP 400 on the web with
the form kept). Every check here is a pure function of the text (and of the
current time, for relative dates) that returns the value in its canonical
form, so the CLI and the web accept exactly the same things.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Collection
from datetime import UTC, date, datetime, timedelta

from lightnews.errors import PastLastPage, UsageError
from lightnews.normalize.arxiv_categories import ARCHIVES, CATEGORIES, LEGACY, OAI_SETS
from lightnews.normalize.arxiv_ids import ArxivId, parse_arxiv_reference
from lightnews.normalize.urls import safe_url

__all__ = [
    "arxiv_author",
    "arxiv_category",
    "bluesky_handle",
    "date_range",
    "day",
    "feed_address",
    "moment",
    "notes_address",
    "oai_set",
    "orcid",
    "page_in_range",
    "paper_id",
    "search_date",
    "source_kind",
    "story_key",
    "web_address",
    "whole_number",
]

# -- people ----------------------------------------------------------------------------

_LABEL = re.compile(r"^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$")
_DID = re.compile(r"^did:[a-z]+:[a-zA-Z0-9._:%-]*[a-zA-Z0-9._-]$")
_PROFILE = re.compile(r"^(?:https?://)?(?:www\.)?bsky\.app/profile/([^/?#\s]+)/?(?:[?#].*)?$", re.I)
HANDLE_EXAMPLE = "someone.bsky.social"


def bluesky_handle(text: str, *, by_name: str = "--arxiv-author") -> str:
    """A Bluesky handle (``@`` optional), DID or profile address, checked per the AT Protocol.

    Returns the handle lower-cased without its ``@`` (a DID as written).
    ``by_name`` is how the caller's user follows someone by name instead (an
    option, a form field), named in the message when a name was typed.
    """
    raw = text.strip()
    profile = _PROFILE.match(raw)  # a profile's address names the handle (or DID)
    value = profile[1] if profile else raw.removeprefix("@")
    if value.startswith("did:"):
        if len(value) > 2048 or not _DID.match(value):
            raise UsageError(
                f"{raw!r} is not a DID: a DID looks like did:plc:abc123... "
                "(letters and digits after did:METHOD:)"
            )
        return value
    problem = _handle_problem(value.lower())
    if problem is None:
        return value.lower()
    message = f"{raw!r} is not a Bluesky handle: {problem}"
    if re.search(r"\s", value) or ("." not in value and any(c.isalpha() for c in value)):
        message += f'. To follow an arXiv author by name, use {by_name} "{value.strip()}"'
    else:
        message += f". A handle looks like @{HANDLE_EXAMPLE}"
    raise UsageError(message)


def _handle_problem(handle: str) -> str | None:
    """What makes ``handle`` not a handle (AT Protocol handle syntax), or None."""
    if not handle:
        return "it is empty"
    if re.search(r"\s", handle):
        return "a handle has no spaces"
    if len(handle) > 253:
        return "a handle has at most 253 characters"
    bad = sorted({c for c in handle if not (c.isascii() and (c.isalnum() or c in ".-"))})
    if bad:
        shown = " ".join(repr(c) for c in bad)
        return f"a handle has only letters, digits, dots and hyphens (not {shown})"
    labels = handle.split(".")
    if len(labels) < 2:
        return "a handle is a domain name with at least one dot"
    if any(not label for label in labels):
        return "a handle has no empty parts (two dots in a row, or a dot at an end)"
    for label in labels:
        if not _LABEL.match(label):
            return (
                f"{label!r}: each part has 1 to 63 characters and does not start or end "
                "with a hyphen"
            )
    if labels[-1][0].isdigit():
        return "its last part (the top-level domain) does not start with a digit"
    return None


def _check_digit(digits: str) -> str:
    """ISO 7064 MOD 11-2 check character of ORCID's first 15 digits."""
    total = 0
    for digit in digits:
        total = (total + int(digit)) * 2
    result = (12 - total % 11) % 11
    return "X" if result == 10 else str(result)


ORCID_EXAMPLE = "0000-0002-1825-0097"


def orcid(text: str) -> str:
    """An ORCID iD (bare, with or without hyphens, or its orcid.org URL) with its check digit.

    Returns it as ``0000-0002-1825-0097``.
    """
    raw = text.strip()
    value = re.sub(r"^(?:https?://)?(?:www\.)?orcid\.org/", "", raw, flags=re.I).strip("/")
    compact = value.replace("-", "").upper()
    if not re.fullmatch(r"\d{15}[\dX]", compact):
        raise UsageError(
            f"{raw!r} is not an ORCID iD: an ORCID iD has 16 digits (the last may "
            f"be X) in groups of four, like {ORCID_EXAMPLE}"
        )
    formatted = "-".join(compact[i : i + 4] for i in range(0, 16, 4))
    expected = _check_digit(compact[:15])
    if compact[15] != expected:
        raise UsageError(
            f"{formatted} is not an ORCID iD: its check digit is wrong (with these first "
            f"15 digits it would end in {expected}); look for a typo"
        )
    return formatted


def arxiv_author(text: str) -> str:
    """An author's name as arXiv writes it (``Sepp Hochreiter``), spaces tidied."""
    name = " ".join(text.split())
    if not any(c.isalpha() for c in name):
        raise UsageError(
            f"{text!r} is not a name: give an author's name as arXiv lists it, "
            'like "Sepp Hochreiter"'
        )
    if name.startswith("@") or name.startswith("did:"):
        raise UsageError(
            f"{name!r} is a Bluesky handle, not a name: follow it as a handle "
            f"(lightnews follow {name})"
        )
    if len(name) > 200:
        raise UsageError("an author's name has at most 200 characters")
    return name


# -- arXiv's subjects --------------------------------------------------------------------

_BY_FOLDED = {code.lower(): code for code in (*CATEGORIES, *LEGACY)}
_ARCHIVES_FOLDED = {code.lower(): code for code in ARCHIVES}


def arxiv_category(text: str, *, archives: bool = False) -> str:
    """An arXiv category (``cs.LG``; case does not matter) or, with ``archives``, ``cs``.

    A category that does not exist is refused with the closest real ones.
    """
    raw = text.strip()
    folded = raw.lower()
    if folded in _BY_FOLDED:
        return _BY_FOLDED[folded]
    if folded in _ARCHIVES_FOLDED:
        archive = _ARCHIVES_FOLDED[folded]
        if archives:
            return archive
        examples = ", ".join(_in_archive(archive)[:4])
        raise UsageError(
            f"{archive} is a whole archive, not a category: follow categories "
            f"of it ({examples}, ...) or harvest all of it with --oai-set "
            f"{archive.partition('.')[0]}"
        )
    what = "an arXiv category or archive" if archives else "an arXiv category"
    if not raw:
        raise UsageError(f"give {what}, like cs.LG")
    raise UsageError(f"{raw!r} is not {what}; {_closest(raw)}")


def _in_archive(archive: str) -> list[str]:
    return [code for code in CATEGORIES if code.partition(".")[0] == archive]


def _initials(name: str) -> str:
    """``Machine Learning`` -> ``ml``: what a category's code often is mistaken for."""
    return "".join(w[0] for w in re.findall(r"[A-Za-z]+", name) if w[0].isupper()).lower()


def _closest(raw: str) -> str:
    """The nearest real categories to ``raw``, said as a suggestion."""
    archive, _, subject = raw.lower().partition(".")
    known = _ARCHIVES_FOLDED.get(archive)
    found: list[str] = []
    if subject:
        # The name's initials (cs.ML: Machine Learning is cs.LG), in the archive first;
        # then the same subject in another archive (stat.ML).
        found += sorted(
            (c for c, name in CATEGORIES.items() if _initials(name) == subject),
            key=lambda c: c.partition(".")[0] != known,
        )
        found += [c for c in CATEGORIES if c.partition(".")[2].lower() == subject]
    if known and subject:  # one letter off, in the archive asked for
        subjects = {code.partition(".")[2].lower(): code for code in _in_archive(known)}
        close = difflib.get_close_matches(subject, list(subjects), n=3, cutoff=0.5)
        found += [subjects[s] for s in close]
    if not known:
        close = difflib.get_close_matches(raw.lower(), list(_BY_FOLDED), n=3, cutoff=0.6)
        found += [_BY_FOLDED[c] for c in close]
    found = list(dict.fromkeys(found))[:4]
    if found:
        return (
            "did you mean "
            + " or ".join(f"{c} ({CATEGORIES.get(c) or LEGACY[c]})" for c in found)
            + "?"
        )
    if known:
        return f"the categories of {known} are {', '.join(_in_archive(known))}"
    return "see https://arxiv.org/category_taxonomy for the list (cs.LG, stat.ML, ...)"


def oai_set(text: str) -> str:
    """A set arXiv's OAI-PMH interface harvests (``cs``, ``physics:hep-th``)."""
    raw = text.strip()
    for name in OAI_SETS:
        if name.lower() == raw.lower():
            return name
    close = difflib.get_close_matches(raw.lower(), list(OAI_SETS), n=3, cutoff=0.5)
    hint = f"did you mean {' or '.join(close)}?" if close else f"the sets are {', '.join(OAI_SETS)}"
    if raw.lower() in _BY_FOLDED:
        hint = f"{raw} is a category: follow it with --category {raw}, or harvest its archive"
    raise UsageError(f"{raw!r} is not an arXiv OAI-PMH set; {hint}")


def web_address(text: str, what: str = "a web address") -> str:
    """An http(s) URL as typed (``HTTP://`` in capitals too), in the one form the store
    keeps URLs in (:func:`~lightnews.normalize.urls.safe_url`: no ``javascript:``, no
    user name in it)."""
    url = safe_url(text)
    if url is None:
        raise UsageError(f"{what} must be an http(s) URL, not {text.strip()[:80]!r}")
    return url


def feed_address(text: str) -> str:
    """The address of a feed to follow: :func:`web_address`."""
    return web_address(text, "a feed address")


def notes_address(text: str) -> str:
    """The address of a notes page to follow: :func:`web_address`."""
    return web_address(text, "a notes page")


def source_kind(text: str, kinds: Collection[str]) -> str:
    """One of the installed ``kinds`` of source (``bluesky``, ``feed``, ...)."""
    kind = text.strip()
    if kind not in kinds:
        raise UsageError(
            f"{kind[:40]!r} is not a kind of source; the kinds are {', '.join(sorted(kinds))}"
        )
    return kind


# -- papers and stories ------------------------------------------------------------------


def paper_id(text: str) -> ArxivId:
    """An arXiv paper as typed: ``2510.03172``, ``arXiv:2510.03172v2`` or one of its URLs."""
    parsed = parse_arxiv_reference(text)
    if parsed is None:
        raise UsageError(
            f"{text.strip()[:80]!r} is not an arXiv paper: give its id "
            "(2510.03172, hep-th/9901001) or its address "
            "(https://arxiv.org/abs/2510.03172)"
        )
    return parsed


def story_key(text: str) -> str:
    """A story as typed: a paper (any form :func:`paper_id` takes) or ``item:ID``."""
    raw = text.strip()
    if raw.lower().startswith("item:"):
        return f"item:{whole_number(raw[5:], 'an item id (item:ID)')}"
    parsed = parse_arxiv_reference(raw)
    if parsed is None:
        raise UsageError(
            f"{raw[:80]!r} is not a story: give a paper's arXiv id or address "
            "(2510.03172), or item:ID for an entry without a paper"
        )
    return parsed.base


# -- numbers and pages -------------------------------------------------------------------

MAX_ID = 2**63 - 1  # the largest row id a database keeps


def whole_number(raw: str, what: str, most: int = MAX_ID) -> int:
    """``raw`` as a number from 1 to ``most``, or a UsageError that says what was expected."""
    text = raw.strip()
    if not text.isascii() or not text.isdigit() or len(text) > 19 or not 1 <= int(text) <= most:
        raise UsageError(f"{what} must be a whole number from 1 to {most:,}, got {raw[:40]!r}")
    return int(text)


def page_in_range(page: int, pages: int, what: str = "pages") -> int:
    """``page`` when it is one of ``pages``; else say how many there are."""
    if page < 1:
        raise UsageError(f"pages are numbered from 1, got {page}")
    if page > pages:
        there = "there is only 1 page" if pages == 1 else f"there are {pages:,} pages"
        raise PastLastPage(f"page {page:,} is past the end: {there} of {what}")
    return page


# -- dates -------------------------------------------------------------------------------

_RELATIVE = re.compile(r"^(\d{1,5})\s*(h|d|w)$")
_UNITS = {"h": 1, "d": 24, "w": 24 * 7}
DATE_FORMS = "12h, 1d, 2w, today, yesterday or a date like 2025-01-31"


def moment(text: str, now: datetime) -> datetime:
    """A moment as typed: ``12h``, ``1d``, ``2w`` ago, ``today``, ``yesterday``, or a date.

    ``today`` and ``yesterday`` are the start of that day (UTC); a date is its
    start, a date and time is that moment (UTC unless it says otherwise).
    """
    raw = text.strip()
    folded = raw.lower()
    match = _RELATIVE.match(folded)
    if match:
        return now - timedelta(hours=_UNITS[match[2]] * int(match[1]))
    midnight = now.astimezone(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    if folded == "today":
        return midnight
    if folded == "yesterday":
        return midnight - timedelta(days=1)
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}(?:[T ][\d:.]+(?:Z|[+-]\d{2}:?\d{2})?)?", raw):
        raise UsageError(f"{raw[:40]!r} is not a date or a time ago: use {DATE_FORMS}")
    try:
        found = datetime.fromisoformat(raw.replace("Z", "+00:00"))
    except ValueError as error:
        raise UsageError(f"{raw!r} is not a date ({error}): use {DATE_FORMS}") from None
    return found.astimezone(UTC) if found.tzinfo else found.replace(tzinfo=UTC)


def day(text: str) -> str:
    """A calendar day written ``YYYY-MM-DD`` that exists (``2025-13-01`` does not)."""
    raw = text.strip()
    if not re.fullmatch(r"\d{4}-\d{2}-\d{2}", raw):
        raise UsageError(f"{raw[:40]!r} is not a day: write it as YYYY-MM-DD, like 2025-11-27")
    try:
        date.fromisoformat(raw)
    except ValueError as error:
        raise UsageError(
            f"{raw!r} is not a day ({error}): write it as YYYY-MM-DD, like 2025-11-27"
        ) from None
    return raw


def search_date(text: str, now: datetime) -> str:
    """A search's date bound (``YYYY-MM-DD``) from any form :func:`moment` takes."""
    return moment(text, now).strftime("%Y-%m-%d")


def date_range(since: str | None, until: str | None) -> None:
    """A start and an end (``YYYY-MM-DD``) that something can fall between."""
    if since and until and since > until:
        raise UsageError(f"the start {since} is after the end {until}: nothing can match")
