"""The Jetstream listener: the filter, replays, a real websocket server that misbehaves, kill -9."""

from __future__ import annotations

import asyncio
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import orjson
import pytest

from conftest import ROOT
from lightnews.ingest.listen import Listener, listen_websocket, replay_file
from lightnews.settings import Settings
from lightnews.sources.jetstream import POST, REPOST, NetworkFilter, subscribe_url
from lightnews.sources.jetstream_fixtures import (
    EventMaker,
    SeedRecord,
    commit_event,
    identity_event,
    seed_records,
    text_record,
)
from lightnews.store import SQLiteStore, Store

SCHOLAR = "did:plc:ggectctbnnfbhajffo242o2o"  # the seed author (mkirchhof)
MALFORMED = [
    b"not json at all",
    b"[1, 2, 3]",
    b'{"did": "did:plc:x", "kind": "commit"}',
    b'{"did": "did:plc:x", "time_us": 5, "kind": "commit", "commit": {"operation": 3}}',
    b'{"did": "did:plc:x", "time_us": 7, "kind": "labels", "labels": []}',
    '{"did": "did:plc:x", "time_us": 9, "kind": "commit", "commit": '
    '{"operation": "create", "collection": "app.bsky.feed.post", "rkey": "r", '
    '"record": {"text": "arxiv.org/abs/2401.00001 ✓'.encode(),
]

OTHER_TITLES = (
    "Attention Is All You Need",
    "Deep Residual Learning for Image Recognition",
    "Language Models are Few-Shot Learners",
    "Denoising Diffusion Probabilistic Models",
    "Scaling Laws for Neural Language Models",
    "Direct Preference Optimization",
    "LoRA: Low-Rank Adaptation of Large Language Models",
    "Uncertainty Quantification in Deep Learning: A Survey",
)


@pytest.fixture
def seeds(shared: Path) -> list[SeedRecord]:
    return seed_records(shared)


def _kept(lines: list[bytes]) -> set[str]:
    """The URIs a filter keeps from these events (no scholars: ids and links only)."""
    found = NetworkFilter()
    return {h.post.uri for raw in lines if (h := found.read(raw)) and h.post is not None}


# -- the filter ---------------------------------------------------------------------------------


def test_seed_posts_are_kept_with_their_papers(seeds: list[SeedRecord]) -> None:
    found = NetworkFilter()
    papers = {}
    for n, seed in enumerate(seeds):
        raw = orjson.dumps(commit_event(seed.did, 1000 + n, POST, seed.rkey, seed.record))
        heard = found.read(raw)
        assert heard is not None and heard.time_us == 1000 + n
        if heard.post is not None:
            papers[heard.post.uri] = {m.paper for m in heard.post.mentions}
    # The pinned post's link is whole in its facet (cut short in the text), the quote
    # post names its paper in its own text: both are kept.
    assert papers[f"at://{SCHOLAR}/{POST}/3l224rdyyyg22"] == {"2505.20295"}
    assert any("2508.21184" in p for p in papers.values())
    assert found.counts.kept == len(papers) and found.counts.malformed == 0
    # Posts naming no paper (the atproto recordings, most thread replies) are not kept.
    assert len(papers) < len(seeds)


def test_posts_naming_no_paper_still_move_the_cursor_and_bad_events_are_counted() -> None:
    found = NetworkFilter()
    plain = orjson.dumps(commit_event("did:plc:a", 42, POST, "3k1", text_record("hello sky")))
    heard = found.read(plain)
    assert heard is not None and heard.time_us == 42 and heard.post is None
    assert found.counts.skipped == 1 and found.counts.read == 0  # ruled out unread
    for raw in MALFORMED:
        assert found.read(raw) is None
    assert found.counts.malformed == len(MALFORMED) - 1 and found.counts.unknown == 1
    identity = found.read(orjson.dumps(identity_event("did:plc:a", 50, "a.example.org")))
    assert identity is not None and identity.handle == ("did:plc:a", "a.example.org")


