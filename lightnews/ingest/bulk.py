"""Bulk import: stream arXiv's metadata snapshot into the store.

All of arXiv is about 2.7 million records in one multi-gigabyte JSON Lines
file. It is cut into line-aligned byte ranges, parsed into papers, and
written in large transactions through the store's normal merge path, so a
re-import skips what is unchanged and memory stays flat whatever the file
size. Worker processes read and parse the ranges while the main process
writes, so the two overlap. The main process does nothing but write: it
never reads the file (it only seeks to find line ends), and the workers also
build the rows the store writes (:func:`~lightnews.store.sqlite.prepare_paper`:
column values, content hash, authorship rows with name keys), so the writer
inserts new papers as they come, skips unchanged ones by their hash and
merges only the changed ones. Into an empty library the single SQLite
writer is the bottleneck and one worker is enough; into a library that has
papers, most records are usually unchanged and parsing is the bottleneck,
so two workers parse (``docs/benchmarks.md``).

Papers are saved ``WRITE_CHUNK`` at a time (two records of one paper in one
chunk: the newer is kept; in different chunks: merged), and chunks are
grouped into write transactions of up to ``transaction_size`` records: each
commit of the WAL database is followed by a checkpoint, and pages that every
chunk touches (indexes, the full-text index) are written once per
transaction rather than once per chunk. A transaction also ends after
``TRANSACTION_SECONDS``, checked after every chunk, and as soon as another
writer of the library (a refresh, the web app, a ``lightnews mute``) waits for
a lock the import holds (:meth:`~lightnews.store.Store.writers_waiting`: on
SQLite every writer waits for the one write lock; on PostgreSQL only a writer
of the same rows does): a click during an import waits for one chunk at most,
not for a whole transaction. An import's transaction is not run again when
PostgreSQL gives it up to break a deadlock (it spans many chunks): the import
stops with the error, and importing again goes on from what was committed.

Into PostgreSQL, new papers are inserted over several connections at once
(``connections``, by default the CPU count): the server computes each new
paper's full-text column in the process that inserts it, and that is what
bounds an import there (:mod:`lightnews.store.pg_bulk`). SQLite has one
writer per file and ignores it.

The new and changed papers are attributed to the scholars followed under their
authors' surnames (:func:`~lightnews.link.attribution.attribute_new`): each
chunk keeps the followed surnames among its authors (a set lookup per author),
and each scholar they name is recomputed once, when the import ends, even when
it stops part way (the committed papers would be unchanged the next time).

The cyclic garbage collector is paused for the import (in the workers too):
the millions of short-lived rows it allocates form no cycles, and the
collector's passes over them cost a third of the writer's time.

Every paper is cut to the per-field size caps in its worker
(:mod:`lightnews.normalize.limits`), and the summary says how many fields were
cut and how many records were saved as stubs (no title). A worker watches its
parent and exits when the parent is gone (killed with ``kill -9``, say), so
no parsing process outlives the import.
"""

from __future__ import annotations

import gc
import io
import os
import threading
import time
from collections import deque
from collections.abc import Callable, Iterator
from concurrent.futures import Future, ProcessPoolExecutor
from contextlib import ExitStack, suppress
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson

from lightnews.link.attribution import attribute_new, scholar_keys
from lightnews.model import Problem
from lightnews.normalize.limits import Limits, cap_paper
from lightnews.sources.arxiv_snapshot import SnapshotErrors, iter_snapshot
from lightnews.store import SaveResult, Store
from lightnews.store.merge import PreparedPaper, prepare_paper

__all__ = ["ImportSummary", "import_snapshot"]

CHUNK_BYTES = 4 * 1024 * 1024
INFLIGHT = 2  # parsed chunks waiting for the writer, per worker: bounds memory
#: A write transaction is committed after this long even when it holds fewer records
#: than asked for: other writers of the library (the web app, a refresh) wait for it,
#: and the store gives up waiting after ``write_wait`` (30 s by default).
TRANSACTION_SECONDS = 4.0
#: Records written between two looks at the clock and at waiting writers: merging 500
#: changed records into a 150k library takes 0.1-0.3 s on a quiet machine, and several
#: times that at a lower priority beside busy readers; a waiting writer waits that long.
WRITE_CHUNK = 200
#: Connections inserting new papers at once into PostgreSQL, at most (by default one
#: per CPU: each keeps a server process busy computing full-text columns).
MAX_CONNECTIONS = 8
#: How often a worker checks that the process that started it is still there.
PARENT_POLL_SECONDS = 0.5
#: Cut fields named in the summary (the others are only counted).
CUT_EXAMPLES = 10

