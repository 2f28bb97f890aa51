"""The web app while another process writes: reads go on, writes wait, nothing is a 500.

Each test works on its own copy of the demo database, with another writer
(a second store on the same file, as a refresh or an import would be)
holding the write lock for a while.
"""

from __future__ import annotations

import gc
import os
import shutil
import sqlite3
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from starlette.testclient import TestClient

from lightnews.model import Paper
from lightnews.serve.app import create_app
from lightnews.serve.test_web import same_site
from lightnews.settings import Settings
from lightnews.store import SQLiteStore


@pytest.fixture
def library(demo_database: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "library.db"
    shutil.copy(demo_database, copy)
    return copy


@contextmanager
def client_for(db: Path, write_wait: float, **overrides: object) -> Iterator[TestClient]:
    """A client of the app over ``db`` that posts forms as the site's own pages do."""
    settings = Settings(environ={}).with_overrides(
        resolve_online=False, write_wait=write_wait, **overrides
    )
    with TestClient(create_app(db, settings), base_url="http://localhost") as client:
        same_site(client)
        yield client


#: The longest another writer holds the lock in these tests: a request that waited for it
#: would take this long, however busy the machine.
HOLD = 20.0


@contextmanager
def writer_holding_lock(db: Path) -> Iterator[threading.Event]:
    """Another writer holds the database's write lock (in a thread) until the event
    yielded is set, or for :data:`HOLD` seconds. Released by the test, not by a timer, so
    that a loaded machine's slow requests cannot outlast it."""
    started = threading.Event()
    release = threading.Event()

    def run() -> None:
        with SQLiteStore(db) as other, other.transaction():
            other.save_papers([Paper("2501.00001", title="Written by another process")], "now")
            started.set()
            release.wait(HOLD)

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(10)
    try:
        yield release
    finally:
        release.set()
        thread.join()


def mute(client: TestClient, keyword: str) -> httpx.Response:
    form = {"action": "mute", "kind": "keyword", "value": keyword, "back": "/"}
    response: httpx.Response = client.post("/mark", data=form, follow_redirects=False)
    return response


def test_a_write_that_waits_too_long_is_a_503_page_that_says_to_retry(library: Path) -> None:
    with client_for(library, write_wait=0.3) as client, writer_holding_lock(library):
        began = time.monotonic()
        assert client.get("/").status_code == 200  # reading goes on meanwhile
        assert client.get("/api/search", params={"q": "attention"}).status_code == 200
        refused = mute(client, "benchmark")  # the lock is held until this block ends
        assert time.monotonic() - began < HOLD / 2  # nothing waited for the lock
        assert refused.status_code == 503 and refused.headers["retry-after"]
        assert "<main" in refused.text and "try again" in refused.text  # the site's layout
    with client_for(library, write_wait=0.3) as client:
        assert mute(client, "benchmark").status_code == 303  # free again: done
        assert "benchmark" in client.get("/").text


def test_a_request_waiting_for_the_lock_holds_up_no_other(library: Path) -> None:
    with (
        client_for(library, write_wait=3 * HOLD) as client,
        writer_holding_lock(library) as release,
    ):
        waited: list[httpx.Response] = []
        writing = threading.Thread(target=lambda: waited.append(mute(client, "diffusion")))
        writing.start()
        time.sleep(0.2)  # the POST is now waiting for the write lock, in its thread
        began = time.monotonic()
        for path in ("/", "/api/feed", "/search?q=attention", "/sources"):
            assert client.get(path).status_code == 200
        elapsed = time.monotonic() - began
        assert writing.is_alive(), "the write should still be waiting"
        release.set()
        writing.join()
    # Behind the waiting write, each page would have taken until the lock was free.
    assert elapsed < HOLD / 2, f"pages took {elapsed:.2f}s behind a waiting write"
    assert waited[0].status_code == 303  # and it went through once the lock was free


def test_a_broken_database_is_a_503_never_a_500(library: Path, tmp_path: Path) -> None:
    with client_for(library, write_wait=0.3) as client:
        assert client.get("/api/feed").status_code == 200
        garbage = tmp_path / "garbage"
        garbage.write_bytes(b"this is not a database" * 500)
        for suffix in ("-wal", "-shm"):
            Path(f"{library}{suffix}").unlink(missing_ok=True)
        os.replace(garbage, library)  # connections opened from now on read garbage
        results: list[httpx.Response] = []
        # Requests at once, on new threads and on the one that served before: each
        # connection sees that the path leads to another file now, and opens it.
        threads = [
            threading.Thread(target=lambda p=path: results.append(client.get(p)))
            for path in ["/api/feed", "/sources"] * 6
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        statuses = {r.status_code for r in results}
        assert 500 not in statuses
        assert statuses == {503}
        failed = results
        for response in failed:
            if response.request.url.path.startswith("/api/"):
                assert "not a database" in response.json()["error"]
            else:
                assert "<main" in response.text and "try again" in response.text


def test_uncaught_lightnews_errors_are_not_500s(library: Path) -> None:
    # A search past its time budget (1 ms: every prefix of the demo library's words).
    query = " ".join(f"{a}{b}{c}*" for a in "acdeilmnoprst" for b in "aeio" for c in "nrst")
    with client_for(library, write_wait=0.3, search_budget_ms=1) as client:
        page = client.get("/search", params={"q": query})
        assert page.status_code == 400 and "narrow it" in page.text
        assert 'value="aan* aar*' in page.text  # the form keeps what was typed
        data = client.get("/api/search", params={"q": query})
        assert data.status_code == 400 and "narrow it" in data.json()["error"]


def test_pages_served_side_by_side_all_answer(library: Path) -> None:
    """Threads search, stem and encode at once (each shared piece must allow it)."""
    paths = [
        "/api/search?q=sparse+attention",
        "/api/paper/2511.18342",
        "/search?q=ring",
        "/paper/2511.07731",
        "/api/feed",
    ] * 8
    with client_for(library, write_wait=1) as client:
        results: list[int] = []
        threads = [
            threading.Thread(target=lambda p=path: results.append(client.get(p).status_code))
            for path in paths
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
    assert results == [200] * len(paths)


def test_no_page_leaves_a_read_open_and_the_next_page_sees_another_writer(library: Path) -> None:
    # A statement left unfinished (a cursor kept alive, say in a reference cycle that
    # only the cyclic collector frees) keeps its thread's connection on an old
    # snapshot: the next page served by that thread would not see what was written
    # since, and the write-ahead log could not be checkpointed past it. The collector
    # is off here, so such a cursor would stay for the whole test.
    with sqlite3.connect(library) as conn:
        paper = conn.execute("SELECT arxiv_id FROM papers ORDER BY id LIMIT 1").fetchone()[0]
        scholar = conn.execute("SELECT min(id) FROM scholars").fetchone()[0]
        item = conn.execute("SELECT min(id) FROM items").fetchone()[0]
    pages = [
        "/",
        "/api/feed",
        f"/paper/{paper}",
        f"/api/paper/{paper}",
        f"/scholar/{scholar}",
        f"/scholar/{scholar}?tab=papers",
        "/search?q=attention",
        "/api/search?q=attention",
        "/sources",
        f"/item/{item}",
        "/daily",
        "/discussed",
        "/saved",
        "/scholars",
        "/suggestions",
        "/notes",
    ]
    collecting = gc.isenabled()
    gc.disable()
    try:
        with client_for(library, write_wait=5) as client:
            for path in pages * 2:  # each page on more than one of the server's threads
                assert client.get(path).status_code == 200, path
            with sqlite3.connect(library, isolation_level=None) as other:
                other.execute("BEGIN IMMEDIATE")
                other.execute(
                    "UPDATE papers SET title = 'Quokkas by another writer' WHERE arxiv_id = ?",
                    (paper,),
                )
                other.execute("COMMIT")
                # No connection of the server holds a read: the log can be emptied.
                busy, _, _ = other.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()
                assert busy == 0, "a page left a read transaction open"
            for _ in range(4):
                assert "Quokkas" in client.get(f"/api/paper/{paper}").text
                assert "Quokkas" in client.get(f"/paper/{paper}").text
    finally:
        if collecting:
            gc.enable()
