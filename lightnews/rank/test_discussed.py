"""Discussed now: distinct accounts, weighed by reach and by the follow graph, bots apart.

The network is replayed through the listener from Jetstream events made of the
real seed post records: a followed scholar, an account they follow (a follow
event on Jetstream), people, two listing bots (caught by what they post), a
mirror (caught by what it says of itself) and a high-reach account.
"""

from __future__ import annotations

import re
import time
from pathlib import Path

import orjson
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from lightnews.ingest.listen import replay_file
from lightnews.model import Account, Paper
from lightnews.rank import rank_stories
from lightnews.rank.discussed import account_weight, rank_discussion, reach
from lightnews.settings import Settings
from lightnews.sources.jetstream import FOLLOW, POST, REPOST
from lightnews.sources.jetstream_fixtures import (
    commit_event,
    listing_record,
    seed_records,
    text_record,
)
from lightnews.store import Store
from lightnews.store.network import Spoken
from lightnews.store.readers import LOCAL_READER

SCHOLAR = "did:plc:ggectctbnnfbhajffo242o2o"
FRIEND = "did:plc:friend00000000000000000"
MIRROR = "did:plc:mirror00000000000000000"
BOTS = ["did:plc:bot1000000000000000000", "did:plc:bot2000000000000000000"]
PEOPLE = [f"did:plc:person{n:018d}" for n in range(8)]
FAMOUS = "did:plc:famous00000000000000000"
A, B, C = "2505.20295", "2508.21184", "2411.00001"


def _link_post(arxiv_id: str, words: str) -> dict[str, object]:
    text = f"{words} arxiv.org/abs/{arxiv_id}"
    return text_record(text, "2026-12-03T10:00:00.000Z")


def _network(shared: Path, tmp_path: Path) -> Path:
    """The events: who says what about papers A, B and C."""
    seeds = {s.rkey: s for s in seed_records(shared)}
    pinned = seeds["3l224rdyyyg22"].record  # the scholar announcing A (its link in a facet)
    clock = iter(range(int(time.time() * 1e6) - 3_600_000_000, 1 << 62, 1000))
    follow = {"$type": FOLLOW, "subject": FRIEND, "createdAt": "2026-12-03T09:00:00Z"}
    events = [
        commit_event(SCHOLAR, next(clock), FOLLOW, "3f1", follow),
        commit_event(SCHOLAR, next(clock), POST, "3s1", pinned),
        commit_event(FRIEND, next(clock), POST, "3f2", _link_post(A, "Worth a read:")),
    ]
    for n, did in enumerate(PEOPLE[:3]):
        events.append(commit_event(did, next(clock), POST, f"3p{n}", _link_post(A, "nice one")))
        events.append(commit_event(did, next(clock), POST, f"3q{n}", _link_post(A, "again!")))
    for n, did in enumerate(PEOPLE[3:7]):
        events.append(commit_event(did, next(clock), POST, f"3b{n}", _link_post(B, "cool")))
    events.append(commit_event(FAMOUS, next(clock), POST, "3fm", _link_post(B, "must read")))
    events.append(
        commit_event(
            PEOPLE[7],
            next(clock),
            REPOST,
            "3r1",
            {
                "$type": REPOST,
                "createdAt": "2026-12-03T10:00:00Z",
                "subject": {"uri": f"at://{SCHOLAR}/{POST}/3s1", "cid": "bafy"},
            },
        )
    )
    for bot in BOTS:  # listing bots: nearly everything they post is a bare listing
        for n, paper in enumerate([A, C, "2411.00002", "2411.00003", "2411.00004", "2411.00005"]):
            record = listing_record(paper, f"A Title Of Paper {n}")
            events.append(commit_event(bot, next(clock), POST, f"3l{n}", record))
    events.append(commit_event(MIRROR, next(clock), POST, "3m1", _link_post(A, "New:")))
    path = tmp_path / "network.jsonl"
    path.write_bytes(b"\n".join(orjson.dumps(e) for e in events) + b"\n")
    return path