# What the worker sends back for a byte range: its prepared papers as one JSON
# document (orjson writes it in a fifth of the time pickle takes for the same
# tuples and reads it about as fast), the errors, the number of lines, and the
# number of fields cut to size with the first few of them named.
_Parsed = tuple[bytes, SnapshotErrors, int, int, list[str]]


@dataclass(slots=True)
class ImportSummary:
    records: int = 0
    seconds: float = 0.0
    saved: SaveResult = field(default_factory=SaveResult)
    errors: SnapshotErrors = field(default_factory=SnapshotErrors)
    workers: int = 1  # parsing processes (0: parsed by the writer itself)
    #: Fields cut to their size caps (``max_title_chars``...), and the first few named.
    cut: int = 0
    cut_examples: list[str] = field(default_factory=list)
    #: Scholars attributed again because the import added or changed papers under their name.
    attributed: int = 0

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
            "stubs": self.saved.stubs,
            "unreadable_lines": self.errors.count,
            "errors": self.errors.examples,
            "fields_cut": self.cut,
            "cut": self.cut_examples,
            "scholars_attributed": self.attributed,
        }


def _parse_span(path: str, start: int, end: int, limits: Limits) -> _Parsed:
    """Worker side: parse bytes ``start:end`` of the file (whole lines).

    Error messages carry line numbers within the span; the caller shifts
    them. Returns the prepared papers (JSON), the errors, the number of lines
    and the fields cut to ``limits``.
    """
    with open(path, "rb") as stream:
        stream.seek(start)
        data = stream.read(end - start)
    errors = SnapshotErrors()
    cuts: list[Problem] = []
    prepared = []
    for paper in iter_snapshot(io.BytesIO(data), errors):
        cap_paper(paper, limits, cuts)
        prepared.append(prepare_paper(paper))
    lines = data.count(b"\n") + (0 if data.endswith(b"\n") or not data else 1)
    return orjson.dumps(prepared), errors, lines, len(cuts), [str(c) for c in cuts[:CUT_EXAMPLES]]


def _watch_parent(parent: int) -> None:
    """Exit this worker once the process that started it is gone."""
    while os.getppid() == parent:
        time.sleep(PARENT_POLL_SECONDS)
    os._exit(1)


def _start_worker(parent: int) -> None:
    """A parsing worker's set-up: no cyclic collector, and a watch on its parent."""
    gc.disable()
    threading.Thread(target=_watch_parent, args=(parent,), daemon=True).start()


def _renumber(message: str, offset: int) -> str:
    head, _, rest = message.partition(":")
    number = head.removeprefix("line ")
    return f"line {int(number) + offset}:{rest}" if number.isdigit() else message


