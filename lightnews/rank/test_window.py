"""The feed's order and its stories do not depend on how many entries are asked for,
nor on whether its candidates were kept between requests.

``feed --limit 1`` put a post first and ``--limit 3`` a paper, and at ``--limit
2`` a story lost its posts (70 likes instead of 531): the candidate window was
sized by the limit. Now the whole window is ranked, then cut.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from lightnews.cli import cli
from lightnews.model import Author, Item, Mention, Paper
from lightnews.normalize.times import iso
from lightnews.rank import FEED_ITEMS, FEED_PAPERS, CandidateWindows, Story, rank_stories
from lightnews.settings import Settings
from lightnews.store import LOCAL_READER, Store

START = datetime(2025, 6, 1, tzinfo=UTC)


def contents(story: Story) -> tuple[Any, ...]:
    """What a reader sees of a story: its items, their likes, its reasons."""
    likes = sum(i.engagement.get("likes", 0) for i in story.items)
    return story.key, sorted(i.key for i in story.items), likes, story.why


def test_feed_limit_n_is_the_first_n_on_the_demo(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0"})
    assert runner.invoke(cli, ["--db", str(db), "demo", "--json"]).exit_code == 0

    def feed(n: int) -> list[dict[str, Any]]:
        result = runner.invoke(cli, ["--db", str(db), "feed", "--limit", str(n), "--json"])
        assert result.exit_code == 0, result.output
        entries: list[dict[str, Any]] = json.loads(result.stdout)
        return entries

    whole = feed(50)
    assert len(whole) > 20
    for n in range(1, 51):
        assert feed(n) == whole[:n], n  # same entries, same items and counts, same order


def many_stories(store: Store) -> None:
    """More papers and posts than the window holds; posts about a paper spread over weeks."""
    now = iso(START)
    papers = [
        Paper(
            arxiv_id=f"2506.{10000 + n}",
            title=f"Study number {n} of long contexts",
            abstract="A study.",
            authors=[Author(name=f"Author {n}")],
            categories=["cs.LG"],
            published=iso(START + timedelta(hours=3 * n)),
        )
        for n in range(2 * FEED_PAPERS)
    ]
    with store.transaction():
        store.save_papers(papers, now)
    source, _ = store.add_source("feed", "https://crowd.example/feed.xml", now=now)
    posts = []
    for n in range(2 * FEED_ITEMS):
        paper = papers[(n * 7) % len(papers)]
        posts.append(
            Item(
                key=f"post-{n}",
                kind="article",
                title=f"On study {paper.arxiv_id}",
                url=f"https://crowd.example/{n}",
                published=iso(START + timedelta(minutes=45 * n)),
                engagement={"likes": n % 97},
                mentions=[Mention(paper.arxiv_id, "arxiv-url", 1.0)],
            )
        )
    store.save_items(source.id, posts, now)


def test_the_window_is_fixed_and_ranked_whole_before_the_cut(store: Store) -> None:
    many_stories(store)
    whole = rank_stories(store, LOCAL_READER, limit=None)
    assert len(whole) > 50
    assert len({s.key for s in whole}) == len(whole)
    for n in range(1, 51):
        cut = rank_stories(store, LOCAL_READER, limit=n)
        assert [contents(s) for s in cut] == [contents(s) for s in whole[:n]], n
        assert [round(s.score, 9) for s in cut] == [round(s.score, 9) for s in whole[:n]]
    # A story near the top keeps the posts that fall in the window, at every length.
    top = whole[0]
    assert len(top.items) > 1


def test_a_kept_window_ranks_as_a_fresh_one_and_shows_the_readers_own_changes_at_once(
    store: Store, settings: Settings
) -> None:
    """A server keeps the candidates between requests (``CandidateWindows``): the feed
    reads the same as one gathered afresh, however often it is asked; a writer's
    change is seen within the refresh; the reader's follows and mutes at once."""
    from lightnews.demo import build_demo

    build_demo(store, settings)
    windows = CandidateWindows(refresh=3600.0)
    fresh = rank_stories(store, LOCAL_READER, limit=None)
    for _ in range(3):  # the kept stories are copied, never changed by a ranking
        kept = rank_stories(store, LOCAL_READER, limit=None, windows=windows)
        assert [contents(s) for s in kept] == [contents(s) for s in fresh]
        assert [s.score for s in kept] == [s.score for s in fresh]

    # The reader's own changes: a mute, an unfollow.
    store.set_mute(LOCAL_READER, "keyword", "sparse ring", "2025-12-01T00:00:00Z")
    kept = rank_stories(store, LOCAL_READER, limit=None, windows=windows)
    assert "2511.18342" not in {s.arxiv_id for s in kept}
    store.set_mute(LOCAL_READER, "keyword", "sparse ring", "2025-12-01T00:00:00Z", muted=False)
    for scholar in sorted(store.follows(LOCAL_READER)):
        store.set_followed(LOCAL_READER, scholar, False, "2025-12-01T00:00:00Z")
    kept = rank_stories(store, LOCAL_READER, limit=None, windows=windows)
    assert not any("(followed)" in w for s in kept for w in s.why)
    assert [contents(s) for s in kept] == [
        contents(s) for s in rank_stories(store, LOCAL_READER, limit=None)
    ]

    # A writer's new paper: within the refresh the kept window serves; past it, it is read.
    paper = Paper(
        "2512.00001",
        title="A writer's newest paper",
        authors=[Author("A. Writer")],
        published="2030-01-01T00:00:00Z",
    )
    with store.transaction():
        store.save_papers([paper], "2030-01-01T00:00:00Z")
    keys = {s.key for s in rank_stories(store, LOCAL_READER, limit=None, windows=windows)}
    assert "2512.00001" not in keys
    windows.refresh = 0.0
    keys = {s.key for s in rank_stories(store, LOCAL_READER, limit=None, windows=windows)}
    assert "2512.00001" in keys


def test_kept_papers_are_read_afresh_once_the_library_changes(store: Store) -> None:
    """A server keeps papers' summaries for every reader's own candidates (those outside the
    window); a revised paper shows its new title once the library's version has moved."""
    many_stories(store)
    windows = CandidateWindows(refresh=3600.0)
    rank_stories(store, LOCAL_READER, limit=10, windows=windows)  # the version as first seen
    first = windows.papers(store, ["2506.10000", "2506.10001", "2599.99999"])
    assert set(first) == {"2506.10000", "2506.10001"}  # one the library lacks: not there
    assert first["2506.10000"].title == "Study number 0 of long contexts"
    revised = Paper(
        "2506.10000",
        title="Study number 0 of long contexts, revised",
        abstract="A study, revised.",
        authors=[Author(name="Author 0")],
        categories=["cs.LG"],
        published=iso(START),
        updated=iso(START + timedelta(days=30)),
    )
    with store.transaction():
        store.save_papers([revised], iso(START + timedelta(days=30)))
    # Within the refresh the kept summary serves; once the version is read again, the new.
    assert windows.papers(store, ["2506.10000"])["2506.10000"].title == first["2506.10000"].title
    windows.refresh = 0.0
    rank_stories(store, LOCAL_READER, limit=10, windows=windows)
    assert windows.papers(store, ["2506.10000"])["2506.10000"].title.endswith(", revised")
