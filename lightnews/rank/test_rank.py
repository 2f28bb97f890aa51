"""Ranking: followed scholars first, every entry explained, bots weigh little, age decays."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from lightnews.rank import (
    Context,
    Story,
    engagement,
    posted_by_followed,
    rank_stories,
    scholars_discussing,
)
from lightnews.settings import Settings
from lightnews.store import LOCAL_READER, Store
from lightnews.store.views import FeedCandidate

CONTEXT = Context(
    authored={}, names={7: "Ada Example"}, categories=set(), now=datetime(2025, 12, 1, tzinfo=UTC)
)


def item(**fields: Any) -> FeedCandidate:
    """A feed candidate with the given fields (the rest empty)."""
    empty: dict[str, Any] = {
        "id": 1,
        "key": "k",
        "kind": "post",
        "title": "",
        "url": None,
        "author": None,
        "account": None,
        "engagement": {},
        "reply_parent": None,
        "thread_root": None,
        "published": None,
        "time": "2025-11-30T00:00:00Z",
        "source_id": 1,
        "source_kind": "feed",
        "source": "s",
        "record_of": None,
        "mentioned": (),
    }
    return FeedCandidate(**{**empty, **fields})


def story(*items: dict[str, Any]) -> Story:
    return Story(
        key="2510.00001",
        title="t",
        time="2025-11-30T00:00:00Z",
        arxiv_id="2510.00001",
        items=[item(**i) for i in items],
    )


def test_followed_posts_count_most_and_say_so() -> None:
    posted = story({"kind": "post", "followed_scholar": 7, "account": "did:a"})
    reposted = story({"kind": "repost", "followed_scholar": 7, "account": "did:b"})
    p_points, p_why = posted_by_followed(posted, CONTEXT)
    r_points, r_why = posted_by_followed(reposted, CONTEXT)
    assert p_points > r_points > 0
    assert [r.text for r in p_why] == ["posted by Ada Example (followed)"]
    assert [r.text for r in r_why] == ["reposted by Ada Example (followed)"]
    assert [p.href for p in p_why[0].parts if p.href] == ["/scholar/7"]  # linked to the scholar


def test_bots_weigh_little() -> None:
    person: list[dict[str, Any]] = [{"kind": "post", "account": f"did:{n}"} for n in range(3)]
    bot: list[dict[str, Any]] = [{**p, "bot": True} for p in person]
    people, bots = story(*person), story(*bot)
    assert scholars_discussing(people, CONTEXT)[0] > 4 * scholars_discussing(bots, CONTEXT)[0]
    assert [r.text for r in scholars_discussing(people, CONTEXT)[1]] == ["3 scholars discuss it"]


def test_engagement_is_normalized_per_source() -> None:
    likes = story({"source_kind": "bluesky", "engagement": {"likes": 41}})
    upvotes = story({"source_kind": "hf-daily", "engagement": {"upvotes": 41}})
    assert engagement(upvotes, CONTEXT)[0] > engagement(likes, CONTEXT)[0]
    assert [r.text for r in engagement(upvotes, CONTEXT)[1]] == ["41 upvotes on Daily Papers"]


def test_demo_feed_is_led_by_the_followed_scholar(store: Store, settings: Settings) -> None:
    from lightnews.demo import build_demo

    build_demo(store, settings)
    feed = rank_stories(store, LOCAL_READER, limit=10)
    assert all(s.why for s in feed)
    assert feed[0].arxiv_id == "2511.18342" and feed[0].score > 1.0  # not decayed away
    assert [s.score for s in feed] == sorted((s.score for s in feed), reverse=True)
    older = rank_stories(store, LOCAL_READER, limit=10, half_life_hours=1.0)
    assert older[0].score < feed[0].score  # a short half-life decays everything faster


def test_mutes_and_read_state(store: Store, settings: Settings) -> None:
    from lightnews.demo import build_demo

    build_demo(store, settings)
    first = rank_stories(store, LOCAL_READER, limit=10)[0]
    assert first.arxiv_id == "2511.18342"
    store.mark_story(LOCAL_READER, "2511.18342", "2030-01-01T00:00:00Z", read=True)
    again = {s.arxiv_id: s for s in rank_stories(store, LOCAL_READER, limit=30)}
    assert "2511.18342" not in again  # read, nothing new: out of the feed
    kept = {s.arxiv_id: s for s in rank_stories(store, LOCAL_READER, limit=30, keep_read=True)}
    assert "read" in kept["2511.18342"].why and kept["2511.18342"].score < first.score / 10
    # read before the news
    store.mark_story(LOCAL_READER, "2511.18342", "2025-11-01T00:00:00Z", read=True)
    back = {s.arxiv_id: s for s in rank_stories(store, LOCAL_READER, limit=30)}["2511.18342"]
    assert back.why[0].startswith("new since you read it")
    store.set_mute(LOCAL_READER, "keyword", "sparse ring", "2025-12-01T00:00:00Z")
    assert "2511.18342" not in {s.arxiv_id for s in rank_stories(store, LOCAL_READER, limit=30)}
    mara = store.find_scholar("Mara Lindqvist")
    store.set_mute(LOCAL_READER, "scholar", str(mara), "2025-12-01T00:00:00Z")
    muted = rank_stories(store, LOCAL_READER, limit=30)
    assert not any("posted by Mara Lindqvist" in w for s in muted for w in s.why)


def test_a_thread_is_one_story(store: Store, settings: Settings) -> None:
    from lightnews.demo import build_demo

    build_demo(store, settings)
    feed = rank_stories(store, LOCAL_READER, limit=40)
    lone_posts = [
        s
        for s in feed
        if not s.arxiv_id
        and s.items[0].thread_root
        and s.items[0].kind == "post"
        and s.items[0].thread_root.split("/")[2] == s.items[0].account
    ]
    # Replies of Mara's own threads join their paper's story instead of standing alone.
    assert lone_posts == []


def test_close_to_a_followed_scholars_paper_counts_and_says_which(
    store: Store, settings: Settings
) -> None:
    import importlib.util

    import pytest

    if importlib.util.find_spec("faiss") is None:
        pytest.skip("needs the semantic extra")
    from lightnews.demo import build_demo
    from lightnews.rank import close_to_your_papers

    build_demo(store, settings)  # embeds the demo papers too
    plain = {s.arxiv_id: s for s in rank_stories(store, LOCAL_READER, limit=40)}
    ranked = {s.arxiv_id: s for s in rank_stories(store, LOCAL_READER, limit=40, settings=settings)}
    kernel = ranked["2510.18421"]  # linear-time attention, near Mara Lindqvist's sparse attention
    assert "close to Mara Lindqvist's “Sparse Ring Attention: Sub-quadratic" in " ".join(kernel.why)
    assert kernel.score > plain["2510.18421"].score
    # Her own papers say "authored by", not that they are close to each other.
    assert not any(w.startswith("close to") for w in ranked["2511.18342"].why)
    # Without vectors for a story, the signal is silent.
    assert close_to_your_papers(story(), CONTEXT) == (0.0, [])


def test_a_followed_scholars_repost_is_credited_to_them(store: Store, settings: Settings) -> None:
    """Mara reposts Tobias's post about her paper: the story says she reposted it."""
    from lightnews.demo import build_demo

    build_demo(store, settings)
    feed = {s.arxiv_id: s for s in rank_stories(store, LOCAL_READER, limit=30)}
    assert "reposted by Mara Lindqvist (followed)" in feed["2511.10268"].why
    reposts = [i for i in feed["2511.10268"].items if i.kind == "repost"]
    assert reposts and all(i.followed_scholar is not None for i in reposts)


