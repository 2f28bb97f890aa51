"""Workers on the PostgreSQL queue: real PostgreSQL, real worker processes, real HTTP.

Each test starts ``lightnews worker`` subprocesses against a fresh database and
a local server that answers like arXiv's API (pages cut from the demo
snapshot's real entries) and records when each request came and went.
"""

from __future__ import annotations

import copy
import hashlib
import itertools
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from click.testing import CliRunner
from lxml import etree

from conftest import DEMO, ROOT, Hit, RecordedServer, Reply
from lightnews.cli import cli
from lightnews.settings import Settings

psycopg = pytest.importorskip("psycopg", reason="workers need the server extra")
pytest.importorskip("procrastinate", reason="workers need the server extra")

from lightnews.normalize.times import iso, utc_now  # noqa: E402
from lightnews.serve.test_accounts import client_for, sign_in  # noqa: E402
from lightnews.store import open_store  # noqa: E402
from lightnews.store.cluster import HostSlots, source_turn  # noqa: E402
from lightnews.store.copy import TABLES, checksums  # noqa: E402
from lightnews.store.postgres import PostgresStore, migrate  # noqa: E402
from lightnews.store.secrets import hash_password  # noqa: E402
from lightnews.worker.jobs import (  # noqa: E402
    DEFER_TASK,
    DIGEST_TASK,
    EMBED_TASK,
    LISTEN_TASK,
    REFRESH_TASK,
    STUBS_TASK,
)
from lightnews.worker.queue import queue_refresh  # noqa: E402

ATOM = "{http://www.w3.org/2005/Atom}"
OPENSEARCH = "{http://a9.com/-/spec/opensearch/1.1/}"
NOW = "2025-12-01T00:00:00Z"


# -- an arXiv API that answers slowly and keeps the time of every request -------------------


@dataclass(frozen=True, slots=True)
class Call:
    query: str
    start: int
    began: float
    ended: float


class SlowArxiv:
    """Answers arXiv API queries page by page after ``delay`` seconds; records each call.

    Every query ``all:NAME`` has ``per_query`` papers of its own: real entries
    of the demo snapshot, each given an arXiv id of its query.
    """

    def __init__(self, server: RecordedServer, *, per_query: int, page: int, delay: float):
        self.per_query, self.page, self.delay = per_query, page, delay
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self._names: dict[str, int] = {}
        tree = etree.parse(str(DEMO / "arxiv-api-cs.LG.xml"))
        self.template = tree.getroot()
        self.entries = self.template.findall(f"{ATOM}entry")
        self.url = server.route("/api/query", self.answer)

    def answer(self, hit: Hit) -> Reply:
        began = time.monotonic()
        query = hit.query["search_query"][0]
        start = int(hit.query["start"][0])
        time.sleep(self.delay)
        body = self.body(query, start)
        with self._lock:
            self.calls.append(Call(query, start, began, time.monotonic()))
        return Reply(200, body, {"Content-Type": "application/atom+xml"})

    def body(self, query: str, start: int) -> bytes:
        with self._lock:
            number = self._names.setdefault(query, len(self._names) + 1)
        feed = copy.deepcopy(self.template)
        for entry in feed.findall(f"{ATOM}entry"):
            feed.remove(entry)
        feed.find(f"{OPENSEARCH}totalResults").text = str(self.per_query)  # type: ignore[union-attr]
        feed.find(f"{OPENSEARCH}startIndex").text = str(start)  # type: ignore[union-attr]
        for index in range(start, min(start + self.page, self.per_query)):
            entry = copy.deepcopy(self.entries[index % len(self.entries)])
            arxiv_id = f"2512.{number:02d}{index:03d}"
            entry.find(f"{ATOM}id").text = f"http://arxiv.org/abs/{arxiv_id}v1"  # type: ignore[union-attr]
            # A title of its own: a copy of a real title would make title links
            # ambiguous, and which paper won would depend on the order of storing.
            entry.find(f"{ATOM}title").text = f"Result {index} of {query}"  # type: ignore[union-attr]
            published = entry.find(f"{ATOM}published")
            published.text = f"2025-11-{1 + index % 28:02d}T12:00:00Z"  # type: ignore[union-attr]
            feed.append(entry)
        return bytes(etree.tostring(feed, xml_declaration=True, encoding="UTF-8"))

    def of(self, query: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.query == query]