@pytest.fixture
def heard(store: Store, shared: Path, tmp_path: Path) -> Store:
    now = "2026-12-03T08:00:00Z"
    day = "2026-12-01T00:00:00Z"
    store.save_papers(
        [
            Paper(
                A,
                title="SelfReflect: Can LLMs Communicate Their Internal Answer Distribution?",
                published=day,
            ),
            Paper(B, title="Memories in language models", published=day),
        ],
        now,
    )
    scholar = store.create_scholar("Michael Kirchhof", now)
    store.set_followed(LOCAL_READER, scholar, True, now)
    store.add_identity(scholar, "bluesky-did", SCHOLAR)
    store.save_accounts(
        [
            Account(
                "bluesky",
                MIRROR,
                "arxiv-cs-lg.bsky.social",
                "cs.LG papers",
                "Unofficial mirror of the arXiv cs.LG listing",
            ),
            Account("bluesky", FAMOUS, "famous.example.org", "Famous", followers=999_999),
        ],
        now,
    )
    report = replay_file(store, Settings(environ={}), _network(shared, tmp_path))
    assert report.counts.malformed == 0 and report.stored > 20
    return store


def test_weights() -> None:
    assert reach(None) == 0 and reach(9) == pytest.approx(1) and reach(10**9) == 4
    person = account_weight(
        None, bot=False, followed=False, friend=False, reposted_only=False, bot_weight=0.05
    )
    followed = account_weight(
        None, bot=False, followed=True, friend=False, reposted_only=False, bot_weight=0.05
    )
    famous_bot = account_weight(
        10**6, bot=True, followed=False, friend=False, reposted_only=False, bot_weight=0.05
    )
    assert (person, followed, famous_bot) == (1.0, 3.0, 0.05)


def test_discussed_ranks_people_not_posts_and_ignores_bots(heard: Store) -> None:
    from datetime import timedelta

    from lightnews.normalize.times import utc_now
    from lightnews.rank.discussed import discussed_papers

    entries = discussed_papers(heard, LOCAL_READER, utc_now() - timedelta(hours=24))
    by_paper = {e.paper: e for e in entries}
    assert C not in by_paper  # only bots posted it
    a, b = by_paper[A], by_paper[B]
    # A: the scholar (x3), the account they follow (x2), three people (twice each: once),
    # one reposter (half); two listing bots and a self-described mirror ignored.
    assert (a.people, a.followed, a.friends, a.bots) == (6, 1, 1, 3)
    assert a.why == (
        "6 people incl. 1 you follow, 1 followed by scholars you follow; 3 bots ignored"
    )
    assert a.score == pytest.approx(3 + 2 + 3 + 0.5 + 3 * 0.05)
    # B: four people and one account with a million followers (1 + 4).
    assert (b.people, b.bots) == (5, 0) and b.score == pytest.approx(4 + 5)
    assert [e.paper for e in entries] == [B, A]
    assert a.title.startswith("SelfReflect") and a.speakers[0].role == "followed"
    roles = {s.did: s.role for s in a.speakers}
    assert roles[MIRROR] == roles[BOTS[0]] == "bot" and roles[FRIEND] == "friend"


def test_feed_says_how_many_people_discuss_it(heard: Store) -> None:
    stories = {s.arxiv_id: s for s in rank_stories(heard, LOCAL_READER, limit=None)}
    assert "6 people discuss it (incl. 1 you follow)" in stories[A].why
    assert "5 people discuss it" in stories[B].why


def test_discussed_command_and_page(heard: Store) -> None:
    from lightnews.cli import cli
    from lightnews.serve.app import create_app

    location = getattr(heard, "url", None) or str(heard.path)
    result = CliRunner().invoke(cli, ["--db", location, "discussed", "--since", "24h", "--json"])
    assert result.exit_code == 0, result.output
    data = orjson.loads(result.output)
    assert [p["paper"] for p in data["papers"]] == [B, A]
    assert data["papers"][1]["why"].startswith("6 people incl. 1 you follow")
    bad = CliRunner().invoke(cli, ["--db", location, "discussed", "--since", "soon"])
    assert bad.exit_code == 2 and "soon" in bad.output
    app = create_app(location, Settings(environ={}))
    with TestClient(app, base_url="http://localhost") as client:
        page = client.get("/discussed?since=7d")
        assert page.status_code == 200
        assert "6 people incl. 1 you follow" in page.text and f"/paper/{A}" in page.text
        # Who spoke, bots left out: A's last speakers are bots, and no comma dangles.
        speakers = re.findall(r'<p class="meta">(.*?)</p>', page.text, re.S)
        assert speakers and not any(s.rstrip().endswith(",") for s in speakers)
        assert "Nothing discussed" not in page.text
        assert client.get("/api/discussed").json()["papers"][0]["paper"] == B
        assert client.get("/discussed?since=never").status_code == 400