def test_reasons_are_specific_linked_unrepeated_and_by_weight(
    store: Store, settings: Settings
) -> None:
    """Which blog, whose notes, whose posts; one "authored by" for two authors; weightiest first."""
    from lightnews.demo import build_demo

    build_demo(store, settings)
    top = {s.key: s for s in rank_stories(store, LOCAL_READER, limit=None)}["2511.18342"]
    assert top.why == [
        "authored by Mara Lindqvist and Tobias Achterberg-Reyes (followed)",
        "posted by Mara Lindqvist (followed)",  # not "reposted by" her as well
        "87 upvotes on Daily Papers",
        "2 scholars discuss it",
        # the listing bot's post counts, but the bot is not named among the posters
        "531 likes and reposts on posts by Mara Lindqvist, Tobias Achterberg-Reyes and a bot",
        "in a post on Northlake AI Lab Blog",
        "in Elif Brennan's notes",
        "code released",  # its repository was first linked by a post the day after
    ]
    weights = [r.weight for r in top.reasons]
    assert weights == sorted(weights, reverse=True)
    links = {p.text: p.href for r in top.reasons for p in r.parts if p.href}
    mara = store.find_scholar("Mara Lindqvist")
    assert links["Mara Lindqvist"] == f"/scholar/{mara}"
    assert links["Daily Papers"] == "https://huggingface.co/papers/2511.18342"
    assert links["Northlake AI Lab Blog"].startswith("/item/")
    assert links["Elif Brennan's notes"].startswith("/notes/")
    assert links["531 likes and reposts"] == "/paper/2511.18342#posts"
    assert top.to_json()["reasons"][0]["links"][1] == {
        "text": "Tobias Achterberg-Reyes",
        "href": f"/scholar/{store.find_scholar('Tobias')}",
    }