# -- databases and worker processes ---------------------------------------------------------


@pytest.fixture
def make_db(pg_url: str, pg_server: str, worker_id: str) -> Iterator[Callable[[], str]]:
    """Fresh migrated databases on the test server, beyond the first (``pg_url``)."""
    made: list[str] = []
    template = f"lightnews_template_{worker_id}"

    def make() -> str:
        if not made:
            made.append(pg_url)
            return pg_url
        name = f"{urlsplit(pg_url).path.strip('/')}_{len(made)}"
        with psycopg.connect(pg_server, autocommit=True) as admin:
            admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')
        made.append(urlsplit(pg_url)._replace(path="/" + name).geturl())
        return made[-1]

    yield make
    with psycopg.connect(pg_server, autocommit=True) as admin:
        for url in made[1:]:
            admin.execute(f'DROP DATABASE IF EXISTS "{urlsplit(url).path[1:]}" WITH (FORCE)')


def prepare(url: str, api: SlowArxiv, queries: list[str], **settings: Any) -> list[int]:
    """Save the settings the workers read, add one arXiv source per query; their ids."""
    values = {
        "arxiv_api_url": api.url,
        "arxiv_page_size": api.page,
        "arxiv_max_results": 1000,
        "arxiv_interval": 0,
        "allow_private_addresses": "true",
        "resolve_online": "false",
        "semantic": "off",
        "http_backoff": 0,
        "worker_tick": 1,
        "worker_heartbeat": 0.5,
        **settings,
    }
    with PostgresStore(url, pool_size=2) as store:
        for name, value in values.items():
            store.save_setting(name, str(value))
        ids = [store.add_source("arxiv-api", q, now=NOW)[0].id for q in queries]
        store.close()
    if int(values["worker_tick"]) >= 86400:
        no_daily_look(url)
    return ids


def no_daily_look(url: str) -> None:
    """Mark today's and tomorrow's daily looks as done, for tests that want none.

    A daily tick fires at midnight UTC, and a worker that starts in the ten minutes
    after it catches up on it (procrastinate's ``max_delay``): a test run then would
    find a job it did not queue (two tests failed so, just after midnight).
    """
    midnight = datetime.now(UTC).replace(hour=0, minute=0, second=0, microsecond=0)
    stamps = [int(midnight.timestamp()), int((midnight + timedelta(days=1)).timestamp())]
    tasks = [DEFER_TASK, EMBED_TASK, STUBS_TASK, LISTEN_TASK, DIGEST_TASK]
    with psycopg.connect(url, autocommit=True) as conn:
        for task in tasks:
            for stamp in stamps:
                conn.execute(
                    "INSERT INTO procrastinate_periodic_defers (task_name, defer_timestamp) "
                    "VALUES (%s, %s) ON CONFLICT DO NOTHING",
                    (task, stamp),
                )


class WorkerProcess:
    """``lightnews worker`` in a subprocess; what it prints goes to a file."""

    def __init__(self, url: str, log: Path, concurrency: int = 1) -> None:
        self.log = log
        env = {**os.environ, "PYTHONPATH": str(ROOT), "PYTHONUNBUFFERED": "1"}
        with log.open("wb") as out:
            self.process = subprocess.Popen(
                [
                    sys.executable,
                    "-m",
                    "lightnews",
                    "--db",
                    url,
                    "worker",
                    "--concurrency",
                    str(concurrency),
                ],
                stdout=out,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=ROOT,
            )

    def output(self) -> str:
        return self.log.read_text(errors="replace")

    def kill(self) -> None:
        self.process.send_signal(signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                return self.process.wait(60)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait(30)
        return self.process.returncode


@pytest.fixture
def workers() -> Iterator[Callable[..., WorkerProcess]]:
    started: list[WorkerProcess] = []

    def start(url: str, log: Path, concurrency: int = 1) -> WorkerProcess:
        started.append(WorkerProcess(url, log, concurrency))
        return started[-1]

    yield start
    for worker in started:
        worker.stop()


def wait_until(check: Callable[[], bool], what: str, timeout: float = 120.0) -> None:
    deadline = time.monotonic() + timeout
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out waiting until {what}")
        time.sleep(0.1)


def open_jobs(url: str) -> int:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*) FROM procrastinate_jobs WHERE task_name = %s "
            "AND status IN ('todo', 'doing')",
            (REFRESH_TASK,),
        ).fetchone()
    return int(row[0]) if row else 0


