"""A reader's own candidates: a followed scholar's paper stays in the feed however many
newer papers a category brings.

Measured before: the demo library, one unmentioned paper by the followed scholar
Mara Lindqvist dated the day before the demo's clock, and 400 newer cs.LG papers
(about two days of cs.LG): her paper was gone from ``feed --limit 500``, because the
candidates were the newest 150 papers for every reader.
"""

from __future__ import annotations

from datetime import datetime, timedelta

from lightnews.demo import build_demo
from lightnews.link.attribution import attribute_all
from lightnews.model import Author, Paper
from lightnews.normalize.times import iso
from lightnews.rank import CandidateWindows, rank_stories
from lightnews.settings import Settings
from lightnews.store import LOCAL_READER, Store

HERS = "2511.99001"


def library_with_a_busy_category(store: Store, settings: Settings, newer: int) -> datetime:
    """The demo, her quiet paper a day before its clock, then ``newer`` newer cs.LG papers."""
    build_demo(store, settings)
    clock = datetime.fromisoformat(store.saved_settings()["clock"].replace("Z", "+00:00"))
    day_before = clock - timedelta(days=1)
    hers = Paper(
        HERS,
        title="Quiet gradients for sparse mixtures of experts",
        abstract="We study routing noise.",
        categories=["cs.LG"],
        authors=[Author(name="Mara Lindqvist"), Author(name="Someone Else")],
        published=iso(day_before),
    )
    crowd = [
        Paper(
            f"2511.{80000 + n}",
            title=f"A newer cs.LG paper, number {n}",
            abstract="Something else.",
            categories=["cs.LG"],
            authors=[Author(name=f"Crowd Author {n}")],
            published=iso(day_before + timedelta(minutes=5 * (n + 1))),
        )
        for n in range(newer)
    ]
    with store.transaction():
        store.save_papers([hers, *crowd], iso(clock))
    attribute_all(store)
    return clock


def test_a_followed_scholars_paper_stays_among_newer_papers(
    store: Store, settings: Settings
) -> None:
    clock = library_with_a_busy_category(store, settings, newer=400)
    for windows in (None, CandidateWindows()):  # the CLI's way and a server's
        feed = rank_stories(store, LOCAL_READER, limit=50, now=clock, windows=windows)
        found = [s for s in feed if s.key == HERS]
        assert found, [s.key for s in feed]
        assert any(w.startswith("authored by Mara Lindqvist") for w in found[0].why), found[0].why
    # Past the reader's horizon it is no longer theirs to see first.
    later = clock + timedelta(days=30)
    with store.transaction():
        store.save_papers(
            [
                Paper(
                    "2512.00001",
                    title="A paper a month later",
                    abstract="Later.",
                    categories=["cs.LG"],
                    published=iso(later),
                )
            ],
            iso(later),
        )
    gone = rank_stories(
        store,
        LOCAL_READER,
        limit=None,
        now=later,
        settings=Settings(environ={}).with_overrides(horizon_half_lives=4.0),
    )
    assert HERS not in [s.key for s in gone][:50]


def test_what_the_network_and_followed_scholars_discuss_joins_the_feed(
    store: Store, settings: Settings
) -> None:
    """An older paper (outside the newest papers) that many accounts post about this week,
    and one a followed scholar posts about network-wide, are in the feed, saying so."""
    from lightnews.model import NetworkMention, NetworkPost
    from lightnews.store.network import ListenCursor

    clock = library_with_a_busy_category(store, settings, newer=400)
    old = [
        Paper(
            f"2509.{70000 + n}",
            title=f"An older paper {n} the network discusses",
            abstract="Old.",
            categories=["cs.CL"],
            published=iso(clock - timedelta(days=60 + n)),
        )
        for n in range(2)
    ]
    with store.transaction():
        store.save_papers(old, iso(clock))
    now_us = int((clock - timedelta(hours=2)).timestamp() * 1_000_000)
    mara = store.find_scholar("Mara Lindqvist")
    store.add_identity(mara, "bluesky-did", "did:plc:mara")
    posts = [
        NetworkPost(
            f"at://did:plc:p{n}/app.bsky.feed.post/{n}",
            f"did:plc:p{n}",
            "post",
            now_us + n,
            (NetworkMention(old[0].arxiv_id, "arxiv-url", 1.0),),
            text=f"Reading {old[0].arxiv_id}",
        )
        for n in range(5)
    ]
    posts.append(
        NetworkPost(
            "at://did:plc:mara/app.bsky.feed.post/m",
            "did:plc:mara",
            "post",
            now_us + 9,
            (NetworkMention(old[1].arxiv_id, "arxiv-url", 1.0),),
            text="A classic",
        )
    )
    store.save_network(posts, [], ListenCursor("replay", now_us + 9), iso(clock))
    feed = {s.key: s for s in rank_stories(store, LOCAL_READER, limit=None, now=clock)}
    assert old[0].arxiv_id in feed and any("discuss it" in w for w in feed[old[0].arxiv_id].why)
    assert old[1].arxiv_id in feed
