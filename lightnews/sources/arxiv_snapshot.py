"""Bulk import of arXiv's metadata snapshot (``arxiv-metadata-oai-snapshot.json``).

The widely used snapshot is JSON Lines, one paper per line with the fields
``id, submitter, authors, title, comments, journal-ref, doi, report-no,
categories, license, abstract, versions, update_date, authors_parsed``. It
holds all of arXiv (about 2.7 million records, several GB), so it is read
line by line in constant memory and turned into papers in batches; a broken
line is counted and reported, never fatal.

This is the hot loop of a full import (``bench/snapshot_import.py``); what
keeps it fast is :func:`~lightnews.normalize.tex.tex_to_unicode`'s path for
text without TeX markup (most titles, abstracts and names), which only
collapses whitespace.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

import orjson

from lightnews.errors import ParseError
from lightnews.model import Paper, Version
from lightnews.normalize.arxiv_ids import parse_arxiv_id
from lightnews.normalize.names import author_from_parts, split_author_list
from lightnews.normalize.tex import tex_to_unicode
from lightnews.sources.arxiv_common import is_withdrawn, rfc2822_utc, small_int

__all__ = ["SnapshotErrors", "iter_snapshot", "paper_from_snapshot"]


@dataclass(slots=True)
class SnapshotErrors:
    """Lines that could not be read, with the first few messages kept for the user."""

    count: int = 0
    examples: list[str] = field(default_factory=list)

    def add(self, line_number: int, message: str) -> None:
        self.count += 1
        if len(self.examples) < 10:
            self.examples.append(f"line {line_number}: {message}")


def _str(value: Any) -> str:
    return value if isinstance(value, str) else ""


def _clean(value: Any) -> str | None:
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    return text or None


def paper_from_snapshot(record: dict[str, Any]) -> Paper:
    """One snapshot record as a paper (raises ParseError when it has no usable id)."""
    raw_id = record.get("id")
    parsed = parse_arxiv_id(raw_id) if isinstance(raw_id, str) else None
    if parsed is None:
        raise ParseError(f"no valid arXiv id in {raw_id!r}")
    versions = []
    for entry in record.get("versions") or ():
        label = entry.get("version") if isinstance(entry, dict) else None
        number = small_int(label[1:]) if isinstance(label, str) else None
        if number is not None:
            created = entry.get("created")
            versions.append(
                Version(number, rfc2822_utc(created if isinstance(created, str) else None))
            )
    versions.sort(key=lambda v: v.number)
    parts = record.get("authors_parsed")
    if isinstance(parts, list) and parts:
        authors = [
            author_from_parts(
                p[0], _str(p[1]) if len(p) > 1 else None, _str(p[2]) if len(p) > 2 else None
            )
            for p in parts
            if isinstance(p, list) and p and isinstance(p[0], str) and p[0]
        ]
    else:
        authors = split_author_list(_str(record.get("authors")))
    comments = _clean(record.get("comments"))
    update_date = record.get("update_date")
    updated = versions[-1].date if versions else None
    if not updated and isinstance(update_date, str) and len(update_date) == 10:
        updated = f"{update_date}T00:00:00Z"
    return Paper(
        arxiv_id=parsed.base,
        title=tex_to_unicode(_str(record.get("title"))),
        abstract=tex_to_unicode(_str(record.get("abstract"))),
        authors=authors,
        categories=_str(record.get("categories")).split(),
        published=versions[0].date if versions else updated,
        updated=updated,
        versions=versions,
        doi=_clean(record.get("doi")),
        journal_ref=_clean(record.get("journal-ref")),
        comments=comments,
        license=_clean(record.get("license")),
        submitter=_clean(record.get("submitter")),
        withdrawn=is_withdrawn(comments),
    )


def iter_snapshot(stream: IO[bytes], errors: SnapshotErrors) -> Iterator[Paper]:
    """Papers of a snapshot stream, one line at a time; bad lines go to ``errors``."""
    for number, line in enumerate(stream, start=1):
        if not line.strip():
            continue
        try:
            record = orjson.loads(line)
            if not isinstance(record, dict):
                raise ParseError("line is not a JSON object")
            yield paper_from_snapshot(record)
        except orjson.JSONDecodeError as error:
            errors.add(number, f"not valid JSON ({error})")
        except ParseError as error:
            errors.add(number, str(error))
        except (TypeError, ValueError, AttributeError, IndexError) as error:
            errors.add(number, f"unexpected record shape ({error})")