def refreshed(url: str, ids: list[int]) -> bool:
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT count(*) FROM sources WHERE id = ANY(%s) AND last_success IS NOT NULL", (ids,)
        ).fetchone()
    return bool(rows and rows[0] == len(ids)) and open_jobs(url) == 0


# -- the command ------------------------------------------------------------------------------


def test_worker_needs_a_postgresql_library(tmp_path: Path) -> None:
    result = CliRunner().invoke(cli, ["--db", str(tmp_path / "lib.db"), "worker"])
    assert result.exit_code == 2
    assert "PostgreSQL" in result.output and "lightnews refresh" in result.output


def test_migrations_bring_the_queue_schema_once(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert migrate(conn) == []  # the template was migrated: nothing left to do
        tables = {r[0] for r in conn.execute("SELECT tablename FROM pg_tables")}
        version = conn.execute("SELECT version FROM queue_schema").fetchall()
    assert {"procrastinate_jobs", "procrastinate_workers", "host_slots"} <= tables
    assert len(version) == 1


# -- the database's share: host turns and source locks ---------------------------------------


def test_host_slots_space_turns_across_connections(pg_url: str) -> None:
    """Four stores (four pools, as four workers would have) share one host's turns.

    Each turn holds the host for its whole request (here 50 ms of work): no two
    overlap, and each starts at least the interval after the previous one ended,
    however late a busy machine wakes a thread.
    """
    stores = [PostgresStore(pg_url, pool_size=2) for _ in range(4)]
    turns: list[tuple[float, float]] = []
    lock = threading.Lock()

    def go(store: PostgresStore) -> None:
        slots = HostSlots(store.pool)
        for _ in range(3):
            with slots.turn("export.arxiv.org", 0.2):
                began = time.monotonic()
                time.sleep(0.05)  # the request
                ended = time.monotonic()
            with lock:
                turns.append((began, ended))

    try:
        threads = [threading.Thread(target=go, args=(s,)) for s in stores]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        with HostSlots(stores[0].pool).turn("elsewhere.org", 0):  # no interval: no row
            pass
        hosts = [r[0] for r in stores[0].db.execute("SELECT host FROM host_slots")]
    finally:
        for store in stores:
            store.close()
    turns.sort()
    rests = [b[0] - a[1] for a, b in itertools.pairwise(turns)]
    assert len(turns) == 12 and min(rests) >= 0.2 - 0.01  # database and local clocks
    assert turns[-1][0] - turns[0][0] < 11 * 0.25 + 2.0  # turns follow each other
    assert hosts == ["export.arxiv.org"]


def test_a_source_held_elsewhere_is_left_to_its_holder(pg_url: str) -> None:
    first, second = PostgresStore(pg_url, pool_size=2), PostgresStore(pg_url, pool_size=2)
    try:
        with source_turn(first, 7) as mine:
            assert mine
            with source_turn(second, 7) as theirs, source_turn(second, 8) as other:
                assert not theirs and other
        with source_turn(second, 7) as now_free:
            assert now_free
    finally:
        first.close()
        second.close()


# -- workers together -------------------------------------------------------------------------


def test_workers_keep_one_interval_per_host_together(
    make_db: Callable[[], str],
    server: RecordedServer,
    workers: Callable[..., WorkerProcess],
    tmp_path: Path,
) -> None:
    interval = 0.5
    api = SlowArxiv(server, per_query=4, page=2, delay=0.05)
    url = make_db()
    queries = [f"all:topic{i}" for i in range(8)]
    ids = prepare(url, api, queries, arxiv_interval=interval)
    running = [workers(url, tmp_path / f"w{i}.log", concurrency=2) for i in range(3)]
    wait_until(lambda: refreshed(url, ids), "every source is refreshed")
    for worker in running:
        assert worker.stop() == 0
    starts = sorted(c.began for c in api.calls)
    gaps = [b - a for a, b in itertools.pairwise(starts)]
    assert len(starts) == 16  # two pages per source, each asked once
    assert min(gaps) >= interval, f"two requests {min(gaps):.3f}s apart"
    busy = [w for w in running if "arxiv-api all:topic" in w.output()]
    assert len(busy) >= 2, "the sources were not shared between workers"


def test_a_forced_refresh_makes_the_waiting_job_forced(make_db: Callable[[], str]) -> None:
    """A periodic look's job waits for a source; a refresh asked with force must not be
    refused for it (that job would then find the source not due and do nothing)."""
    url = make_db()
    api_url = "http://127.0.0.1:9/api/query"  # nothing runs the jobs here
    with PostgresStore(url, pool_size=2) as store:
        store.save_setting("arxiv_api_url", api_url)
        (source,) = [store.add_source("arxiv-api", "all:forced", now=NOW)[0].id]
    assert queue_refresh(url, [source]) == 1
    assert queue_refresh(url, [source]) == 0  # one waits already
    assert queue_refresh(url, [source], force=True) == 1  # it waits forced now
    assert queue_refresh(url, [source], force=True) == 0
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT args FROM procrastinate_jobs WHERE task_name = %s", (REFRESH_TASK,)
        ).fetchall()
    assert [r[0] for r in rows] == [{"source_id": source, "force": True}]


