"""Bulk import of arXiv's snapshot against saving the same papers one by one.

The bulk path prepares rows in worker processes, skips unchanged papers by
their hash, inserts new ones directly and groups batches into big
transactions: none of it may change what is stored. The differential tests
import a snapshot, the same snapshot again (all unchanged) and a changed one
twice (merged), and compare every table, the full-text index included, with
what :meth:`SQLiteStore.save_papers` stores for the same papers.
"""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest

from conftest import ROOT
from lightnews.ingest import bulk
from lightnews.sources.arxiv_snapshot import SnapshotErrors, iter_snapshot
from lightnews.store import SaveResult, SQLiteStore

STAMPS = ["2025-06-01T00:00:00Z", "2025-06-02T00:00:00Z", "2025-06-03T00:00:00Z"]
WORDS = ["sparse", "attention", "revisited", "duplicate", "lindqvist", "müller", "model", "ring"]


def _record(n: int, **changes: Any) -> dict[str, Any]:
    versions = [
        {"version": f"v{v}", "created": f"Mon, {v} Jun 2025 10:00:00 GMT"}
        for v in range(1, n % 3 + 2)
    ]
    record: dict[str, Any] = {
        "id": f"2506.{n:05d}",
        "submitter": f"Submitter {n}",
        "authors": "",
        "title": f"Sparse ring attention model number {n}" + (r" with $\ell_1$" if n % 4 else ""),
        "comments": f"{n} pages",
        "journal-ref": None,
        "doi": f"10.1000/x{n}" if n % 2 else None,
        "categories": "cs.LG stat.ML" if n % 2 else "hep-th",
        "license": None,
        "abstract": f"  We study model {n} and its attention.\n Nothing else.  ",
        "versions": versions,
        "update_date": "2025-06-09",
        "authors_parsed": [
            ["Lindqvist", "Mara", ""],
            [f"Müller{n}", "Jörg", "Jr"],
            ["Ng", "A.", ""],
        ][: n % 3 + 1],
    }
    record.update(changes)
    return record


def _first() -> list[bytes]:
    lines = [orjson.dumps(_record(n)) for n in range(1, 31)]
    lines.insert(5, b"this line is not json")
    lines.insert(9, orjson.dumps(_record(40, title="")))  # a stub: no title
    lines.insert(12, orjson.dumps(_record(3, title="Duplicate of three, older", versions=[])))
    lines.append(orjson.dumps(_record(7, title="Duplicate of seven, newer", comments=None)))
    return lines


def _changed() -> list[bytes]:
    """The first snapshot edited as later snapshots edit records, with repeats."""
    lines = []
    for n in range(1, 36):  # 31 to 35 are new
        changes: dict[str, Any] = {}
        if n % 5 == 0:  # a new version with a new title
            changes["title"] = f"Sparse ring attention revisited {n}"
            changes["versions"] = [
                *_record(n)["versions"],
                {"version": "v9", "created": "Tue, 1 Jul 2025 10:00:00 GMT"},
            ]
        if n % 6 == 0:  # an older record: fills gaps only
            changes.update(versions=[], doi="10.1000/late", abstract="An older abstract.")
        if n % 7 == 0:
            changes["abstract"] = ""  # a gap: the stored abstract stays
        if n % 8 == 0:
            changes["authors_parsed"] = [["Solo", "Han", ""]]
        if n % 9 == 0:
            changes["comments"] = "This paper has been withdrawn"
        if n == 40:
            changes["title"] = "The stub filled in"
        lines.append(orjson.dumps(_record(n, **changes)))
    lines.append(orjson.dumps(_record(40, title="The stub filled in")))
    lines.append(orjson.dumps(_record(12, title="", versions=[{"version": "v7"}])))  # a newer stub
    lines.append(orjson.dumps(_record(2, **{"journal-ref": "J. Late 2"})))  # far repeats
    lines.append(orjson.dumps(_record(10, title="Ten again, other batch")))
    return lines


