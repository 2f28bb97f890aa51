"""Bulk import: stream arXiv's metadata snapshot into the store.

All of arXiv is about 2.7 million records in one multi-gigabyte JSON Lines
file. It is cut into line-aligned byte ranges, parsed into papers, and
written in large transactions through the store's normal merge path, so a
re-import skips what is unchanged and memory stays flat whatever the file
size. By default one worker process reads and parses the ranges while the
main process writes, so the two overlap; the writer is the bottleneck
(``docs/benchmarks.md``), so the main process does nothing else: it never
reads the file (it only seeks to find line ends) and it receives papers as
plain tuples, which pickle several times faster than dataclasses.

The cyclic garbage collector is paused for the import (in the worker too):
the millions of short-lived papers it allocates form no cycles, and the
collector's passes over them cost a third of the writer's time.
"""

from __future__ import annotations

import gc
import io
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any

from lightnews.model import Author, Paper, Version
from lightnews.sources.arxiv_snapshot import SnapshotErrors, iter_snapshot
from lightnews.store import SaveResult, SQLiteStore

__all__ = ["ImportSummary", "import_snapshot"]

CHUNK_BYTES = 4 * 1024 * 1024
INFLIGHT = 2  # parsed chunks waiting for the writer, per worker: bounds memory

# A paper crosses the process boundary as a tuple of its fields in order.
_AuthorTuple = tuple[str, str | None, str | None, str | None, list[str]]
_VersionTuple = tuple[int, str | None, str | None]
_PaperTuple = tuple[
    str,
    str,
    str,
    list[_AuthorTuple],
    list[str],
    str | None,
    str | None,
    list[_VersionTuple],
    str | None,
    str | None,
    str | None,
    str | None,
    str | None,
    bool,
]
_Parsed = tuple[list[_PaperTuple], SnapshotErrors, int]

_LAYOUT = {
    Paper: (
        "arxiv_id",
        "title",
        "abstract",
        "authors",
        "categories",
        "published",
        "updated",
        "versions",
        "doi",
        "journal_ref",
        "comments",
        "license",
        "submitter",
        "withdrawn",
    ),
    Author: ("name", "keyname", "forenames", "suffix", "affiliations"),
    Version: ("number", "date", "size"),
}
for _cls, _names in _LAYOUT.items():  # the tuples below are positional
    if tuple(f.name for f in fields(_cls)) != _names:  # pragma: no cover
        raise ImportError(f"lightnews.bulk packs {_cls.__name__} by position: update it")


@dataclass(slots=True)
class ImportSummary:
    records: int = 0
    seconds: float = 0.0
    saved: SaveResult = field(default_factory=SaveResult)
    errors: SnapshotErrors = field(default_factory=SnapshotErrors)

    @property
    def rate(self) -> float:
        return self.records / self.seconds if self.seconds else 0.0

    def to_json(self) -> dict[str, Any]:
        return {
            "records": self.records,
            "seconds": round(self.seconds, 3),
            "records_per_second": round(self.rate, 1),
            "papers_new": self.saved.papers_new,
            "papers_updated": self.saved.papers_updated,
            "unchanged": self.saved.unchanged,
            "unreadable_lines": self.errors.count,
            "errors": self.errors.examples,
        }


def _pack(p: Paper) -> _PaperTuple:
    return (
        p.arxiv_id,
        p.title,
        p.abstract,
        [(a.name, a.keyname, a.forenames, a.suffix, a.affiliations) for a in p.authors],
        p.categories,
        p.published,
        p.updated,
        [(v.number, v.date, v.size) for v in p.versions],
        p.doi,
        p.journal_ref,
        p.comments,
        p.license,
        p.submitter,
        p.withdrawn,
    )


def _unpack(t: _PaperTuple) -> Paper:
    return Paper(
        t[0],
        t[1],
        t[2],
        [Author(*a) for a in t[3]],
        t[4],
        t[5],
        t[6],
        [Version(*v) for v in t[7]],
        t[8],
        t[9],
        t[10],
        t[11],
        t[12],
        t[13],
    )


def _parse_span(path: str, start: int, end: int) -> _Parsed:
    """Worker side: parse bytes ``start:end`` of the file (whole lines).

    Error messages carry line numbers within the span; the caller shifts
    them. Returns the papers as tuples, the errors and the number of lines.
    """
    with open(path, "rb") as stream:
        stream.seek(start)
        data = stream.read(end - start)
    errors = SnapshotErrors()
    papers = [_pack(p) for p in iter_snapshot(io.BytesIO(data), errors)]
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return papers, errors, lines


def _renumber(message: str, offset: int) -> str:
    head, _, rest = message.partition(":")
    number = head.removeprefix("line ")
    return f"line {int(number) + offset}:{rest}" if number.isdigit() else message


def _spans(path: Path, chunk_bytes: int = CHUNK_BYTES) -> Iterator[tuple[int, int]]:
    """Line-aligned byte ranges of about ``chunk_bytes``, found by seeking only."""
    size = path.stat().st_size
    with path.open("rb") as stream:
        start = 0
        while start < size:
            stream.seek(start + chunk_bytes)
            stream.readline()
            end = min(stream.tell(), size)
            yield start, end
            start = end


def import_snapshot(
    store: SQLiteStore,
    path: Path,
    *,
    batch_size: int = 5000,
    now: str | None = None,
    on_progress: Callable[[int], None] | None = None,
    workers: int | None = None,
) -> ImportSummary:
    """Import a snapshot file; returns counts, timing and the unreadable lines.

    ``workers=0`` parses in this process (no overlap); by default one
    process parses while this one writes (more rarely help: the single
    SQLite writer is the bottleneck).
    """
    summary = ImportSummary()
    started = time.perf_counter()
    stamp = now or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    progress = on_progress or (lambda _: None)
    pending: list[Paper] = []
    line_offset = 0
    name = str(path)

    def take(parsed: _Parsed, end: int) -> None:
        nonlocal line_offset
        papers, errors, lines = parsed
        summary.records += len(papers)
        summary.errors.count += errors.count
        room = 10 - len(summary.errors.examples)
        summary.errors.examples.extend(
            _renumber(example, line_offset) for example in errors.examples[: max(room, 0)]
        )
        line_offset += lines
        pending.extend(map(_unpack, papers))
        if len(pending) >= batch_size:
            summary.saved.add(store.save_papers(pending, stamp))
            pending.clear()
        progress(end)

    collecting = gc.isenabled()
    gc.disable()
    try:
        if workers == 0:
            for start, end in _spans(path):
                take(_parse_span(name, start, end), end)
        else:
            count = workers or 1
            with ProcessPoolExecutor(max_workers=count, initializer=gc.disable) as pool:
                inflight: deque[tuple[Future[_Parsed], int]] = deque()
                for start, end in _spans(path):
                    inflight.append((pool.submit(_parse_span, name, start, end), end))
                    if len(inflight) >= count + INFLIGHT:  # bounded: memory stays flat
                        future, done = inflight.popleft()
                        take(future.result(), done)
                while inflight:
                    future, done = inflight.popleft()
                    take(future.result(), done)
        if pending:
            summary.saved.add(store.save_papers(pending, stamp))
    finally:
        if collecting:
            gc.enable()
    summary.seconds = time.perf_counter() - started
    return summary
