"""No untitled paper: papers the network names but the library lacks become stubs, then get titles.

A replayed stream names 100 papers the library lacks (a third of the posts
with a link card, as Bluesky sends them). Each is a stub at once, shown on the
Discussed page by its card's title (or its id) and marked a stub; one refresh
against a local arXiv server (answering ``id_list`` queries with the real
recorded entries of ``../shared/fixtures/arxiv/api-2026``) fills them all, in
a few requests that keep arXiv's interval.
"""

from __future__ import annotations

import html
import re
import threading
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, cast

import orjson
from starlette.testclient import TestClient

from conftest import Hit, RecordedServer, Reply
from lightnews.ingest.listen import replay_file
from lightnews.ingest.refresh import refresh
from lightnews.ingest.stubs import STUB_BATCH
from lightnews.rank.discussed import discussed_papers
from lightnews.serve.test_conversation import Library, library  # noqa: F401 - a fixture
from lightnews.settings import Settings
from lightnews.sources.jetstream import POST
from lightnews.sources.jetstream_fixtures import commit_event, text_record
from lightnews.store import LOCAL_READER, CommonStore, Store

INTERVAL = 0.3
_ENTRY = re.compile(r"<entry>.*?</entry>", re.S)
_ID = re.compile(r"<id>http://arxiv\.org/abs/([^<]+?)(?:v\d+)?</id>")
_TITLE = re.compile(r"<title>(.*?)</title>", re.S)
_HEAD = """<?xml version='1.0' encoding='UTF-8'?>
<feed xmlns:opensearch="http://a9.com/-/spec/opensearch/1.1/" \
xmlns:arxiv="http://arxiv.org/schemas/atom" xmlns="http://www.w3.org/2005/Atom">
  <id>https://arxiv.org/api/local</id>
  <title>arXiv Query: id_list</title>
  <updated>2026-04-12T22:09:36Z</updated>
  <opensearch:itemsPerPage>{size}</opensearch:itemsPerPage>
  <opensearch:totalResults>{total}</opensearch:totalResults>
  <opensearch:startIndex>0</opensearch:startIndex>
"""


def recorded_entries(shared: Path) -> dict[str, str]:
    """Every real entry of the recorded arXiv API responses, by versionless id."""
    found: dict[str, str] = {}
    for path in sorted((shared / "arxiv/api-2026").glob("*.json")):
        body = orjson.loads(path.read_bytes())["body"].encode("latin-1").decode("utf-8")
        for entry in _ENTRY.findall(body):
            named = _ID.search(entry)
            if named:
                found.setdefault(named[1], entry)
    return found


class LocalArxiv:
    """The arXiv API on 127.0.0.1: ``id_list`` queries answered from recorded entries."""

    def __init__(self, server: RecordedServer, entries: dict[str, str]) -> None:
        self.entries = entries
        self.asked: list[tuple[float, list[str]]] = []
        self.lock = threading.Lock()
        self.url = server.route("/api/query", self.answer)

    def answer(self, hit: Hit) -> Reply:
        ids = [i for i in hit.query.get("id_list", [""])[0].split(",") if i]
        with self.lock:
            self.asked.append((time.monotonic(), ids))
        found = [self.entries[i] for i in ids if i in self.entries]
        body = _HEAD.format(size=len(found), total=len(found)) + "\n".join(found) + "\n</feed>\n"
        return Reply(200, body.encode(), {"Content-Type": "application/atom+xml"})


def _title(entry: str) -> str:
    found = _TITLE.search(entry)
    return html.unescape(" ".join(found[1].split())) if found else ""


def stream(entries: dict[str, str], count: int) -> tuple[list[bytes], dict[str, str]]:
    """``count`` posts by as many people, each naming one paper; every third with a link
    card (its page's title). Returns the events and the card titles by paper."""
    papers = sorted(entries)[:count]
    now = datetime.now(UTC)
    events, cards = [], {}
    for n, paper in enumerate(papers):
        moment = now - timedelta(minutes=60 - n * 0.5)
        record = {
            **text_record(f"Reading this today: arxiv.org/abs/{paper}"),
            "createdAt": moment.strftime("%Y-%m-%dT%H:%M:%S.000Z"),
        }
        if n % 3 == 0:
            cards[paper] = f"[{paper}] {_title(entries[paper])}"
            record["embed"] = {
                "$type": "app.bsky.embed.external",
                "external": {
                    "uri": f"https://arxiv.org/abs/{paper}",
                    "title": cards[paper],
                    "description": "Abstract page for arXiv paper " + paper,
                },
            }
        did = f"did:plc:reader{n:019d}"
        time_us = int(moment.timestamp() * 1_000_000)
        events.append(orjson.dumps(commit_event(did, time_us, POST, f"3lstub{n:07d}", record)))
    return events, cards


