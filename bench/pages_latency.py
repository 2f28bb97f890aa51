"""Benchmark: server time of every page type on a large database.

Target (issue "Reading"): pages answer in under 100 ms of server time at
100,000 stories. The pages are requested in-process through the real ASGI
application (Starlette's test client: no network, so the time is the
server's), after a warm-up, several times each; a static file served by the
same application stack is the ceiling measured in the same run.

    .venv/bin/python bench/pages_latency.py --db bench/out/import-200000.db
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from starlette.testclient import TestClient  # noqa: E402

from lightnews.serve.web import create_app  # noqa: E402
from lightnews.settings import Settings  # noqa: E402
from lightnews.store import SQLiteStore  # noqa: E402


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--repeat", type=int, default=20)
    args = parser.parse_args()
    with SQLiteStore(args.db) as store:
        papers = store.paper_count()
        arxiv_id = store.db.execute(
            "SELECT arxiv_id FROM papers WHERE content_hash IS NOT NULL ORDER BY id DESC LIMIT 1"
        ).fetchone()[0]
        author = store.db.execute(
            "SELECT name FROM authorships ORDER BY paper_id DESC LIMIT 1").fetchone()[0]
        scholar = store.scholar_by_identity("arxiv-name", author)
        if scholar is None:
            scholar = store.create_scholar(author, "2026-01-01T00:00:00Z")
            store.add_identity(scholar, "arxiv-name", author)
        from lightnews.link.attribution import attribute_scholar

        attribute_scholar(store, scholar)
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    pages = {
        "feed /": "/",
        "story /paper/ID": f"/paper/{arxiv_id}",
        "scholar posts": f"/scholar/{scholar}",
        "scholar papers": f"/scholar/{scholar}?tab=papers",
        "search": "/search?q=diffusion+models",
        "sources": "/sources",
        "ceiling: openapi.json": "/api/openapi.json",
    }
    print(f"## Page server time, {papers:,} papers ({args.db.stat().st_size / 1e6:,.0f} MB)\n")
    print("| page | median ms | p95 ms | max ms |")
    print("| --- | ---: | ---: | ---: |")
    with TestClient(create_app(args.db, settings)) as client:
        for name, path in pages.items():
            assert client.get(path).status_code == 200, path  # warm-up
            times = []
            for _ in range(args.repeat):
                start = time.perf_counter()
                client.get(path)
                times.append((time.perf_counter() - start) * 1000)
            times.sort()
            p95 = times[min(len(times) - 1, int(0.95 * len(times)))]
            print(f"| {name} | {statistics.median(times):.1f} | {p95:.1f} | {times[-1]:.1f} |")
    print(f"\nReproduce: .venv/bin/python bench/pages_latency.py --db {args.db}")


if __name__ == "__main__":
    main()