def test_a_period_with_nothing_discussed_says_so_once_not_as_a_numbered_entry(
    store: Store,
) -> None:
    from lightnews.serve.app import create_app

    location = getattr(store, "url", None) or str(store.path)
    with TestClient(create_app(location, Settings(environ={})), base_url="http://localhost") as c:
        page = c.get("/discussed?since=24h")
    assert page.status_code == 200
    assert "<p>Nothing discussed in this period.</p>" in page.text
    assert '<ol class="discussed">' not in page.text


def test_rank_discussion_counts_each_account_once() -> None:
    rows = [
        Spoken(A, "did:plc:x", "post", f"at://x/{n}", None, n, "x", None, False) for n in range(5)
    ]
    (entry,) = rank_discussion(rows, set(), {})
    assert (entry.people, entry.score, entry.why) == (1, 1.0, "1 person")


LAB_FEED = b"""<?xml version="1.0" encoding="utf-8"?>
<rss version="2.0"><channel><title>Lab Blog</title><link>https://lab.example.org/</link>
<description>Research notes</description>
<item><title>What SelfReflect measures</title>
<link>https://lab.example.org/blog/selfreflect</link>
<guid>https://lab.example.org/blog/selfreflect</guid>
<description>Our paper (arxiv.org/abs/2505.20295) asks whether LLMs can describe what they
would answer.</description><pubDate>Wed, 02 Dec 2026 10:00:00 GMT</pubDate></item>
</channel></rss>"""


def test_a_post_linking_an_article_about_a_paper_joins_its_discussion(
    store: Store, tmp_path: Path
) -> None:
    from datetime import timedelta

    from lightnews.ingest.replay import ingest_bytes
    from lightnews.normalize.times import utc_now
    from lightnews.rank.discussed import discussed_papers

    settings = Settings(environ={}).with_overrides(resolve_online=False)
    assert ingest_bytes(store, "feed", "https://lab.example.org/feed.xml", LAB_FEED, settings).ok
    text = "Great explainer: lab.example.org/blog/selfre..."
    start = text.index("lab.")
    record = {
        **text_record(text, "2026-12-03T10:00:00.000Z"),
        "facets": [
            {
                "index": {"byteStart": start, "byteEnd": len(text.encode())},
                "features": [
                    {
                        "$type": "app.bsky.richtext.facet#link",
                        "uri": "https://www.lab.example.org/blog/selfreflect/?utm_source=bsky",
                    }
                ],
            }
        ],
    }
    plain = text_record("an unrelated post", "2026-12-03T10:00:00.000Z")
    now_us = int(time.time() * 1e6)
    path = tmp_path / "second.jsonl"
    path.write_bytes(
        b"\n".join(
            orjson.dumps(e)
            for e in [
                commit_event(PEOPLE[0], now_us, POST, "3v1", record),
                commit_event(PEOPLE[1], now_us + 1, POST, "3v2", plain),
            ]
        )
        + b"\n"
    )
    assert replay_file(store, settings, path).stored == 1
    (spoken,) = store.network_mentions_of("bluesky", A)
    via = "Lab Blog’s “What SelfReflect measures”"
    assert (spoken.method, spoken.evidence) == ("via-article", via)
    (entry,) = discussed_papers(store, LOCAL_READER, utc_now() - timedelta(hours=1))
    assert entry.why == f"1 person · via {via}"

    # The story shows the chain: the post, and the article it came through (its page).
    from lightnews.rank.discussed import second_order_of
    from lightnews.serve.app import create_app

    (chain,) = second_order_of(store, A)
    (article,) = store.articles_about(A)
    assert (chain.did, chain.via, chain.item_id) == (PEOPLE[0], via, article[1])
    assert chain.article_url == "https://lab.example.org/blog/selfreflect"
    assert chain.post_url == f"https://bsky.app/profile/{PEOPLE[0]}/post/3v1"
    location = getattr(store, "url", None) or str(store.path)
    with TestClient(create_app(location, settings), base_url="http://localhost") as client:
        page = client.get(f"/paper/{A}")
        assert page.status_code == 200
        assert "Posts that link an article about it" in page.text
        assert f'· via <a href="/item/{article[1]}">{via}</a>' in page.text
        assert f'href="https://bsky.app/profile/{PEOPLE[0]}/post/3v1"' in page.text
        (data,) = client.get(f"/api/paper/{A}").json()["second_order"]
        assert data["via"] == via and data["item_id"] == article[1]
        assert "Posts that link an article" not in client.get(f"/paper/{B}").text