def _write(path: Path, lines: list[bytes]) -> Path:
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _tables(store: SQLiteStore) -> dict[str, Any]:
    """Everything an import writes, and the full-text index as searches see it."""
    db = store.db
    db.execute("INSERT INTO papers_fts(papers_fts) VALUES('integrity-check')")
    found: dict[str, Any] = {
        name: [tuple(r) for r in db.execute(sql)]
        for name, sql in {
            "papers": "SELECT * FROM papers ORDER BY id",
            "authorships": "SELECT * FROM authorships ORDER BY paper_id, position",
            "queue": "SELECT paper_id FROM embed_queue ORDER BY paper_id",
            "vectors": "SELECT paper_id, model FROM paper_vectors ORDER BY id",
            "indexed": "SELECT id FROM papers_fts_docsize ORDER BY id",
            "vocabulary": "SELECT term, doc, cnt FROM papers_vocab ORDER BY term",
        }.items()
    }
    found["search"] = {
        word: [
            tuple(r)
            for r in db.execute(
                "SELECT rowid, round(bm25(papers_fts, 10.0, 3.0, 1.0), 9) FROM papers_fts "
                "WHERE papers_fts MATCH ? ORDER BY 2, 1",
                (f'"{word}"',),
            )
        ]
        for word in WORDS
    }
    return found


def _counts(saved: SaveResult) -> tuple[int, int, int]:
    return (saved.papers_new, saved.papers_updated, saved.unchanged)


def _steps(tmp_path: Path) -> list[Path]:
    first = _write(tmp_path / "first.jsonl", _first())
    changed = _write(tmp_path / "changed.jsonl", _changed())
    return [first, first, changed, changed]


def _one_by_one(store: SQLiteStore, path: Path, now: str, size: int) -> SaveResult:
    """The reference: the file's papers through ``save_papers``, ``size`` at a time."""
    with path.open("rb") as stream:
        papers = list(iter_snapshot(stream, SnapshotErrors()))
    saved = SaveResult()
    for start in range(0, len(papers), size):
        saved.add(store.save_papers(papers[start : start + size], now))
    return saved


def _compare(
    tmp_path: Path, run_bulk: Callable[[SQLiteStore, Path, str], SaveResult], size: int
) -> None:
    bulk_store = SQLiteStore(tmp_path / "bulk.db")
    reference = SQLiteStore(tmp_path / "reference.db")
    for path, now in zip(_steps(tmp_path), [*STAMPS, STAMPS[-1]], strict=True):
        assert _counts(run_bulk(bulk_store, path, now)) == _counts(
            _one_by_one(reference, path, now, size)
        )
        assert _tables(bulk_store) == _tables(reference)
        for store in (bulk_store, reference):  # as embedding would
            store.db.execute("DELETE FROM embed_queue")
    bulk_store.close()
    reference.close()


@pytest.fixture
def line_by_line(monkeypatch: pytest.MonkeyPatch) -> None:
    """Byte ranges of one line each, so every batch of the import is one record."""
    spans = bulk._spans

    def one_line(path: Path, chunk_bytes: int = 1) -> Iterator[tuple[int, int]]:
        return spans(path, 1)

    monkeypatch.setattr(bulk, "_spans", one_line)


@pytest.mark.parametrize("workers", [0, None])
@pytest.mark.usefixtures("line_by_line")
def test_bulk_import_stores_what_save_papers_stores(tmp_path: Path, workers: int | None) -> None:
    """One record per batch, three batches per transaction: duplicates across batches
    and transactions merge, a later record updates one indexed earlier in its transaction."""

    def run_bulk(store: SQLiteStore, path: Path, now: str) -> SaveResult:
        summary = bulk.import_snapshot(
            store, path, batch_size=1, transaction_size=3, now=now, workers=workers
        )
        assert summary.errors.count == (1 if path.name == "first.jsonl" else 0)
        return summary.saved

    _compare(tmp_path, run_bulk, size=1)


def test_bulk_import_in_one_batch(tmp_path: Path) -> None:
    """The whole file in one batch: of two records of a paper, the newer is kept."""

    def run_bulk(store: SQLiteStore, path: Path, now: str) -> SaveResult:
        return bulk.import_snapshot(store, path, now=now).saved

    _compare(tmp_path, run_bulk, size=10_000)