def _workers(store: Store) -> int:
    """How many parsing processes pay: one into an empty library, else two (if two cores).

    Into an empty library every record is new and the writer is the bottleneck
    (a second parser only takes a core from it); otherwise most records are
    usually unchanged, the writer only compares hashes, and parsing is the
    bottleneck (docs/benchmarks.md).
    """
    if store.paper_count() == 0:
        return 1
    return min(2, os.cpu_count() or 1)


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
    store: Store,
    path: Path,
    *,
    batch_size: int = 5000,
    transaction_size: int = 50_000,
    now: str | None = None,
    on_progress: Callable[[int], None] | None = None,
    workers: int | None = None,
    limits: Limits | None = None,
    connections: int | None = None,
) -> ImportSummary:
    """Import a snapshot file; returns counts, timing and the unreadable lines.

    ``batch_size`` records are saved at a time (``WRITE_CHUNK`` per call of the
    store), in write transactions that end after ``transaction_size`` records
    or ``TRANSACTION_SECONDS``, whichever comes first; an error rolls back the
    open one, the committed ones stay (importing again completes the
    library). ``workers=0`` parses in this process (no overlap); by default
    one process parses while this one writes, two when the library already
    has papers (see :func:`_workers`). Fields longer than ``limits`` (by
    default the settings' defaults) are cut and counted. ``connections``: how
    many connections insert new papers at once where the backend can (PostgreSQL;
    by default the CPU count, at most ``MAX_CONNECTIONS``).
    """
    limits = limits or Limits()
    watched = scholar_keys(store)  # followed surnames: a chunk keeps only these of its keys
    summary = ImportSummary(workers=_workers(store) if workers is None else workers)
    started = time.perf_counter()
    stamp = now or time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    progress = on_progress or (lambda _: None)
    pending: list[PreparedPaper] = []
    line_offset = 0
    name = str(path)
    transaction = ExitStack()  # the open write transaction, if any
    written = 0  # records saved in it
    opened = 0.0

    def save() -> None:
        nonlocal written, opened
        for start in range(0, len(pending), WRITE_CHUNK):
            if not written:
                transaction.enter_context(store.transaction())
                opened = time.monotonic()
            chunk = pending[start : start + WRITE_CHUNK]
            saved = store.save_prepared(chunk, stamp)
            saved.name_keys &= watched.keys()
            summary.saved.add(saved)
            written += len(chunk)
            if (
                written >= transaction_size
                or time.monotonic() - opened >= TRANSACTION_SECONDS
                or store.writers_waiting()
            ):
                transaction.close()  # commits
                written = 0
        pending.clear()

    def take(parsed: _Parsed, end: int) -> None:
        nonlocal line_offset
        blob, errors, lines, cut, cut_examples = parsed
        papers: list[list[Any]] = orjson.loads(blob)
        summary.records += len(papers)
        summary.cut += cut
        room = CUT_EXAMPLES - len(summary.cut_examples)
        summary.cut_examples.extend(cut_examples[: max(room, 0)])
        summary.errors.count += errors.count
        room = 10 - len(summary.errors.examples)
        summary.errors.examples.extend(
            _renumber(example, line_offset) for example in errors.examples[: max(room, 0)]
        )
        line_offset += lines
        pending.extend((values, authorships) for values, authorships in papers)
        if len(pending) >= batch_size:
            save()
        progress(end)

    collecting = gc.isenabled()
    gc.disable()
    # About how many papers the file holds (arXiv's lines average ~1.5 kB).
    expected = path.stat().st_size // 1500
    try:
        if connections is None:
            connections = min(os.cpu_count() or 1, MAX_CONNECTIONS)
        with store.bulk_import(expected, connections) as late, transaction:  # an error rolls
            # back the open transaction; ``late``: what the store saved on its own
            if workers == 0:
                for start, end in _spans(path):
                    take(_parse_span(name, start, end, limits), end)
            else:
                count = summary.workers
                with ProcessPoolExecutor(
                    max_workers=count, initializer=_start_worker, initargs=(os.getpid(),)
                ) as pool:
                    inflight: deque[tuple[Future[_Parsed], int]] = deque()
                    for start, end in _spans(path):
                        job = pool.submit(_parse_span, name, start, end, limits)
                        inflight.append((job, end))
                        if len(inflight) >= count + INFLIGHT:  # bounded: memory stays flat
                            future, done = inflight.popleft()
                            take(future.result(), done)
                    while inflight:
                        future, done = inflight.popleft()
                        take(future.result(), done)
            if pending:
                save()
        late.name_keys &= watched.keys()
        summary.saved.add(late)
    except BaseException:
        # What was committed is attributed even when the import stops part way (importing
        # again would find those papers unchanged); the first error is the one raised.
        with suppress(Exception):
            attribute_new(store, summary.saved.name_keys, watched)
        raise
    finally:
        if collecting:
            gc.enable()
    summary.attributed = len(attribute_new(store, summary.saved.name_keys, watched))
    summary.seconds = time.perf_counter() - started
    return summary