def test_a_source_is_fetched_by_one_worker_at_a_time(
    make_db: Callable[[], str],
    server: RecordedServer,
    workers: Callable[..., WorkerProcess],
    tmp_path: Path,
) -> None:
    api = SlowArxiv(server, per_query=8, page=2, delay=0.3)
    url = make_db()
    (source,) = prepare(url, api, ["all:busy"], worker_tick=86400)
    running = [workers(url, tmp_path / f"w{i}.log", concurrency=2) for i in range(2)]
    # Queued once; once it is being fetched, queued again, by force (no periodic look
    # comes within the day of worker_tick).
    assert queue_refresh(url, [source]) == 1
    wait_until(lambda: len(api.of("all:busy")) >= 1, "the first run has begun", timeout=60)
    assert queue_refresh(url, [source], force=True) == 1
    assert queue_refresh(url, [source], force=True) == 0  # one waiting already
    wait_until(lambda: open_jobs(url) == 0 and len(api.of("all:busy")) >= 5, "both runs end")
    for worker in running:
        assert worker.stop() == 0
    calls = sorted(api.of("all:busy"), key=lambda c: c.began)
    assert [c.start for c in calls] == [0, 2, 4, 6, 0]  # a whole run, then a second one
    for earlier, later in itertools.pairwise(calls):
        assert later.began >= earlier.ended, "two requests for one source at once"


def _content(url: str) -> dict[str, str]:
    """Every row that a refresh stores, by natural keys, without ids or times.

    Ids come from sequences (a transaction cut short by a kill uses some up)
    and times from the clock, so neither can match between two runs; every
    other stored value must.
    """
    queries = {
        "papers": "SELECT arxiv_id, title, abstract, authors, categories, published, updated, "
        "versions, content_hash FROM papers",
        "authorships": "SELECT p.arxiv_id, a.position, a.name, a.name_key FROM authorships a "
        "JOIN papers p ON p.id = a.paper_id",
        "items": "SELECT s.address, i.key, i.kind, i.title, i.url, i.text, i.content_hash, "
        "p.arxiv_id FROM items i JOIN sources s ON s.id = i.source_id "
        "LEFT JOIN papers p ON p.id = i.paper_id",
        "mentions": "SELECT s.address, i.key, p.arxiv_id FROM mentions m "
        "JOIN items i ON i.id = m.item_id JOIN sources s ON s.id = i.source_id "
        "JOIN papers p ON p.id = m.paper_id",
        "paper_vectors": "SELECT p.arxiv_id, v.model, v.vector::text FROM paper_vectors v "
        "JOIN papers p ON p.id = v.paper_id",
        "sources": "SELECT kind, address, cursor, resumption_token, error_count, last_error "
        "FROM sources",
    }
    digests = {}
    with psycopg.connect(url, autocommit=True) as conn:
        for table, sql in queries.items():
            rows = sorted(repr(tuple(r)) for r in conn.execute(sql))
            digests[table] = f"{len(rows)} {hashlib.sha256(repr(rows).encode()).hexdigest()}"
    return digests