def test_reimport_changes_nothing_and_changes_requeue(tmp_path: Path) -> None:
    store = SQLiteStore(tmp_path / "x.db")
    first, again, changed, _ = _steps(tmp_path)
    summary = bulk.import_snapshot(store, first, now=STAMPS[0], batch_size=4, transaction_size=8)
    assert _counts(summary.saved) == (30, 0, 0) and summary.records == 33  # and a stub
    assert summary.workers == 1  # into an empty library: the writer is the bottleneck
    papers = store.db.execute("SELECT id FROM papers WHERE title != '' ORDER BY id").fetchall()
    queued = store.db.execute("SELECT paper_id FROM embed_queue ORDER BY paper_id").fetchall()
    assert [r[0] for r in queued] == [r[0] for r in papers] and len(papers) == 30
    store.db.execute("DELETE FROM embed_queue")  # embedded, say
    store.db.executemany(
        "INSERT INTO paper_vectors (paper_id, model, vector) VALUES (?, 'm', x'00')", papers
    )
    before = _tables(store)
    summary = bulk.import_snapshot(store, again, now=STAMPS[1], batch_size=4, transaction_size=8)
    assert _counts(summary.saved) == (0, 0, 30)
    assert summary.workers == min(2, os.cpu_count() or 1)  # parsing is the bottleneck
    assert _tables(store) == before  # not even a modification time moved

    old = {r[0]: (r[1], r[2]) for r in store.db.execute("SELECT id, title, abstract FROM papers")}
    summary = bulk.import_snapshot(store, changed, now=STAMPS[2], batch_size=4, transaction_size=8)
    assert summary.saved.papers_new == 5 + 1  # five new papers and the stub filled in
    new = {r[0]: (r[1], r[2]) for r in store.db.execute("SELECT id, title, abstract FROM papers")}
    requeued = {i for i in old if old[i] != new[i] and new[i][0]} | (new.keys() - old.keys())
    assert len(requeued) > 6
    queued = store.db.execute("SELECT paper_id FROM embed_queue").fetchall()
    assert {r[0] for r in queued} == requeued
    vectors = store.db.execute("SELECT paper_id FROM paper_vectors").fetchall()
    assert {r[0] for r in vectors} == {i for i in old if old[i] == new[i] and new[i][0]}
    store.close()


def test_an_imports_full_text_goes_in_whole_not_a_chunk_at_a_time(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """FTS5 writes the rows it holds as a segment of its index whenever a statement fires
    a trigger (inserting papers does), and merging a segment per chunk cost the import a
    sixth of its writer's work: the store holds new papers' full-text rows back to the
    commit. Seen with FTS5's merging of segments turned off: one segment, not fifteen."""
    monkeypatch.setattr(bulk, "WRITE_CHUNK", 2)  # 15 chunks in one transaction
    path = _write(tmp_path / "new.jsonl", [orjson.dumps(_record(n)) for n in range(1, 31)])
    with SQLiteStore(tmp_path / "x.db") as store:
        store.db.execute("INSERT INTO papers_fts(papers_fts, rank) VALUES ('automerge', 0)")
        summary = bulk.import_snapshot(store, path, now=STAMPS[0], workers=0)
        segments = store.db.execute("SELECT count(DISTINCT segid) FROM papers_fts_idx")
        assert segments.fetchone()[0] == 1
        store.db.execute("INSERT INTO papers_fts(papers_fts) VALUES ('integrity-check')")
        found = store.db.execute("SELECT rowid FROM papers_fts WHERE papers_fts MATCH 'model'")
        papers = store.db.execute("SELECT id FROM papers ORDER BY id").fetchall()
        assert sorted(r[0] for r in found) == [r[0] for r in papers]
        assert summary.saved.papers_new == len(papers) == 30


@pytest.mark.parametrize("error", [RuntimeError, KeyboardInterrupt])
@pytest.mark.usefixtures("line_by_line")
def test_an_import_that_fails_keeps_whole_transactions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, error: type[BaseException]
) -> None:
    store = SQLiteStore(tmp_path / "x.db")
    first = _steps(tmp_path)[0]
    save = store.save_prepared
    calls = 0

    def failing(prepared: Any, now: str) -> SaveResult:
        nonlocal calls
        calls += 1
        if calls == 4:  # the second batch of the second transaction
            raise error("disk on fire")
        return save(prepared, now)

    monkeypatch.setattr(store, "save_prepared", failing)
    with pytest.raises(error):
        bulk.import_snapshot(
            store, first, now=STAMPS[0], batch_size=4, transaction_size=8, workers=0
        )
    assert not store.db.in_transaction
    kept = store.db.execute("SELECT count(*) FROM papers").fetchone()[0]
    assert kept == 8  # the first transaction, two batches of four
    tables = _tables(store)  # the full-text index is intact, too
    assert len(tables["indexed"]) == len(tables["queue"]) == 8
    monkeypatch.undo()
    bulk.import_snapshot(store, first, now=STAMPS[0])  # the rest, later
    again = bulk.import_snapshot(store, first, now=STAMPS[1])
    assert _counts(again.saved) == (0, 0, 30)
    assert len(_tables(store)["indexed"]) == 30
    store.close()