def _discussed(store: Store) -> list[Any]:
    return discussed_papers(store, LOCAL_READER, datetime.now(UTC) - timedelta(days=1), limit=500)


def test_papers_the_network_names_get_their_titles_in_one_refresh(
    library: Library,
    shared: Path,
    server: RecordedServer,
    settings: Settings,
    tmp_path: Path,
) -> None:
    entries = recorded_entries(shared)
    assert len(entries) >= 100
    events, cards = stream(entries, 100)
    store = library.store
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(events) + b"\n")
    replay_file(store, settings, path)
    # At once: each named paper is a stub, on the Discussed page by its card or its id.
    assert store.counts()["stubs"] == 100
    before = _discussed(store)
    assert len(before) == 100 and all(d.stub and d.title for d in before)
    assert {d.paper: d.title for d in before if d.paper in cards} == cards
    assert sum(d.title.startswith("arXiv:") for d in before) == 100 - len(cards)

    arxiv = LocalArxiv(server, entries)
    online = settings.with_overrides(
        resolve_online=True, arxiv_api_url=arxiv.url, arxiv_interval=INTERVAL
    )
    reports = refresh(store, online)
    assert reports and all(r.ok for r in reports), [r.error for r in reports]
    after = _discussed(store)
    assert len(after) == 100
    assert [d.paper for d in after if d.stub or not d.title] == []  # 0 untitled
    assert all(d.title == _title(entries[d.paper]) for d in after)
    assert store.counts()["stubs"] == 0
    # Batched and polite: 100 ids in two requests, arXiv's interval kept between them.
    assert [len(ids) for _, ids in arxiv.asked] == [STUB_BATCH] * (100 // STUB_BATCH)
    gaps = [b[0] - a[0] for a, b in zip(arxiv.asked, arxiv.asked[1:], strict=False)]
    assert all(gap >= INTERVAL * 0.95 for gap in gaps), gaps

    # Papers named after that run are fetched by the next one, not a refresh period later.
    more, _ = stream(dict(sorted(entries.items())[100:]), 3)
    path.write_bytes(b"\n".join(e.replace(b"3lstub", b"3lmore") for e in more) + b"\n")
    replay_file(store, settings, path)
    assert store.counts()["stubs"] == 3
    refresh(store, online)
    assert store.counts()["stubs"] == 0 and len(arxiv.asked) == 100 // STUB_BATCH + 1

    from lightnews.serve.app import create_app

    app = create_app(library.address, settings)
    with TestClient(app, base_url="http://localhost") as client:
        listed = client.get("/api/discussed?since=24h").json()["papers"]
        page = client.get("/discussed?since=24h").text
    assert len(listed) == 50 and all(p["title"] and not p["stub"] for p in listed)
    assert "badge-stub" not in page


def test_a_stub_says_it_is_one_until_it_is_filled(
    library: Library,
    shared: Path,
    settings: Settings,
    tmp_path: Path,
) -> None:
    entries = recorded_entries(shared)
    events, cards = stream(entries, 3)
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(events) + b"\n")
    replay_file(library.store, settings, path)
    [with_card] = cards
    from lightnews.serve.app import create_app

    app = create_app(library.address, settings)
    with TestClient(app, base_url="http://localhost") as client:
        page = client.get("/discussed?since=24h").text
        story = client.get(f"/api/paper/{with_card}").json()
        html = client.get(f"/paper/{with_card}").text
    assert page.count('class="badge badge-stub"') == 3
    assert story["stub"] and story["link_card"]["title"] == cards[with_card]
    assert story["conversation"]["posts"] == 1
    assert "<h1>" + cards[with_card].replace("&", "&amp;") in html.replace("&#34;", '"')


def test_posts_stored_before_stubs_were_made_become_stubs(
    library: Library,
    shared: Path,
    settings: Settings,
    tmp_path: Path,
) -> None:
    """A library that heard the network before posts made stubs: the refresh makes them."""
    events, _ = stream(recorded_entries(shared), 4)
    path = tmp_path / "events.jsonl"
    path.write_bytes(b"\n".join(events) + b"\n")
    store = library.store
    replay_file(store, settings, path)
    with store.transaction():  # as such a library was: network mentions, no paper rows
        cast(CommonStore, store).db.execute("DELETE FROM papers")  # either backend
    assert store.counts()["stubs"] == 0
    assert store.add_network_stubs("2026-01-01T00:00:00Z") == 4
    assert store.counts()["stubs"] == 4 and store.add_network_stubs("2026-01-01T00:00:00Z") == 0
