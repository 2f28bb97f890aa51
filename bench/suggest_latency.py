"""Benchmark: follow suggestions on a library that has heard a large network.

The suggestions page is computed when asked (nothing precomputed), so its cost
must stay small when the listener has filled the accounts and network tables.
On a scratch SQLite library (made in a temporary folder, never a shared one)
it builds the demo library, then adds what a long listening run leaves:
``--accounts`` accounts heard (no profile: a handle only, as the listener notes
them, a tenth with a display name), ``--scholars`` followed scholars with
DIDs, ``--shares`` reposts and quotes by them of ``--authors`` accounts, and
``--follows`` follow edges from them. It then times ``follow_suggestions``
(``--runs`` times, after one warm-up) and, as a ceiling in the same run, the
bare reads it makes (the store calls alone, no ranking).

    .venv/bin/python bench/suggest_latency.py
    .venv/bin/python bench/suggest_latency.py --accounts 1000000 --shares 100000

Pass: median under ``--target`` ms (default 500, a page's budget).
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from lightnews.demo import build_demo
from lightnews.model import NetworkMention, NetworkPost
from lightnews.rank.suggest import follow_suggestions
from lightnews.settings import Settings
from lightnews.sources.jetstream import SERVICE
from lightnews.store import SQLiteStore
from lightnews.store.network import ListenCursor
from lightnews.store.readers import LOCAL_READER

NOW = "2026-12-03T08:00:00Z"


def _build(store: SQLiteStore, args: argparse.Namespace) -> None:
    rng = random.Random(0)
    build_demo(store, Settings(environ={}).with_overrides(resolve_online=False, semantic="off"))
    for start in range(0, args.accounts, 50_000):
        batch = range(start, min(start + 50_000, args.accounts))
        store.note_accounts(
            SERVICE, {f"did:plc:heard{n:019d}": f"h{n}.bsky.social" for n in batch}, NOW
        )
        with store.transaction():
            store.db.executemany(
                "UPDATE accounts SET name = ? WHERE service = ? AND id = ?",
                [(f"Person {n}", SERVICE, f"did:plc:heard{n:019d}") for n in batch if n % 10 == 0],
            )
    scholars = [f"did:plc:scholar{n:017d}" for n in range(args.scholars)]
    for n, did in enumerate(scholars):
        sid = store.create_scholar(f"Scholar {n}", NOW)
        store.add_identity(sid, "bluesky-did", did)
        store.set_followed(LOCAL_READER, sid, True, NOW)
    authors = [f"did:plc:heard{n:019d}" for n in range(args.authors)]
    posts = []
    for n in range(args.shares):
        by, author = rng.choice(scholars), rng.choice(authors)
        kind = "repost" if n % 4 else "quote"
        collection = "app.bsky.feed.repost" if kind == "repost" else "app.bsky.feed.post"
        posts.append(
            NetworkPost(
                f"at://{by}/{collection}/s{n}",
                by,
                kind,
                1_700_000_000 + n,
                (NetworkMention("2511.18342", "id", 1.0),),
                f"at://{author}/app.bsky.feed.post/p{n}",
            )
        )
    for start in range(0, len(posts), 10_000):
        store.save_network(posts[start : start + 10_000], [], ListenCursor("bench", 1), NOW)
    for did in scholars:
        store.save_follows(did, rng.sample(authors, args.follows // len(scholars)), NOW)


def _reads(store: SQLiteStore, bar: float) -> None:
    """The store calls suggestions make, without the ranking (the ceiling)."""
    followed = store.followed_accounts(LOCAL_READER)
    store.account_items(sorted(followed), limit=2_000)
    store.network_shares(sorted(followed))
    store.follows_of(sorted(followed))
    store.scholars_paper_ids(sorted(store.follows(LOCAL_READER)), bar)
    store.social_identities()


def _timed(call: object, runs: int) -> list[float]:
    found = []
    for _ in range(runs):
        start = time.perf_counter()
        call()  # type: ignore[operator]
        found.append((time.perf_counter() - start) * 1000)
    return found


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--accounts", type=int, default=1_000_000)
    parser.add_argument("--scholars", type=int, default=100)
    parser.add_argument("--authors", type=int, default=20_000)
    parser.add_argument("--shares", type=int, default=100_000)
    parser.add_argument("--follows", type=int, default=50_000)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--target", type=float, default=500.0)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        store = SQLiteStore(Path(folder) / "suggest.db")
        started = time.perf_counter()
        _build(store, args)
        print(
            f"built in {time.perf_counter() - started:.0f} s: {args.accounts} accounts, "
            f"{args.scholars} followed scholars, {args.shares} shares of {args.authors} "
            f"accounts, {args.follows} follow edges"
        )
        bar = 0.5
        found = follow_suggestions(store, LOCAL_READER, bar=bar, limit=50)  # warm-up
        full = _timed(lambda: follow_suggestions(store, LOCAL_READER, bar=bar, limit=50), args.runs)
        ceiling = _timed(lambda: _reads(store, bar), args.runs)
        store.close()
    median, floor = statistics.median(full), statistics.median(ceiling)
    print(
        f"suggestions: {len(found)} shown; first: {found[0].label if found else '-'} "
        f"({found[0].reasons[0].text if found else ''})"
    )
    print(f"follow_suggestions: median {median:.0f} ms, max {max(full):.0f} ms ({args.runs} runs)")
    print(f"ceiling (its store reads alone): median {floor:.0f} ms; ratio {median / floor:.2f}")
    print(
        f"{'PASS' if median < args.target else 'FAIL'}: median {median:.0f} ms "
        f"against a target of {args.target:.0f} ms"
    )


if __name__ == "__main__":
    main()