def test_prepared_papers_survive_json(tmp_path: Path) -> None:
    """What the worker sends (JSON) saves exactly as the papers themselves."""
    from lightnews.store.merge import prepare_paper

    with _steps(tmp_path)[0].open("rb") as stream:
        papers = list(iter_snapshot(stream, SnapshotErrors()))
    store = SQLiteStore(tmp_path / "a.db")
    other = SQLiteStore(tmp_path / "b.db")
    shipped = orjson.loads(orjson.dumps([prepare_paper(p) for p in papers]))
    assert _counts(store.save_prepared([(v, a) for v, a in shipped], STAMPS[0])) == _counts(
        other.save_papers(papers, STAMPS[0])
    )
    assert _tables(store) == _tables(other)
    store.close()
    other.close()


def test_a_transaction_ends_on_time_inside_a_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Other writers wait for the import: it commits on time even in the middle of a batch."""
    first = _steps(tmp_path)[0]
    commits: list[int] = []
    with SQLiteStore(tmp_path / "l.db") as store:
        opened = store.transaction

        def counted() -> Any:  # the store's own transaction, counting the outer ones
            if not store.db.in_transaction:
                commits.append(1)
            return opened()

        monkeypatch.setattr(store, "transaction", counted)
        monkeypatch.setattr(bulk, "WRITE_CHUNK", 2)
        monkeypatch.setattr(bulk, "TRANSACTION_SECONDS", 0.0)  # every chunk is "too long"
        summary = bulk.import_snapshot(store, first, now=STAMPS[0], batch_size=1000, workers=0)
    assert summary.records >= 6
    assert len(commits) == -(-summary.records // 2)  # one per chunk of two, in one batch


def test_an_import_commits_early_for_a_waiting_writer(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A click during an import waits for one chunk, not for the whole transaction."""
    first = _steps(tmp_path)[0]
    path = tmp_path / "l.db"
    monkeypatch.setattr(bulk, "WRITE_CHUNK", 2)
    monkeypatch.setattr(bulk, "TRANSACTION_SECONDS", 600.0)  # never ends by the clock
    spans = bulk._spans
    monkeypatch.setattr(bulk, "_spans", lambda path: spans(path, 300))  # a record or two each
    seen: list[int] = []  # the papers the waiting writer found committed when it got in
    threads: list[threading.Thread] = []

    with SQLiteStore(path) as store, SQLiteStore(path) as other:

        def click() -> None:
            with other.transaction():
                other.save_setting("contact", "me@example.org")
                seen.append(len(other.db.execute("SELECT arxiv_id FROM papers").fetchall()))

        def started(_: int) -> None:  # once the import's transaction is open
            if threads or not store.db.in_transaction:
                return
            threads.append(threading.Thread(target=click))
            threads[0].start()
            deadline = time.monotonic() + 10
            while not store.writers_waiting():
                assert time.monotonic() < deadline, "the import never saw the waiting writer"
                time.sleep(0.01)

        summary = bulk.import_snapshot(
            store, first, now=STAMPS[0], batch_size=2, workers=0, on_progress=started
        )
        threads[0].join(10)
        assert store.saved_settings()["contact"] == "me@example.org"
        stored = len(store.db.execute("SELECT arxiv_id FROM papers").fetchall())
    assert summary.records >= 6
    assert seen and 0 < seen[0] < stored, "the writer got in during the import, not after it"


def _alive(pid: int) -> bool:
    """Whether ``pid`` is a running process (a zombie waiting to be reaped is not)."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] != "Z"
    except (FileNotFoundError, ProcessLookupError):
        return False


@pytest.mark.skipif(not Path("/proc/self/stat").exists(), reason="needs /proc (Linux)")
def test_workers_exit_when_their_parent_is_killed(tmp_path: Path) -> None:
    path = _write(tmp_path / "first.jsonl", _first())
    script = f"""
import multiprocessing, sys, time
from pathlib import Path
sys.path.insert(0, {str(ROOT)!r})
from lightnews.ingest import bulk
from lightnews.store import SQLiteStore

def hold(done):
    print(" ".join(str(p.pid) for p in multiprocessing.active_children()), flush=True)
    time.sleep(120)

bulk.import_snapshot(SQLiteStore({str(tmp_path / "x.db")!r}), Path({str(path)!r}), workers=1,
                     on_progress=hold)
"""
    parent = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert parent.stdout is not None
        workers = [int(pid) for pid in parent.stdout.readline().split()]
        assert workers and all(_alive(pid) for pid in workers)
    finally:
        parent.kill()  # SIGKILL: no cleanup runs in the parent
        parent.wait()
    deadline = time.monotonic() + 5
    while any(_alive(pid) for pid in workers) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_alive(pid) for pid in workers)