def test_a_worker_killed_mid_refresh_loses_nothing(
    make_db: Callable[[], str],
    server: RecordedServer,
    workers: Callable[..., WorkerProcess],
    tmp_path: Path,
) -> None:
    from lightnews.embed import semantic_unavailable

    semantic = "static" if semantic_unavailable(Settings(environ={})) is None else "off"
    api = SlowArxiv(server, per_query=16, page=2, delay=0.4)
    feed = server.route("/digest.json", Reply(200, (DEMO / "blog-digest.feed.json").read_bytes()))
    queries = ["all:long", "all:short"]

    def library() -> tuple[str, list[int]]:
        url = make_db()
        ids = prepare(url, api, queries, semantic=semantic)
        with PostgresStore(url, pool_size=2) as store:
            ids.append(store.add_source("feed", feed, now=NOW)[0].id)
            store.close()
        return url, ids

    def done(url: str, ids: list[int]) -> bool:
        if not refreshed(url, ids):
            return False
        with psycopg.connect(url, autocommit=True) as conn:
            row = conn.execute("SELECT count(*) FROM embed_queue").fetchone()
        return semantic == "off" or (row is not None and row[0] == 0)

    # One clean run.
    clean, clean_ids = library()
    only = workers(clean, tmp_path / "clean.log")
    wait_until(lambda: done(clean, clean_ids), "the clean run is done", timeout=180)
    assert only.stop() == 0
    clean_calls = len(api.of("all:long"))
    assert clean_calls == 8

    # The same, with the worker killed in the middle of the long source.
    killed, killed_ids = library()
    first = workers(killed, tmp_path / "first.log")
    wait_until(lambda: len(api.of("all:long")) >= clean_calls + 3, "the long source is begun")
    first.kill()
    with psycopg.connect(killed, autocommit=True) as conn:
        (last_success,) = conn.execute(
            "SELECT last_success FROM sources WHERE address = 'all:long'"
        ).fetchone() or (None,)
    assert last_success is None  # killed in the middle, indeed
    second = workers(killed, tmp_path / "second.log")
    wait_until(lambda: done(killed, killed_ids), "the second worker has finished", timeout=180)
    assert second.stop() == 0
    assert "arxiv-api all:long" in second.output()  # the job ran again, on the second worker

    assert _content(killed) == _content(clean)
    counts = {t: n for t, (n, _) in checksums(killed).items()}
    assert counts == {t: n for t, (n, _) in checksums(clean).items()}
    assert counts["papers"] >= 16 * 2 and counts["mentions"] > 0
    assert counts["paper_vectors"] > 0 or semantic == "off"
    assert set(counts) == set(TABLES)


def test_queue_refresh_runs_from_outside_a_worker(pg_url: str) -> None:
    """Deferring needs no worker: jobs wait in the queue until one comes."""
    with PostgresStore(pg_url, pool_size=2) as store:
        source = store.add_source("feed", "http://127.0.0.1:9/feed", now=NOW)[0].id
        store.close()
    assert queue_refresh(pg_url, [source]) == 1
    assert queue_refresh(pg_url, [source]) == 0
    assert open_jobs(pg_url) == 1


def test_a_dead_workers_job_queued_anew_meanwhile_runs_once(
    make_db: Callable[[], str],
    server: RecordedServer,
    workers: Callable[..., WorkerProcess],
    tmp_path: Path,
) -> None:
    """The source was queued again while its job still looked running: that job is closed."""
    api = SlowArxiv(server, per_query=12, page=2, delay=0.3)
    url = make_db()
    (source,) = prepare(url, api, ["all:again"], worker_tick=86400)
    assert queue_refresh(url, [source]) == 1
    first = workers(url, tmp_path / "first.log")
    wait_until(lambda: len(api.of("all:again")) >= 2, "the first run has begun")
    first.kill()
    assert queue_refresh(url, [source]) == 1  # its job is 'doing': the queueing lock is free
    second = workers(url, tmp_path / "second.log")
    wait_until(lambda: refreshed(url, [source]), "the source is refreshed")
    assert second.stop() == 0
    assert "closed: the same job waits" in second.output()
    assert second.output().count("arxiv-api all:again") == 1
    with psycopg.connect(url, autocommit=True) as conn:
        statuses = [r[0] for r in conn.execute("SELECT status FROM procrastinate_jobs")]
        papers = conn.execute("SELECT count(*) FROM papers").fetchone()
    assert statuses == ["failed"]  # the dead worker's; the one that ran succeeded and went
    assert papers is not None and papers[0] == 12


