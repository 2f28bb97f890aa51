"""Paper merge rules, shared by every storage backend.

A paper arrives from many places (an arXiv listing, an OAI-PMH harvest, a
daily-papers entry, a stub named by a post), often more than once. What the
library keeps of it is decided here, without a database, so that every
backend stores the same thing for the same records: the newer record (by
version, then update time) wins field by field, gaps are filled from the
other, versions are the union of both, the earliest publication date stays,
a text that is the stored one cut short never replaces it
(:mod:`lightnews.store.downgrade`), and a *stub* (a paper known only by its
id) never overwrites metadata.

A backend prepares each paper with :func:`prepare_paper` (pure: a bulk import
does it in its parsing workers), inserts the values as they are when the
paper is new, and calls :func:`merged_values` with its stored row otherwise.
The content hash says whether anything changed.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import orjson

from lightnews.model import Paper
from lightnews.normalize.names import name_key
from lightnews.store.downgrade import PAPER_TEXT_FIELDS, cut_short

__all__ = [
    "PAPER_COLUMNS",
    "PreparedPaper",
    "hash_values",
    "is_stub",
    "latest_by_id",
    "merge_versions",
    "merged_values",
    "prepare_paper",
    "prepared_key",
    "to_json",
]

#: The stored columns of a paper, in the order :func:`prepare_paper` gives their values.
PAPER_COLUMNS = (
    "arxiv_id",
    "title",
    "abstract",
    "authors",
    "primary_category",
    "categories",
    "published",
    "updated",
    "versions",
    "latest_version",
    "doi",
    "journal_ref",
    "comments",
    "license",
    "submitter",
    "withdrawn",
    "content_hash",
)


def to_json(value: Any) -> str:
    return orjson.dumps(value).decode()


def hash_values(values: Sequence[Any]) -> str:
    return hashlib.blake2b(orjson.dumps(values), digest_size=12).hexdigest()


def _version_key(row: Mapping[str, Any]) -> tuple[int, str]:
    """Which of two records of a paper is newer: by version, then update time."""
    return (row["latest_version"] or 0, row["updated"] or "")


def merge_versions(a: Iterable[Sequence[Any]], b: Iterable[Sequence[Any]]) -> list[list[Any]]:
    """Versions ``[number, date, size]`` of both, by number; ``a``'s fields win, gaps filled."""
    merged: dict[int, list[Any]] = {int(v[0]): list(v) for v in a}
    for number, date, size in b:
        known = merged.get(number)
        if known is None:
            merged[number] = [number, date, size]
        else:
            known[1] = known[1] or date
            known[2] = known[2] or size
    return [merged[n] for n in sorted(merged)]


#: A paper as the store writes it, built without a database by :func:`prepare_paper`:
#: its ``PAPER_COLUMNS`` values (content hash last) and its authorship rows without
#: the paper's row id: ``(position, name, name_key, keyname, forenames, affiliations)``.
#: Only strings, integers and None: it survives a JSON round trip (lists for tuples).
PreparedPaper = tuple[Sequence[Any], Sequence[Sequence[Any]]]
_TITLE, _AUTHORS, _PUBLISHED, _UPDATED, _VERSIONS, _LATEST, _WITHDRAWN = (
    PAPER_COLUMNS.index(c)
    for c in ("title", "authors", "published", "updated", "versions", "latest_version", "withdrawn")
)


def prepare_paper(paper: Paper) -> PreparedPaper:
    """The row values and authorship rows of ``paper`` as if nothing were stored yet.

    Pure (no database, no store), so a bulk import builds them in its parsing
    worker; :meth:`~lightnews.store.writes.WriteQueries.save_prepared` inserts
    them as they are when the paper is new, and merges them over the stored row
    otherwise. A stub (no title) is prepared too: its id and version decide
    between duplicates.
    """
    numbers = [v.number for v in paper.versions]
    if numbers == sorted(set(numbers)):  # in order, no repeats: nothing to merge
        versions = [[v.number, v.date, v.size] for v in paper.versions]
    else:
        versions = merge_versions((), ((v.number, v.date, v.size) for v in paper.versions))
    authors = paper.authors
    values = (
        paper.arxiv_id,
        paper.title,
        paper.abstract,
        ", ".join([a.name for a in authors]),
        paper.primary_category,
        " ".join(paper.categories),
        paper.published,
        paper.updated,
        to_json(versions),
        (versions[-1][0] or None) if versions else None,  # the latest version
        paper.doi,
        paper.journal_ref,
        paper.comments,
        paper.license,
        paper.submitter,
        int(paper.withdrawn),
    )
    authorships = [
        (
            position,
            a.name,
            name_key(a.name, a.keyname),
            a.keyname,
            a.forenames,
            "; ".join(a.affiliations) or None,
        )
        for position, a in enumerate(authors)
    ]
    return (*values, hash_values(values)), authorships


def prepared_key(values: Sequence[Any]) -> tuple[int, str]:
    """:func:`_version_key` of prepared values."""
    return (values[_LATEST] or 0, values[_UPDATED] or "")


def merged_values(
    fresh: Sequence[Any], old: Mapping[str, Any], kept: list[str] | None = None
) -> tuple[Any, ...] | None:
    """Prepared values ``fresh`` merged over the stored row ``old``; None if nothing changes.

    The newer record (by version, then update time) wins field by field and
    gaps are filled from the other; versions are the union of both; a text
    the stored one cut short never replaces it (:mod:`lightnews.store.downgrade`;
    the names of such fields go to ``kept``). A stored stub (no content hash)
    simply takes the fresh values.
    """
    versions = merge_versions(orjson.loads(old["versions"]), orjson.loads(fresh[_VERSIONS]))
    if old["content_hash"] is not None:
        stored = [old[c] for c in PAPER_COLUMNS[:-1]]
        newer_first = prepared_key(fresh) >= _version_key(old)
        first, second = (fresh, stored) if newer_first else (stored, fresh)
        merged = [a if a not in (None, "") else b for a, b in zip(first, second, strict=False)]
        merged[_PUBLISHED] = min(
            (d for d in (fresh[_PUBLISHED], stored[_PUBLISHED]) if d), default=None
        )
        merged[_WITHDRAWN] = first[_WITHDRAWN]
        for name in PAPER_TEXT_FIELDS:
            column = PAPER_COLUMNS.index(name)
            if cut_short(merged[column], old[name]):
                merged[column] = old[name]
                if kept is not None:
                    kept.append(name)
    else:
        merged = list(fresh[:-1])
    merged[_VERSIONS] = to_json(versions)
    merged[_LATEST] = (
        max([v[0] for v in versions] + [fresh[_LATEST] or 0, old["latest_version"] or 0]) or None
    )
    content_hash = hash_values(merged)
    if old["content_hash"] == content_hash:
        return None
    return (*merged, content_hash)


def is_stub(values: Sequence[Any]) -> bool:
    """Prepared values of a paper known only by its id (a stub never overwrites)."""
    return not values[_TITLE]


def latest_by_id(prepared: Iterable[PreparedPaper]) -> dict[str, PreparedPaper]:
    """One prepared paper per id: of the same id twice in one batch, the newer."""
    latest: dict[str, PreparedPaper] = {}
    for paper in prepared:
        known = latest.get(paper[0][0])
        if known is None or prepared_key(paper[0]) >= prepared_key(known[0]):
            latest[paper[0][0]] = paper
    return latest
