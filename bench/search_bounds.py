"""Benchmark: expensive searches against a real server, and what the other requests feel.

The target (issue 14, "bounded work per request"): a search of 60 prefix
terms (``a* a* …``) answers within 1 s on a 150k-paper library while other
requests keep their normal latency. The probe that filed it measured 30 s,
with every other request waiting behind it (one event loop, blocking SQLite).

It starts ``lightnews serve`` on loopback over the database (from this
checkout, or another one with ``--code`` for an A/B), then, for ``--seconds``
each:

* ``baseline``: two readers GET the usual pages in turn (feed, a story,
  a scholar, a search, sources, the JSON feed), each request timed;
* ``during``: the same readers, while two more clients send expensive
  searches back to back: 60 times ``a*``; 60 different three-letter
  prefixes; four common three-letter prefixes (allowed: stopped by the time
  budget); sixteen common words (allowed).

It reports each expensive query's answer (status, time) and the readers'
p50/p95/p99 in both phases. Nothing is written to the database.

    .venv/bin/python bench/search_bounds.py --db bench/out/posts-150000.db
    .venv/bin/python bench/search_bounds.py --db bench/out/posts-150000.db --code ../main
"""

from __future__ import annotations

import argparse
import json
import sqlite3
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loopback import ROOT, Timings, get_loop, server, summary, timed
from _measure import machine

PREFIXES = (
    "con pre tra rep pro com dis int res sta gen per inf exp sup ima lan lea mod net "
    "opt par pol rob sca sem sim spa tem tex tok uni var vis wei adv agg ali ana app arc "
    "att aug ben cal cla clu coh cro dat dec den dep det dif dim dyn eff emb enc est eva"
).split()[:60]
EXPENSIVE = {
    "60 x a*": " ".join(["a*"] * 60),
    "60 prefixes": " ".join(f"{p}*" for p in PREFIXES),
    "4 common prefixes": "con* pre* tra* rep*",
    "16 common words": (
        "learning model language data training network neural image performance method "
        "task results approach large propose show"
    ),
}


def pages(db: Path) -> list[str]:
    """The readers' pages: a recent story and the busiest scholar come from the database."""
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
        paper = conn.execute(
            "SELECT arxiv_id FROM papers WHERE content_hash IS NOT NULL ORDER BY id DESC LIMIT 1"
        ).fetchone()[0]
        scholar = conn.execute("SELECT min(id) FROM scholars WHERE followed = 1").fetchone()[0]
    found = ["/", f"/paper/{paper}", "/search?q=sparse+attention", "/sources", "/api/feed"]
    if scholar is not None:
        found.insert(2, f"/scholar/{scholar}")
    return found


def expensive_loop(
    base: str, stop: threading.Event, timings: Timings, offset: int
) -> threading.Thread:
    def run() -> None:
        names = list(EXPENSIVE)
        with httpx.Client(timeout=120) as client:
            n = offset
            while not stop.is_set():
                name = names[n % len(names)]
                query = {"q": EXPENSIVE[name]}
                timed(timings, name, lambda q=query: client.get(f"{base}/api/search", params=q))
                n += 1

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def phase(base: str, paths: list[str], seconds: float, expensive: bool) -> dict[str, Any]:
    stop = threading.Event()
    readers, costly = Timings(), Timings()
    threads = [get_loop(base, paths, stop, readers) for _ in range(2)]
    if expensive:
        threads += [expensive_loop(base, stop, costly, offset) for offset in (0, 2)]
    time.sleep(seconds)
    stop.set()
    for thread in threads:
        thread.join()
    result: dict[str, Any] = {
        "readers": summary(readers.all_ms()),
        "readers_by_page": {k: summary(v) for k, v in readers.ms.items()},
        "reader_statuses": readers.statuses,
        "reader_errors": readers.errors,
    }
    if expensive:
        result["expensive"] = {
            name: {**summary(costly.ms.get(name, [])), "statuses": costly.statuses.get(name, {})}
            for name in EXPENSIVE
        }
        result["expensive_errors"] = costly.errors
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, required=True)
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout to serve from")
    parser.add_argument("--seconds", type=float, default=20.0, help="per phase")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    paths = pages(args.db)
    with server(args.db, args.code.resolve()) as base:
        with httpx.Client(timeout=120) as client:  # warm: caches, the vector index
            for path in paths * 2:
                client.get(base + path)
        baseline = phase(base, paths, args.seconds, expensive=False)
        during = phase(base, paths, args.seconds, expensive=True)
    results = {
        "machine": machine(),
        "code": str(args.code.resolve()),
        "db": str(args.db),
        "seconds": args.seconds,
        "baseline": baseline,
        "during": during,
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(f"## Expensive searches on {args.db.name} (code: {args.code.resolve()})\n")
    print("| query | answers | status | p50 ms | max ms |")
    print("| --- | ---: | --- | ---: | ---: |")
    for name, row in during["expensive"].items():
        statuses = ", ".join(f"{s}×{c}" for s, c in sorted(row["statuses"].items()))
        print(f"| {name} | {row['n']} | {statuses} | {row['p50']} | {row['max']} |")
    print("\n| readers | requests | p50 ms | p95 ms | p99 ms | max ms | statuses |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for label, data in (("baseline", baseline), ("during expensive searches", during)):
        row = data["readers"]
        counts: dict[int, int] = {}
        for by_status in data["reader_statuses"].values():
            for status, count in by_status.items():
                counts[status] = counts.get(status, 0) + count
        statuses = ", ".join(f"{s}×{c}" for s, c in sorted(counts.items()))
        print(
            f"| {label} | {row['n']} | {row['p50']} | {row['p95']} | {row['p99']} | "
            f"{row['max']} | {statuses} |"
        )
    print(json.dumps({"baseline": baseline["readers"], "during": during["readers"]}))


if __name__ == "__main__":
    main()