def test_the_same_words_are_said_once() -> None:
    twice = story(
        {"id": 1, "kind": "post", "followed_scholar": 7, "account": "did:a"},
        {"id": 2, "kind": "post", "followed_scholar": 7, "account": "did:a"},
        {"id": 3, "kind": "repost", "followed_scholar": 7, "account": "did:b"},
    )
    assert [r.text for r in posted_by_followed(twice, CONTEXT)[1]] == [
        "posted by Ada Example (followed)"
    ]


def test_interests_see_the_readers_changes_at_once_and_a_writers_within_a_refresh(
    store: Store, settings: Settings, monkeypatch: Any
) -> None:
    import importlib.util

    import pytest

    if importlib.util.find_spec("faiss") is None:
        pytest.skip("needs the semantic extra")
    from lightnews import embed
    from lightnews.demo import build_demo
    from lightnews.model import Author, Paper

    build_demo(store, settings)
    model, bar = str(settings.semantic), 0.6
    first, _ = embed._interests(store, LOCAL_READER, model, bar)
    assert first
    # A writer stores a paper (a merge stores thousands): the library's part moves, and
    # the interests read a moment ago are kept rather than read again on every request.
    library, own = store.interest_version(LOCAL_READER)
    with store.transaction():
        paper = Paper("2512.00001", title="Another writer's paper", authors=[Author("A. Writer")])
        store.save_papers([paper], "2025-12-01T00:00:00Z")
    assert store.interest_version(LOCAL_READER) == (store.interest_version(LOCAL_READER)[0], own)
    assert store.interest_version(LOCAL_READER)[0] != library
    assert embed._interests(store, LOCAL_READER, model, bar)[0] is first
    # Past the refresh, the writer's change is read.
    monkeypatch.setattr(embed, "INTEREST_REFRESH", 0.0)
    again, _ = embed._interests(store, LOCAL_READER, model, bar)
    assert again is not first and again == first
    # The reader's own change is seen at once: unfollowing drops that scholar's papers.
    monkeypatch.setattr(embed, "INTEREST_REFRESH", 3600.0)
    followed = sorted(store.follows(LOCAL_READER))
    for scholar in followed:
        store.set_followed(LOCAL_READER, scholar, False, "2025-12-01T00:00:00Z")
    after, _ = embed._interests(store, LOCAL_READER, model, bar)
    assert len(after) < len(first)


def test_closeness_kept_for_a_readers_papers_is_worked_out_again_when_interests_change(
    store: Store, settings: Settings
) -> None:
    import importlib.util

    import pytest

    if importlib.util.find_spec("faiss") is None:
        pytest.skip("needs the semantic extra")
    from lightnews import embed
    from lightnews.demo import build_demo

    build_demo(store, settings)
    bar = 0.6
    asked = [p.arxiv_id for p in store.recent_papers(50)]
    embed.forget_interests()
    fresh = embed.closest_interests(store, LOCAL_READER, settings, asked, bar)
    assert fresh, "the demo's papers are close to its followed scholars' papers"
    # Asked again, from what was kept: the same answer; and for fewer papers, the same
    # answer for those (the floor is each request's own: the closest fifth of those asked).
    assert embed.closest_interests(store, LOCAL_READER, settings, asked, bar) == fresh
    embed.forget_interests()
    assert embed.closest_interests(store, LOCAL_READER, settings, asked, bar) == fresh
    # Unfollowing changes the interests: nothing kept of the old ones is used.
    for scholar in sorted(store.follows(LOCAL_READER)):
        store.set_followed(LOCAL_READER, scholar, False, "2025-12-01T00:00:00Z")
    assert embed.closest_interests(store, LOCAL_READER, settings, asked, bar) == {}