def test_dois_openreview_quotes_reposts_and_deletes() -> None:
    found = NetworkFilter()
    doi = text_record(
        "Out in Nature: doi.org/10.1038/s41586-024-07421-0 and openreview.net/forum?id=Abc123xyz"
    )
    heard = found.read(orjson.dumps(commit_event("did:plc:d", 1, POST, "3kd", doi)))
    assert heard is not None and heard.post is not None
    assert {m.paper for m in heard.post.mentions} == {
        "doi:10.1038/s41586-024-07421-0",
        "openreview:Abc123xyz",
    }
    bare = text_record("We extend 10.1145/3592979 to sparse grids.")
    heard = found.read(orjson.dumps(commit_event("did:plc:d", 2, POST, "3ke", bare)))
    assert heard is not None and heard.post is not None
    original = f"at://did:plc:d/{POST}/3kd"
    quote = {
        **text_record("this!"),
        "embed": {"$type": "app.bsky.embed.record", "record": {"uri": original, "cid": "bafy"}},
    }
    heard = found.read(orjson.dumps(commit_event("did:plc:q", 3, POST, "3kq", quote)))
    assert heard is not None and heard.post is not None and heard.post.kind == "quote"
    assert "openreview:Abc123xyz" in {m.paper for m in heard.post.mentions}
    repost = {
        "$type": REPOST,
        "subject": {"uri": original, "cid": "bafy"},
        "createdAt": "2024-12-03T10:00:00Z",
    }
    heard = found.read(orjson.dumps(commit_event("did:plc:r", 4, REPOST, "3kr", repost)))
    assert heard is not None and heard.post is not None and heard.post.kind == "repost"
    other = {**repost, "subject": {"uri": f"at://did:plc:z/{POST}/1", "cid": "b"}}
    heard = found.read(orjson.dumps(commit_event("did:plc:r", 5, REPOST, "3ks", other)))
    assert heard is not None and heard.post is None and found.counts.read == 3
    gone = found.read(
        orjson.dumps(commit_event("did:plc:d", 6, POST, "3kd", None, operation="delete"))
    )
    assert gone is not None and gone.deleted == original


# -- replays and the store ----------------------------------------------------------------------


def _events_file(tmp_path: Path, seeds: list[SeedRecord], count: int) -> tuple[Path, list[bytes]]:
    lines = list(EventMaker(seeds, seed=3, paper_share=0.05).lines(count))
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join([*lines[:50], *MALFORMED, *lines[50:]]) + b"\n\n")
    return path, lines


def test_replay_stores_each_post_once_and_saves_the_cursor(
    store: Store, seeds: list[SeedRecord], tmp_path: Path
) -> None:
    path, lines = _events_file(tmp_path, seeds, 3000)
    expected = _kept(lines)
    assert len(expected) > 50
    first = replay_file(store, Settings(environ={}), path)
    assert first.stored == len(expected) == store.network_post_count()
    assert first.counts.malformed == len(MALFORMED) - 1 and first.counts.unknown == 1
    cursor = store.listen_cursor(path.resolve().as_uri())
    assert cursor is not None and cursor.time_us == orjson.loads(lines[-1])["time_us"]
    again = replay_file(store, Settings(environ={}), path)
    assert again.stored == 0 and store.network_post_count() == len(expected)