def test_a_slow_workers_job_stays_with_it_and_a_dead_ones_goes_back(
    make_db: Callable[[], str],
    server: RecordedServer,
    workers: Callable[..., WorkerProcess],
    tmp_path: Path,
) -> None:
    """Missed heartbeats alone hand nothing back: only a job no live connection holds."""
    import asyncio

    from lightnews.worker.queue import build_app, recover_once

    api = SlowArxiv(server, per_query=12, page=2, delay=0.5)
    url = make_db()
    # A minute between beats: the worker's row stays as the test leaves it.
    (source,) = prepare(url, api, ["all:slow"], worker_tick=86400, worker_heartbeat=60)
    assert queue_refresh(url, [source]) == 1
    slow = workers(url, tmp_path / "slow.log")
    wait_until(lambda: len(api.of("all:slow")) >= 2, "the run has begun")

    def silent_for_ten_minutes() -> None:
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute(
                "UPDATE procrastinate_workers SET last_heartbeat = now() - interval '10 minutes'"
            )

    def recover() -> list[str]:
        async def once() -> list[str]:
            app = build_app(url)
            async with app.open_async():
                return await recover_once(app, url, 30.0)

        return asyncio.run(once())

    def status() -> str:
        with psycopg.connect(url, autocommit=True) as conn:
            rows = conn.execute(
                "SELECT status FROM procrastinate_jobs WHERE task_name = %s", (REFRESH_TASK,)
            ).fetchall()
        assert len(rows) == 1, rows  # the one job, and no other queued beside it
        return str(rows[0][0])

    silent_for_ten_minutes()
    said = recover()
    assert len(said) == 1 and "slow to beat: left" in said[0]
    assert status() == "doing"
    slow.kill()
    said = recover()
    assert len(said) == 1 and "of a dead worker queued again" in said[0]
    assert status() == "todo"
    second = workers(url, tmp_path / "second.log")
    wait_until(lambda: refreshed(url, [source]), "the source is refreshed")
    assert second.stop() == 0
    with psycopg.connect(url, autocommit=True) as conn:
        papers = conn.execute("SELECT count(*) FROM papers").fetchone()
    assert papers is not None and papers[0] == 12


# -- the tick ---------------------------------------------------------------------------------


def firings(cron: str, start: float, until: float) -> list[int]:
    """When procrastinate's periodic deferrer fires ``cron`` after ``start`` (its own croniter)."""
    from procrastinate.periodic import PeriodicDeferrer, PeriodicRegistry, PeriodicTask

    nothing: Any = None  # the deferrer reads the cron only
    task: Any = PeriodicTask(task=nothing, cron=cron, periodic_id="", configure_kwargs={})
    deferrer = PeriodicDeferrer(registry=PeriodicRegistry())  # type: ignore[no-untyped-call]
    return list(deferrer.get_timestamps(periodic_task=task, since=int(start), until=until))


@pytest.mark.parametrize(
    ("tick", "period"),
    [
        (1, 1),
        (5, 5),
        (10, 10),
        (45, 30),
        (60, 60),
        (90, 60),
        (300, 300),
        (420, 360),
        (3600, 3600),
        (5 * 3600, 4 * 3600),
        (86400, 86400),
        (7 * 86400, 86400),
    ],
)
def test_the_periodic_jobs_fire_every_tick(tick: int, period: int) -> None:
    """As procrastinate reads the cron (seconds last), a look comes every tick, evenly.

    ``0 */1 * * * *`` (the tick of 60 before) fired at 02:00:00, 02:00:01 ...
    after 01:07:30: every second of minute 0 of each hour, and no other minute.
    """
    from datetime import UTC, datetime

    from lightnews.worker.queue import cron_every, tick_period

    assert tick_period(tick) == period
    for start in ("2026-01-01T01:07:30", "2026-01-01T23:59:59.5", "2026-03-31T00:00:00"):
        at = datetime.fromisoformat(start).replace(tzinfo=UTC).timestamp()
        fired = firings(cron_every(tick), at, at + 4 * period)
        assert 0 < fired[0] - at <= period, (start, fired)
        assert [b - a for a, b in itertools.pairwise(fired)] == [period] * (len(fired) - 1)
        assert len(fired) >= 4, (start, fired)


