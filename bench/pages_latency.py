"""Benchmark: server time of every page type on a large database.

Target (issue "Reading"): pages answer in under 100 ms of server time at
100,000 stories. The pages are requested in-process through the real ASGI
application (Starlette's test client: no network, so the time is the
server's), after a warm-up, several times each; a static file served by the
same application stack is the ceiling measured in the same run.

    .venv/bin/python bench/pages_latency.py --db bench/out/import-200000.db
    .venv/bin/python bench/pages_latency.py --db bench/out/posts-100000.db --profile

On a database of papers alone (the import benchmark's) a scholar is followed
under the name of the newest paper's first author, as before. On a database
with social content (``bench/make_posts_db.py``) nothing is written: the
pages are those that do the most work there, the busiest followed scholar's
posts, the most-mentioned paper's story, the article naming the most papers,
a post, the newest Daily Papers day, and their ``/api`` twins. ``--profile``
prints where the time goes (cProfile) for every page over ``--budget`` ms.
``--contention-pages`` measures the pages the readers of
``bench/write_contention.py`` ask for instead.

Beside the wall time, each row gives the CPU time the process spent on the
request (every thread's): on a machine other programs keep busy, wall time
says how long the page waited for a core, CPU time what the page costs.
"""

from __future__ import annotations

import argparse
import cProfile
import inspect
import io
import pstats
import statistics
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from starlette.testclient import TestClient  # noqa: E402

from lightnews.serve.app import create_app  # noqa: E402
from lightnews.settings import Settings  # noqa: E402
from lightnews.store import SQLiteStore  # noqa: E402


def papers_only_pages(store: SQLiteStore) -> dict[str, str]:
    """The pages of a database of papers: a scholar is followed under an author's name."""
    arxiv_id = store.db.execute(
        "SELECT arxiv_id FROM papers WHERE content_hash IS NOT NULL ORDER BY id DESC LIMIT 1"
    ).fetchone()[0]
    author = store.db.execute(
        "SELECT name FROM authorships ORDER BY paper_id DESC LIMIT 1"
    ).fetchone()[0]
    scholar = store.scholar_by_identity("arxiv-name", author)
    if scholar is None:
        scholar = store.create_scholar(author, "2026-01-01T00:00:00Z")
        store.add_identity(scholar, "arxiv-name", author)
    from lightnews.link.attribution import attribute_scholar

    attribute_scholar(store, scholar)
    return {
        "feed /": "/",
        "story /paper/ID": f"/paper/{arxiv_id}",
        "scholar posts": f"/scholar/{scholar}",
        "scholar papers": f"/scholar/{scholar}?tab=papers",
        "search": "/search?q=diffusion+models",
        "sources": "/sources",
    }


def social_pages(store: SQLiteStore) -> tuple[dict[str, str], list[str]]:
    """The heaviest page of each type on a database with posts, and what was picked."""
    db = store.db
    # The followed scholar whose author feed holds the most posts and reposts.
    scholar, name, feed = db.execute(
        "SELECT sc.id, sc.name, count(*) FROM items i JOIN sources s ON s.id = i.source_id "
        "JOIN scholars sc ON sc.id = s.scholar_id WHERE s.kind = 'bluesky' AND sc.followed = 1 "
        "GROUP BY sc.id ORDER BY count(*) DESC, sc.id LIMIT 1"
    ).fetchone()
    authored = db.execute(
        "SELECT scholar_id, count(*) FROM authorships WHERE scholar_id IS NOT NULL "
        "GROUP BY scholar_id ORDER BY count(*) DESC, scholar_id LIMIT 1"
    ).fetchone()
    top_paper, mentions = db.execute(
        "SELECT p.arxiv_id, count(*) FROM mentions m JOIN papers p ON p.id = m.paper_id "
        "GROUP BY m.paper_id ORDER BY count(*) DESC, p.arxiv_id LIMIT 1"
    ).fetchone()
    quiet = db.execute(
        "SELECT arxiv_id FROM papers p WHERE content_hash IS NOT NULL AND NOT EXISTS "
        "(SELECT 1 FROM mentions m WHERE m.paper_id = p.id) ORDER BY id DESC LIMIT 1"
    ).fetchone()[0]

    def most_mentions(kind: str) -> tuple[int, int] | None:
        return db.execute(
            "SELECT i.id, count(*) FROM items i JOIN mentions m ON m.item_id = i.id "
            "WHERE i.kind = ? GROUP BY i.id ORDER BY count(*) DESC, i.id LIMIT 1",
            (kind,),
        ).fetchone()

    article, post = most_mentions("article"), most_mentions("post")
    day = (store.daily_days() or [None])[0]
    pages = {
        "feed /": "/",
        "story /paper/ID": f"/paper/{top_paper}",
        "story, unmentioned paper": f"/paper/{quiet}",
        "scholar posts": f"/scholar/{scholar}",
        "scholar papers": f"/scholar/{scholar}?tab=papers",
    }
    picked = [
        f"scholar {scholar} ({name}): {feed:,} items in their author feed",
        f"paper {top_paper}: {mentions:,} mentions; unmentioned paper {quiet}",
    ]
    if authored and authored[0] != scholar:
        pages["scholar papers, most attributed"] = f"/scholar/{authored[0]}?tab=papers"
        picked.append(f"scholar {authored[0]}: {authored[1]:,} attributed authorships")
    if article:
        pages["item, article"] = f"/item/{article[0]}"
        picked.append(f"article item {article[0]}: {article[1]} papers named")
    if post:
        pages["item, post"] = f"/item/{post[0]}"
    if day:
        pages["daily"] = "/daily"
        picked.append(f"daily: newest day {day}")
    pages["search"] = "/search?q=diffusion+models"
    pages["sources"] = "/sources"
    # The JSON twins: the same data without the template.
    pages["api feed"] = "/api/feed"
    pages["api story"] = f"/api/paper/{top_paper}"
    pages["api scholar"] = f"/api/scholar/{scholar}"
    if article:
        pages["api item"] = f"/api/item/{article[0]}"
    if day:
        pages["api daily"] = "/api/daily"
    pages["api search"] = "/api/search?q=diffusion+models"
    return pages, picked


