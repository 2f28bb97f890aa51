"""Benchmark: the feed ranks a fixed candidate window, whatever --limit asks for.

Builds a library larger than the window (``--papers`` papers, ``--items``
articles naming them, spread over time), then times ``rank_stories`` at
several limits and checks that every shorter feed is the head of the longest
one, with the same items and counts in each story.

    .venv/bin/python bench/feed_window.py --papers 20000 --items 60000
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from lightnews.model import Author, Item, Mention, Paper  # noqa: E402
from lightnews.normalize.times import iso  # noqa: E402
from lightnews.rank import FEED_ITEMS, FEED_PAPERS, rank_stories  # noqa: E402
from lightnews.store import LOCAL_READER, SQLiteStore  # noqa: E402

START = datetime(2025, 1, 1, tzinfo=UTC)


def build(store: SQLiteStore, papers: int, items: int) -> None:
    now = iso(START)
    rows = [
        Paper(
            arxiv_id=f"25{1 + n // 90000:02d}.{10000 + n % 90000}",
            title=f"Study {n}",
            abstract="A study.",
            authors=[Author(name=f"Author {n % 997}")],
            categories=["cs.LG"],
            published=iso(START + timedelta(minutes=20 * n)),
        )
        for n in range(papers)
    ]
    with store.transaction():
        store.save_papers(rows, now)
    source, _ = store.add_source("feed", "https://crowd.example/feed.xml", now=now)
    span = 20 * papers / items
    batch = [
        Item(
            key=f"a{n}",
            kind="article",
            title=f"On {rows[(n * 7919) % papers].arxiv_id}",
            url=f"https://crowd.example/{n}",
            published=iso(START + timedelta(minutes=span * n)),
            engagement={"likes": n % 97},
            mentions=[Mention(rows[(n * 7919) % papers].arxiv_id, "arxiv-url", 1.0)],
        )
        for n in range(items)
    ]
    store.save_items(source.id, batch, now)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=20000)
    parser.add_argument("--items", type=int, default=60000)
    parser.add_argument("--repeat", type=int, default=15)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "window.db")
        started = time.perf_counter()
        build(store, args.papers, args.items)
        print(
            f"library: {args.papers:,} papers, {args.items:,} items in "
            f"{time.perf_counter() - started:.1f}s; window {FEED_PAPERS} papers, "
            f"{FEED_ITEMS} items"
        )
        whole = rank_stories(store, LOCAL_READER, limit=None)
        seen = [(s.key, sorted(i.key for i in s.items), s.why) for s in whole]
        for limit in (1, 10, 30, 50, None):
            times = []
            for _ in range(args.repeat):
                started = time.perf_counter()
                feed = rank_stories(store, LOCAL_READER, limit=limit)
                times.append((time.perf_counter() - started) * 1000)
            head = [(s.key, sorted(i.key for i in s.items), s.why) for s in feed]
            same = head == seen[: len(head)]
            median = statistics.median(times)
            print(
                f"limit {limit!s:>4}: {len(feed):>4} stories, median {median:6.1f} ms, "
                f"max {max(times):6.1f} ms, head of the whole ranking: {same}"
            )
            assert same
        store.close()


if __name__ == "__main__":
    main()