def test_scholars_posts_are_matched_by_title_too(
    store: Store, seeds: list[SeedRecord], tmp_path: Path
) -> None:
    from lightnews.model import Paper

    now = "2025-07-01T00:00:00Z"
    # Titles are weighed by how rare their words are: a library of more than one paper.
    store.save_papers(
        [
            Paper(f"2401.{n:05d}", title=t, published="2024-01-02")
            for n, t in enumerate(OTHER_TITLES)
        ],
        now,
    )
    title = "SelfReflect: Can LLMs Communicate Their Internal Answer Distribution?"
    store.save_papers([Paper("2505.20295", title=title, published="2025-05-26")], now)
    scholar = store.create_scholar("Michael Kirchhof", now)
    store.add_identity(scholar, "bluesky-did", SCHOLAR)
    text = text_record(f"Our {title} is out, come by the poster", "2025-07-03T14:00:00Z")
    stranger = orjson.dumps(commit_event("did:plc:stranger", 10, POST, "3a", text))
    own = orjson.dumps(commit_event(SCHOLAR, 11, POST, "3b", text))
    path = tmp_path / "titles.jsonl"
    path.write_bytes(stranger + b"\n" + own + b"\n")
    report = replay_file(store, Settings(environ={}), path)
    assert report.stored == 1
    assert [s.did for s in store.network_mentions_of("bluesky", "2505.20295")] == [SCHOLAR]


# -- a real websocket server --------------------------------------------------------------------


class JetstreamServer:
    """Jetstream on 127.0.0.1: events from the asked cursor on, misbehaving on purpose.

    The first connection is dropped (the TCP connection aborted) after
    ``drop_after`` events; every connection sends the malformed frames after its
    fifth event; a connection that has sent everything closes normally.
    """

    def __init__(
        self, lines: list[bytes], *, drop_after: int | None = None, delay: float = 0.0
    ) -> None:
        self.events = [(orjson.loads(raw)["time_us"], raw) for raw in lines]
        self.drop_after = drop_after
        self.delay = delay
        self.cursors: list[int | None] = []
        self.ready = threading.Event()
        self.port = 0
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self.thread = threading.Thread(target=lambda: asyncio.run(self._main()), daemon=True)
        self.thread.start()
        assert self.ready.wait(10)

    @property
    def url(self) -> str:
        return f"ws://127.0.0.1:{self.port}/subscribe"

    async def _handler(self, socket: Any) -> None:
        query = parse_qs(urlsplit(socket.request.path).query)
        assert query.get("wantedCollections")
        cursor = int(query["cursor"][0]) if "cursor" in query else None
        self.cursors.append(cursor)
        first = len(self.cursors) == 1
        todo = [raw for t, raw in self.events if cursor is None or t >= cursor]
        for n, raw in enumerate(todo):
            if n == 5:
                for bad in MALFORMED:
                    await socket.send(bad.decode("utf-8", "replace"))
            await socket.send(raw.decode())
            if self.delay:
                await asyncio.sleep(self.delay)
            if first and self.drop_after is not None and n + 1 == self.drop_after:
                socket.transport.abort()
                return
        await socket.close()

    async def _main(self) -> None:
        from websockets.asyncio.server import serve

        self._loop = asyncio.get_running_loop()
        self._stop = asyncio.Event()
        async with serve(self._handler, "127.0.0.1", 0) as server:
            self.port = next(iter(server.sockets)).getsockname()[1]
            self.ready.set()
            await self._stop.wait()

    def close(self) -> None:
        if self._loop and self._stop:
            self._loop.call_soon_threadsafe(self._stop.set)
        self.thread.join(10)


@pytest.fixture
def event_lines(seeds: list[SeedRecord]) -> list[bytes]:
    return list(EventMaker(seeds, seed=11, paper_share=0.05).lines(1500))


@pytest.fixture
def jetstream(event_lines: list[bytes]) -> Iterator[JetstreamServer]:
    server = JetstreamServer(event_lines, drop_after=400)
    yield server
    server.close()


def test_listener_reconnects_and_misses_nothing(
    store: Store, jetstream: JetstreamServer, event_lines: list[bytes]
) -> None:
    listener = Listener(store, Settings(environ={}), jetstream.url, flush_events=100)
    report = asyncio.run(
        listen_websocket(listener, jetstream.url, max_connections=3, first_backoff=0.05)
    )
    assert report.connections == 3 and report.errors  # the dropped connection is reported
    assert jetstream.cursors[0] is None
    # Each reconnection resumed from the last event stored, not from the start.
    last = orjson.loads(event_lines[-1])["time_us"]
    assert jetstream.cursors[1] is not None and 0 < jetstream.cursors[1] < last
    assert jetstream.cursors[2] == last
    assert store.network_post_count() == len(_kept(event_lines))
    # The first two connections sent the bad frames (the last one had one event to send).
    assert (report.counts.malformed, report.counts.unknown) == (2 * (len(MALFORMED) - 1), 2)
    assert store.listen_cursor(jetstream.url) is not None


