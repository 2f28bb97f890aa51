"""Bulk import: stream arXiv's metadata snapshot into the store.

All of arXiv is about 2.7 million records in one multi-gigabyte JSON Lines
file. It is read line by line, parsed into papers, and written in large
transactions through the store's normal merge path, so a re-import skips what
is unchanged and memory stays flat whatever the file size. On a multi-core
machine the JSON decoding and normalization run in a worker process while the
main process writes, so the two overlap.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from lightnews.model import Paper
from lightnews.sources.arxiv_snapshot import SnapshotErrors, iter_snapshot
from lightnews.store import SaveResult, SQLiteStore

__all__ = ["ImportSummary", "import_snapshot"]

CHUNK_BYTES = 4 * 1024 * 1024


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


def _parse_chunk(lines: list[bytes], first_line: int) -> tuple[list[Paper], SnapshotErrors]:
    """Worker side: parse a block of lines (line numbers kept for error messages)."""
    errors = SnapshotErrors()
    numbered = _Numbered(lines, first_line)
    papers = list(iter_snapshot(numbered, errors))  # type: ignore[arg-type]
    for i, example in enumerate(errors.examples):
        errors.examples[i] = numbered.renumber(example)
    return papers, errors


class _Numbered:
    """Lines of a chunk that report their position in the whole file."""

    def __init__(self, lines: list[bytes], first_line: int) -> None:
        self.lines = lines
        self.offset = first_line - 1

    def __iter__(self) -> Iterator[bytes]:
        return iter(self.lines)

    def renumber(self, message: str) -> str:
        head, _, rest = message.partition(":")
        number = head.removeprefix("line ")
        return f"line {int(number) + self.offset}:{rest}" if number.isdigit() else message


def _chunks(
    stream: IO[bytes], on_bytes: Callable[[int], None]
) -> Iterator[tuple[list[bytes], int]]:
    line_number = 1
    done = 0
    while True:
        lines = stream.readlines(CHUNK_BYTES)
        if not lines:
            return
        done += sum(len(line) for line in lines)
        on_bytes(done)
        yield lines, line_number
        line_number += len(lines)


def import_snapshot(
    store: SQLiteStore,
    path: Path,
    *,
    batch_size: int = 5000,
    now: str | None = None,
    on_progress: Callable[[int], None] | None = None,
    workers: int | None = None,
) -> ImportSummary:
    """Import a snapshot file; returns counts, timing and the unreadable lines."""
    summary = ImportSummary()
    started = time.perf_counter()
    stamp = now or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    progress = on_progress or (lambda _: None)
    pending: list[Paper] = []

    def flush() -> None:
        if pending:
            summary.saved.add(store.save_papers(pending, stamp))
            pending.clear()

    def take(papers: list[Paper], errors: SnapshotErrors) -> None:
        summary.records += len(papers)
        summary.errors.count += errors.count
        room = 10 - len(summary.errors.examples)
        summary.errors.examples.extend(errors.examples[: max(room, 0)])
        pending.extend(papers)
        if len(pending) >= batch_size:
            flush()

    use_worker = (workers if workers is not None else 1) > 0
    with path.open("rb") as stream:
        if not use_worker:
            for lines, first in _chunks(stream, progress):
                take(*_parse_chunk(lines, first))
        else:
            with ProcessPoolExecutor(max_workers=workers or 1) as pool:
                inflight: list[Future[tuple[list[Paper], SnapshotErrors]]] = []
                for lines, first in _chunks(stream, progress):
                    inflight.append(pool.submit(_parse_chunk, lines, first))
                    if len(inflight) >= 2:  # bounded: memory stays flat
                        take(*inflight.pop(0).result())
                for future in inflight:
                    take(*future.result())
    flush()
    summary.seconds = time.perf_counter() - started
    return summary
