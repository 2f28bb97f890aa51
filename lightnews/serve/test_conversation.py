"""The conversation on a story: real Bluesky posts replayed through ``listen --from-file``.

The library holds the paper the seed scholar (Michael Kirchhof) announced in
his pinned thread; the events are his real records (the thread's root, and a
reply of it that repeats the paper's link at its end), re-timed to the last
hour, with a reply and a quote by others, a repost, a listing bot and an old
post with a link card. Each must show on the story: in the store's read, in
``/api/paper``, in ``show --json`` and ``show``, on both backends (the page
in Chromium is ``test_browser_conversation``).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import orjson
import pytest
from click.testing import CliRunner
from starlette.testclient import TestClient

from lightnews.cli import cli
from lightnews.ingest.listen import replay_file
from lightnews.model import Author, Paper
from lightnews.rank.conversation import read_conversation
from lightnews.settings import Settings
from lightnews.sources.jetstream import POST, REPOST, SERVICE
from lightnews.sources.jetstream_fixtures import (
    commit_event,
    identity_event,
    listing_record,
    seed_records,
    text_record,
)
from lightnews.store import LOCAL_READER, SQLiteStore, Store

SCHOLAR = "did:plc:ggectctbnnfbhajffo242o2o"  # the seed author (mkirchhof)
PAPER = "2505.20295"
TITLE = "SelfReflect: Can LLMs Communicate Their Internal Answer Distribution?"
ROOT = f"at://{SCHOLAR}/{POST}/3l224rdyyyg22"
THREAD_REPLY = f"at://{SCHOLAR}/{POST}/3l224rdyyyviy"
REPLIER, QUOTER, REPOSTER, BOT, OLDER = (
    "did:plc:replierreplierreplier01",
    "did:plc:quoterquoterquoterquot1",
    "did:plc:reposterreposterrepost1",
    "did:plc:listingbotlistingbot001",
    "did:plc:olderolderolderolderold1",
)


@dataclass
class Library:
    store: Store
    address: str


@pytest.fixture(params=["sqlite", "postgresql"])
def library(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Library]:
    """An empty library on each backend, with the address the web app and the CLI open."""
    if request.param == "sqlite":
        path = tmp_path / "lightnews.db"
        db: Store = SQLiteStore(path)
        address = str(path)
    else:
        from lightnews.store.postgres import PostgresStore

        address = request.getfixturevalue("pg_url")
        db = PostgresStore(address, pool_size=4)
    yield Library(db, address)
    db.close()


def _when(minutes_ago: float) -> tuple[str, int]:
    moment = datetime.now(UTC) - timedelta(minutes=minutes_ago)
    return moment.strftime("%Y-%m-%dT%H:%M:%S.000Z"), int(moment.timestamp() * 1_000_000)


def _post(did: str, rkey: str, record: dict[str, Any], minutes_ago: float) -> dict[str, Any]:
    created, time_us = _when(minutes_ago)
    return commit_event(did, time_us, POST, rkey, {**record, "createdAt": created})


def conversation_events(shared: Path) -> list[dict[str, Any]]:
    """The scholar's real thread and what others said of it, in the order heard."""
    records = {f"at://{s.did}/{POST}/{s.rkey}": s.record for s in seed_records(shared)}
    reply = dict(records[THREAD_REPLY])  # the thread's post repeats the link at its end
    reply["text"] = reply["text"] + " Paper: arxiv.org/abs/2505.20295"
    _, start = _when(60)
    events = [
        identity_event(SCHOLAR, start - 5, "mkirchhof.bsky.social"),
        identity_event(REPLIER, start - 4, "replier.bsky.social"),
        identity_event(QUOTER, start - 3, "quoter.bsky.social"),
        _post(SCHOLAR, "3l224rdyyyg22", records[ROOT], 50),
        _post(SCHOLAR, "3l224rdyyyviy", reply, 49),
        _post(
            REPLIER,
            "3lreply000001",
            {
                **text_record(
                    "Congrats! Measuring whether a summary string matches the answer "
                    "distribution is overdue. arxiv.org/abs/2505.20295"
                ),
                "reply": {
                    "root": {"uri": ROOT, "cid": "bafyroot"},
                    "parent": {"uri": ROOT, "cid": "bafyroot"},
                },
            },
            40,
        ),
        _post(
            QUOTER,
            "3lquote000001",
            {
                **text_record("The SelfReflect metric is a neat idea, worth a read."),
                "embed": {
                    "$type": "app.bsky.embed.record",
                    "record": {"uri": ROOT, "cid": "bafyroot"},
                },
            },
            30,
        ),
        commit_event(
            REPOSTER,
            _when(20)[1],
            REPOST,
            "3lrepost00001",
            {
                "$type": REPOST,
                "subject": {"uri": ROOT, "cid": "bafyroot"},
                "createdAt": _when(20)[0],
            },
        ),
        _post(BOT, "3llisting0001", listing_record(PAPER, TITLE), 10),
        _post(
            OLDER,
            "3lolder000001",
            {
                **text_record("Reading group pick: arxiv.org/abs/2505.20295"),
                "embed": {
                    "$type": "app.bsky.embed.external",
                    "external": {
                        "uri": "https://arxiv.org/abs/2505.20295",
                        "title": TITLE,
                        "description": "Can LLMs describe their own answer distribution?",
                    },
                },
            },
            60 * 24 * 40,
        ),
    ]
    events.sort(key=lambda e: e["time_us"])
    return events