def test_subscribe_url_asks_for_the_collections_and_the_cursor() -> None:
    url = subscribe_url("wss://jet.example/subscribe", 17)
    query = parse_qs(urlsplit(url).query)
    assert query["wantedCollections"] == [POST, REPOST, "app.bsky.graph.follow"]
    assert query["cursor"] == ["17"]


def _count(db: Path) -> tuple[int, int]:
    try:
        with sqlite3.connect(db, timeout=5) as conn:
            posts = conn.execute("SELECT count(*) FROM network_posts").fetchone()[0]
            row = conn.execute("SELECT max(time_us) FROM listen_cursors").fetchone()
            return int(posts), int(row[0] or 0)
    except sqlite3.OperationalError:  # not created yet
        return 0, 0


def _wait(predicate: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.05)
    raise AssertionError("timed out")


def test_killed_and_restarted_listener_stores_each_post_once(
    tmp_path: Path, event_lines: list[bytes]
) -> None:
    server = JetstreamServer(event_lines, delay=0.002)
    db = tmp_path / "listen.db"
    SQLiteStore(db).close()
    env = {**os.environ, "PYTHONPATH": str(ROOT), "LIGHTNEWS_DB": str(db)}
    command = [sys.executable, "-m", "lightnews", "listen", "--url", server.url]
    expected = _kept(event_lines)
    last = orjson.loads(event_lines[-1])["time_us"]
    try:
        first = subprocess.Popen(
            command, env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL
        )
        _wait(lambda: _count(db)[0] >= 10, 60)
        first.send_signal(signal.SIGKILL)
        first.wait(10)
        stored, cursor = _count(db)
        assert 0 < stored < len(expected) and 0 < cursor < last
        second = subprocess.Popen(
            command, env=env, stderr=subprocess.DEVNULL, stdout=subprocess.DEVNULL
        )
        _wait(lambda: _count(db)[1] == last, 90)
        second.send_signal(signal.SIGTERM)
        assert second.wait(20) == 0
    finally:
        server.close()
    assert server.cursors[0] is None and server.cursors[1] == cursor  # resumed where it stopped
    with sqlite3.connect(db) as conn:
        uris = [r[0] for r in conn.execute("SELECT uri FROM network_posts")]
        mentions = conn.execute(
            "SELECT count(*), count(DISTINCT uri || paper) FROM network_mentions"
        ).fetchone()
    assert sorted(uris) == sorted(expected)
    assert mentions[0] == mentions[1]


def test_a_worker_job_listens_from_the_saved_cursor(
    pg_url: str, jetstream: JetstreamServer, event_lines: list[bytes]
) -> None:
    pytest.importorskip("procrastinate", reason="workers need the server extra")
    from lightnews.store.postgres import PostgresStore
    from lightnews.worker.jobs import Worker

    worker = Worker(pg_url)
    try:
        off = worker.listen(1.0)
        assert off.summary == "listen_in_worker is off" and not jetstream.cursors
        worker.store.save_setting("listen_in_worker", "true")
        worker.store.save_setting("jetstream_url", jetstream.url)
        outcome = worker.listen(10.0)  # a loaded machine needs a while for 1,500 events
    finally:
        worker.close()
    assert "new posts about papers" in outcome.summary
    with PostgresStore(pg_url, pool_size=2) as store:
        assert store.network_post_count() == len(_kept(event_lines))
        cursor = store.listen_cursor(jetstream.url)
    assert cursor is not None and cursor.time_us == orjson.loads(event_lines[-1])["time_us"]