def timed(client: TestClient, path: str, repeat: int) -> tuple[list[float], list[float]]:
    """Wall and CPU milliseconds of ``repeat`` requests, each sorted.

    CPU is the process's (every thread: the handler runs in the application's
    thread pool), so on a machine other programs keep busy it still says what
    the page costs, where wall time says how long the page waited for a core.
    """
    assert client.get(path).status_code == 200, path  # warm-up
    times, cpu = [], []
    for _ in range(repeat):
        start, start_cpu = time.perf_counter(), time.process_time()
        client.get(path)
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.process_time() - start_cpu) * 1000)
    return sorted(times), sorted(cpu)


class Profiled:
    """The application, its handlers profiled while ``profiler`` is set.

    Handlers run in the application's thread pool, where a profiler started
    by the caller (or around the ASGI call) sees nothing: each plain handler
    is wrapped to run under the profiler in its own thread.
    """

    def __init__(self, app: Any) -> None:
        from starlette.routing import Route, request_response

        self.app = app
        self.profiler: cProfile.Profile | None = None
        for route in app.router.routes:
            if isinstance(route, Route) and not inspect.iscoroutinefunction(route.endpoint):
                route.app = request_response(self._wrap(route.endpoint))

    def _wrap(self, endpoint: Any) -> Any:
        def handler(request: Any) -> Any:
            profiler = self.profiler
            if profiler is None:
                return endpoint(request)
            profiler.enable()
            try:
                return endpoint(request)
            finally:
                profiler.disable()

        return handler

    async def __call__(self, scope: Any, receive: Any, send: Any) -> None:
        await self.app(scope, receive, send)


def profile(client: TestClient, app: Profiled, path: str, lines: int) -> str:
    app.profiler = profiler = cProfile.Profile()
    for _ in range(3):
        client.get(path)
    app.profiler = None
    out = io.StringIO()
    stats = pstats.Stats(profiler, stream=out).sort_stats("cumulative")
    stats.print_stats(r"lightnews/|sqlite3|jinja2/environment.py.*\(render\)", lines)
    text = out.getvalue()
    return text[text.find("   ncalls") :].rstrip()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=20)
    parser.add_argument("--budget", type=float, default=100.0, help="ms, the target")
    parser.add_argument(
        "--profile", action="store_true", help="print a cProfile of every page over the budget"
    )
    parser.add_argument(
        "--contention-pages",
        action="store_true",
        help="the pages of bench/write_contention.py's readers",
    )
    args = parser.parse_args()
    with SQLiteStore(args.db) as store:
        papers = store.paper_count()
        items = store.db.execute("SELECT count(*) FROM items").fetchone()[0]
        mentions = store.db.execute("SELECT count(*) FROM mentions").fetchone()[0]
        social = store.db.execute("SELECT EXISTS (SELECT 1 FROM accounts)").fetchone()[0]
        pages, picked = social_pages(store) if social else (papers_only_pages(store), [])
    if args.contention_pages:
        from search_bounds import pages as contention_pages

        pages = {path: path for path in contention_pages(args.db)}
        picked = ["the readers' pages of bench/write_contention.py"]
    pages["ceiling: openapi.json"] = "/api/openapi.json"
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    size = args.db.stat().st_size / 1e6
    print(
        f"## Page server time, {papers:,} papers, {items:,} items, {mentions:,} mentions "
        f"({size:,.0f} MB)\n"
    )
    for line in picked:
        print(f"- {line}")
    print("\n| page | median ms | p95 ms | max ms | CPU median ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    slow = []
    app = Profiled(create_app(args.db, settings))
    with TestClient(app, base_url="http://localhost") as client:  # a loopback host name
        for name, path in pages.items():
            times, cpu = timed(client, path, args.repeat)
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
            median = statistics.median(times)
            print(
                f"| {name} | {median:.1f} | {p95:.1f} | {times[-1]:.1f} | "
                f"{statistics.median(cpu):.1f} |",
                flush=True,
            )
            if p95 > args.budget:
                slow.append((name, path))
        if slow:
            print(f"\nOver {args.budget:.0f} ms at p95: " + ", ".join(n for n, _ in slow))
        if args.profile:
            for name, path in slow:
                print(f"\n### Profile: {name} (`{path}`, 3 requests)\n\n```")
                print(profile(client, app, path, 30))
                print("```")
    print(f"\nReproduce: .venv/bin/python bench/pages_latency.py --db {args.db}")


if __name__ == "__main__":
    main()