def replay(store: Store, events: list[dict[str, Any]], path: Path) -> None:
    """``lightnews listen --from-file``: the events, one JSON object a line."""
    path.write_bytes(b"\n".join(orjson.dumps(e) for e in events) + b"\n")
    report = replay_file(store, Settings(environ={}), path)
    assert report.counts.malformed == 0


def holding_the_paper(store: Store) -> None:
    """A library that holds the paper and follows its author on Bluesky."""
    store.save_papers(
        [
            Paper(
                PAPER,
                TITLE,
                "We ask whether LLMs can describe the distribution of their own answers.",
                [Author("Michael Kirchhof")],
                ["cs.LG"],
                "2025-05-26T17:00:00Z",
            )
        ],
        "2025-07-01T00:00:00Z",
    )
    scholar = store.create_scholar("Michael Kirchhof", "2025-07-01T00:00:00Z")
    store.add_identity(scholar, "bluesky-did", SCHOLAR)
    store.set_followed(LOCAL_READER, scholar, True, "2025-07-01T00:00:00Z")


def heard(library: Library, shared: Path, tmp_path: Path) -> None:
    holding_the_paper(library.store)
    replay(library.store, conversation_events(shared), tmp_path / "events.jsonl")
    library.store.mark_bot(SERVICE, BOT, "posts only arXiv listings")


def _check(talk: dict[str, Any]) -> None:
    """What a story's conversation must carry (the JSON every surface prints)."""
    assert talk["posts"] == 6 and talk["people"] == 5  # 5 posts and a repost, by people
    assert talk["bot_posts"] == 1 and talk["bots"] == 1  # folded away, counted
    assert talk["this_week"] == 5  # the old post is shown, not marked
    first, second = talk["units"]
    # The followed scholar's thread first, as one unit, in reading order, with his name.
    assert first["thread"] and [p["uri"] for p in first["posts"]] == [ROOT, THREAD_REPLY]
    assert {p["author"] for p in first["posts"]} == {"Michael Kirchhof"}
    assert all(p["followed"] and p["recent"] for p in first["posts"])
    assert first["posts"][0]["url"] == (
        "https://bsky.app/profile/mkirchhof.bsky.social/post/3l224rdyyyg22"
    )
    assert (
        "Can LLMs access and describe their own internal distributions?"
        in (first["posts"][0]["text"])
    )
    # The reply and the quote are under what they answer; the repost is counted there.
    [reply] = first["replies"]
    assert reply["handle"] == "replier.bsky.social" and reply["answers"] == ROOT
    assert reply["text"].startswith("Congrats!") and reply["created_at"]
    [quote] = first["quotes"]
    assert quote["answers"] == ROOT and "SelfReflect metric" in quote["text"]
    assert quote["url"] == "https://bsky.app/profile/quoter.bsky.social/post/3lquote000001"
    assert first["reposted_by"] == [REPOSTER]
    # All history: the old post shows too, not marked as this week's.
    [old] = second["posts"]
    assert old["did"] == OLDER and not old["recent"] and not second["recent"]
    assert "folded away" in talk["why"]


def test_the_store_reads_every_post_about_a_paper(
    library: Library, shared: Path, tmp_path: Path
) -> None:
    heard(library, shared, tmp_path)
    posts = library.store.paper_conversation(SERVICE, PAPER)
    assert len(posts) == 7
    by_uri = {p.uri: p for p in posts}
    assert by_uri[ROOT].scholar == "Michael Kirchhof" and by_uri[ROOT].handle == (
        "mkirchhof.bsky.social"
    )
    assert by_uri[THREAD_REPLY].reply_root == ROOT
    quote = next(p for p in posts if p.did == QUOTER)
    assert quote.kind == "quote" and quote.subject == ROOT
    assert next(p for p in posts if p.did == BOT).bot
    older = next(p for p in posts if p.did == OLDER)
    assert older.card is not None and older.card.title == TITLE
    talk = read_conversation(library.store, PAPER, LOCAL_READER, datetime.now(UTC))
    _check(talk.to_json())