def test_a_worker_registers_its_periodic_jobs_on_the_tick(pg_url: str) -> None:
    from lightnews.worker.jobs import Worker
    from lightnews.worker.queue import build_app, cron_every

    worker = Worker(pg_url)
    try:
        app = build_app(pg_url, worker, tick=60)
        crons = {t.cron for t in app.periodic_registry.periodic_tasks.values()}
    finally:
        worker.close()
    assert crons == {cron_every(60)} == {"*/1 * * * *"}


def last_success(url: str, source: int) -> str | None:
    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute("SELECT last_success FROM sources WHERE id = %s", (source,)).fetchone()
    return None if row is None or row[0] is None else str(row[0])


def test_the_status_tells_a_fetch_under_way_from_a_failed_one(pg_url: str) -> None:
    """``worker --status`` reads the latest fetch's outcome from its stamps: one that ended
    seconds after it began is ok (under load a fetch spans a second, and was said to have
    failed), one that has not ended is under way."""
    from lightnews.worker.queue import read_status

    with PostgresStore(pg_url, pool_size=2) as store:
        row = store.add_source("arxiv-api", "all:status", now=NOW)[0]
        cases = [  # last_attempt, last_success, last_error_at: what the status says
            ("12:53:01", "12:53:03", None, "ok"),
            ("12:53:05", "12:53:03", None, "under way"),
            ("12:53:05", "12:53:03", "12:53:06", "failed"),
            ("12:53:05", "12:53:07", "12:53:07", "failed"),  # stored, with problems
            ("12:53:08", "12:53:09", "12:53:07", "ok"),  # after a failure
        ]
        for attempt, success, error_at, outcome in cases:
            stamps = [
                None if t is None else f"2026-12-07T{t}Z" for t in (attempt, success, error_at)
            ]
            store.db.execute(
                "UPDATE sources SET last_attempt = ?, last_success = ?, last_error_at = ? "
                "WHERE id = ?",
                (*stamps, row.id),
            )
            said = read_status(store).last_attempt
            assert said is not None and said.endswith(f"at {stamps[0]} ({outcome})"), said


def test_a_worker_as_deployed_refreshes_a_due_source_within_its_tick(
    pg_url: str, server: RecordedServer, workers: Callable[..., WorkerProcess], tmp_path: Path
) -> None:
    """The default tick and heartbeat (60 s, 10 s), nothing forced: a due source is fetched
    within a tick of the worker's start, and again within a tick of being due again."""
    api = SlowArxiv(server, per_query=2, page=2, delay=0.0)
    (source,) = prepare(pg_url, api, ["all:tick"], worker_tick=60, worker_heartbeat=10)
    began = time.monotonic()
    worker = workers(pg_url, tmp_path / "worker.log")
    wait_until(lambda: last_success(pg_url, source) is not None, "the first refresh", 60 + 15)
    first = time.monotonic() - began
    with psycopg.connect(pg_url, autocommit=True) as conn:  # due again
        conn.execute("UPDATE sources SET next_attempt = NULL WHERE id = %s", (source,))
    done = last_success(pg_url, source)
    due = time.monotonic()
    wait_until(lambda: last_success(pg_url, source) != done, "the second refresh", 60 + 15)
    second = time.monotonic() - due
    status = CliRunner().invoke(cli, ["--db", pg_url, "worker", "--status"])
    assert status.exit_code == 0, status.output
    assert "workers: 1 alive" in status.output
    assert f"last fetch: #{source} arxiv-api all:tick at " in status.output
    assert "(ok)" in status.output and "sources due now: 0" in status.output
    with open_store(pg_url) as store:
        store.add_user("ada", hash_password("ada's password"), admin=True, now=iso(utc_now()))
    with client_for(pg_url) as ada:  # and the same on /admin
        sign_in(ada, "ada")
        admin = ada.get("/admin").text
    assert "workers: 1 alive" in admin and f"last fetch: #{source} arxiv-api" in admin
    assert "no worker is running" not in admin
    assert worker.stop() == 0
    said = worker.output()
    assert f"queued #{source} arxiv-api all:tick" in said
    assert f"#{source} arxiv-api all:tick: " in said  # the job's end
    assert len(api.of("all:tick")) == 2
    print(f"first refresh {first:.1f} s after the start, the next {second:.1f} s after due")