def test_api_paper_and_show_carry_the_conversation(
    library: Library, shared: Path, tmp_path: Path
) -> None:
    from lightnews.serve.app import create_app

    heard(library, shared, tmp_path)
    app = create_app(library.address, Settings(environ={}).with_overrides(resolve_online=False))
    with TestClient(app, base_url="http://localhost") as client:
        answer = client.get(f"/api/paper/{PAPER}")
        assert answer.status_code == 200
        _check(answer.json()["conversation"])
        page = client.get(f"/paper/{PAPER}").text
    assert "The conversation on Bluesky" in page and "Congrats! Measuring" in page
    assert "https://bsky.app/profile/quoter.bsky.social/post/3lquote000001" in page
    result = CliRunner().invoke(
        cli, ["--db", library.address, "show", PAPER, "--json"], catch_exceptions=False
    )
    assert result.exit_code == 0, result.output
    _check(json.loads(result.stdout)["conversation"])
    text = (
        CliRunner()
        .invoke(cli, ["--db", library.address, "show", PAPER], catch_exceptions=False)
        .stdout
    )
    assert "on the network: 6 posts by 5 people, 5 this week" in text
    assert "Michael Kirchhof @mkirchhof.bsky.social (you follow) [this week]" in text
    assert "reposted by did:plc:reposterreposterrepost1" in text
    assert "@quoter.bsky.social [this week] quoted it" in text


# -- posts read from followed feeds ----------------------------------------------------------

DEMO_PAPER = "2511.10268"  # the demo's leaderboard paper: a repost and a listing bot's post
DEMO_AUTHOR = "did:plc:cihr6d2r5pj5mruxm5smgnyo"  # pdeshmane.bsky.social
DEMO_POST = f"at://{DEMO_AUTHOR}/{POST}/3m6me6azutksv"
DEMO_NOW = datetime(2025, 11, 28, 12, 0, tzinfo=UTC)


def _demo_check(talk: dict[str, Any]) -> None:
    """The demo paper's conversation: the post a followed scholar reposted, once."""
    [unit] = talk["units"]
    [post] = unit["posts"]
    assert post["uri"] == DEMO_POST and post["handle"] == "pdeshmane.bsky.social"
    assert post["author"] == "Priyanka Deshmane" and post["recent"]
    # The whole text, not the feed's shortened title of it.
    assert post["text"].startswith("Version 3 of our leaderboard paper is up")
    assert "without a single weight changing" in post["text"]
    assert unit["reposted_by"] == ["maralindqvist.bsky.social"]
    [mara] = unit["reposters"]  # a followed scholar, named as the reader knows her
    assert mara["name"] == "Mara Lindqvist" and mara["followed"] and mara["scholar_id"]
    assert talk["bot_posts"] == 1 and talk["bots"] == 1  # the listing mirror, folded away


def test_posts_read_from_followed_feeds_join_the_conversation_once(
    library: Library, settings: Settings, tmp_path: Path
) -> None:
    """Without ``listen``, the posts of the feeds a reader follows are the conversation;
    with it, a post heard on the network and read from a feed shows once."""
    from lightnews.demo import build_demo, snapshot_path
    from lightnews.serve.app import create_app

    build_demo(library.store, settings)
    _demo_check(read_conversation(library.store, DEMO_PAPER, LOCAL_READER, DEMO_NOW).to_json())
    # Another followed account reposts the same post: the post is still shown once.
    feed = json.loads((snapshot_path("bluesky-feed.mara.json")).read_text())
    [entry] = [e for e in feed["feed"] if "reason" in e and e["post"]["uri"] == DEMO_POST]
    entry["reason"]["by"] = {"did": "did:plc:sharersharersharer00001", "handle": "sharer.test"}
    entry["reason"]["uri"] = "at://did:plc:sharersharersharer00001/app.bsky.feed.repost/3x1"
    (tmp_path / "sharer.json").write_text(json.dumps({"feed": [entry]}))
    ingested = CliRunner().invoke(
        cli,
        [
            "--db",
            library.address,
            "ingest",
            "--kind",
            "bluesky",
            "--from-file",
            str(tmp_path / "sharer.json"),
        ],
        catch_exceptions=False,
    )
    assert ingested.exit_code == 0, ingested.output
    talk = read_conversation(library.store, DEMO_PAPER, LOCAL_READER, DEMO_NOW).to_json()
    [unit] = talk["units"]
    assert [p["uri"] for p in unit["posts"]] == [DEMO_POST]
    # Followed scholars first; an account the library knows nothing of by its handle.
    assert unit["reposted_by"] == ["maralindqvist.bsky.social", "sharer.test"]
    assert [(r["name"], r["followed"]) for r in unit["reposters"]] == [
        ("Mara Lindqvist", True),
        (None, False),
    ]
    record = text_record(
        "Version 3 of our leaderboard paper is up. https://arxiv.org/abs/2511.10268",
        "2025-11-27T12:20:05.000Z",
    )
    heard_too = commit_event(DEMO_AUTHOR, 1764246005000000, POST, "3m6me6azutksv", record)
    replay(library.store, [heard_too], tmp_path / "events.jsonl")
    assert [p.uri for p in library.store.paper_conversation(SERVICE, DEMO_PAPER)] == [DEMO_POST]
    talk = read_conversation(library.store, DEMO_PAPER, LOCAL_READER, DEMO_NOW).to_json()
    [unit] = talk["units"]
    assert [p["uri"] for p in unit["posts"]] == [DEMO_POST]  # once, as listen heard it
    assert unit["posts"][0]["text"].endswith("https://arxiv.org/abs/2511.10268")
    app = create_app(library.address, settings)
    with TestClient(app, base_url="http://localhost") as client:
        answer = client.get(f"/api/paper/{DEMO_PAPER}").json()["conversation"]
        assert [p["uri"] for u in answer["units"] for p in u["posts"]] == [DEMO_POST]
        page = client.get(f"/paper/{DEMO_PAPER}").text
    assert "No post about it has been heard" not in page
    mara = library.store.find_scholar("Mara Lindqvist")
    assert (
        f'Reposted by <a class="followed" href="/scholar/{mara}">'
        "Mara Lindqvist (@maralindqvist.bsky.social)</a>"
        '<span class="badge" title="A scholar you follow">followed</span>, @sharer.test</p>'
    ) in page
    shown = CliRunner().invoke(cli, ["--db", library.address, "show", DEMO_PAPER])
    assert (
        "reposted by Mara Lindqvist (@maralindqvist.bsky.social) (you follow), @sharer.test"
        in " ".join(shown.output.split())
    )


def test_a_popular_papers_mentions_list_the_newest_and_show_all_on_asking(
    library: Library, settings: Settings, tmp_path: Path
) -> None:
    """Hundreds of posts name a popular paper; its page lists the newest of each kind (the
    conversation above pages them all) and the rest on asking."""
    from lightnews.demo import build_demo, snapshot_path
    from lightnews.serve.app import create_app
    from lightnews.serve.story import MENTIONS_SHOWN

    build_demo(library.store, settings)
    feed = json.loads(snapshot_path("bluesky-feed.mara.json").read_text())
    [entry] = [e for e in feed["feed"] if e["post"]["uri"].endswith("/3m6gwfebnikhb")]
    count = MENTIONS_SHOWN + 5
    posts = []
    for n in range(count):  # one post a day, each naming the paper by its arXiv link
        post = json.loads(json.dumps(entry["post"]))
        post["uri"] = post["uri"].rsplit("/", 1)[0] + f"/3popular{n:05d}"
        post["cid"] = f"bafypopular{n:05d}"
        post["record"]["createdAt"] = f"2025-11-{n + 1:02d}T09:00:00.000Z"
        post["record"]["text"] = f"Day {n + 1} of reading arxiv.org/abs/2511.18342 again"
        post["record"]["facets"] = []
        posts.append({"post": post})
    saved = tmp_path / "popular.json"
    saved.write_text(json.dumps({"feed": posts[::-1]}))
    ingested = CliRunner().invoke(
        cli,
        ["--db", library.address, "ingest", "--kind", "bluesky", "--from-file", str(saved)],
        catch_exceptions=False,
    )
    assert ingested.exit_code == 0, ingested.output
    app = create_app(library.address, settings)
    with TestClient(app, base_url="http://localhost") as client:
        page = client.get("/paper/2511.18342").text
        whole = client.get("/paper/2511.18342", params={"mentions": "all"}).text
        api = client.get("/api/paper/2511.18342").json()
    posts_section = page.split('id="posts"', 1)[1].split("<h3", 1)[0]
    assert posts_section.count('<article class="mention') == MENTIONS_SHOWN
    assert "Day 25 of reading" in posts_section and "Day 1 of reading" not in posts_section
    total = whole.split('id="posts"', 1)[1].split("<h3", 1)[0].count('<article class="mention')
    assert total > MENTIONS_SHOWN and "Day 1 of reading" in whole
    assert f"{total - MENTIONS_SHOWN} older not listed" in posts_section
    assert f'href="/paper/2511.18342?mentions=all#posts">show all {total}</a>' in posts_section
    assert "older not listed" not in whole
    # The JSON twin carries every mention, as before.
    assert sum(1 for m in api["mentions"] if "Day " in (m.get("title") or "")) == count
