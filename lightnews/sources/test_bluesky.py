"""Bluesky parsing against the seed scholar page, atproto's recorded responses and our own files.

The seed page (``seed-pages/bluesky``) and the atproto recordings live in
``../shared/fixtures`` and are skipped without it; ``tests/data/bluesky`` holds
responses built from the lexicons (quotes, media, a thread with missing and
blocked posts, a starter pack and its list, an XRPC error) that always run.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from conftest import RecordedServer, Reply
from lightnews.errors import ParseError, UsageError
from lightnews.link.threads import assemble_threads, thread_number
from lightnews.model import Batch, Item, PostDetails, Request, SourceState, item_extra
from lightnews.settings import Settings
from lightnews.sources.bluesky import (
    BlueskyFollowsSource,
    BlueskyProfileSource,
    BlueskySource,
    BlueskyStarterPackSource,
    facet_spans,
    find_gaps,
    full_text,
    normalize_actor,
    parse_profile,
    parse_resolve_handle,
    parse_response,
    starter_pack_uri,
)
from lightnews.sources.http import HttpClient

SEED = "seed-pages/bluesky"
RECORDED = "bluesky/atproto-recorded"
XRPC = "https://public.api.bsky.app/xrpc/"
KIRCHHOF = "did:plc:ggectctbnnfbhajffo242o2o"
ADA = "did:plc:adalovelace000000000000"
FEED_URL = XRPC + "app.bsky.feed.getAuthorFeed?actor={}&limit=100"


def _post(did: str, rkey: str) -> str:
    return f"at://{did}/app.bsky.feed.post/{rkey}"


def _seed_feed(shared: Path) -> Batch:
    body = (shared / SEED / "getAuthorFeed.mkirchhof.json").read_bytes()
    return BlueskySource("mkirchhof.bsky.social").parse(body, SourceState())


def _own_feed(data: Path) -> Batch:
    body = (data / "bluesky/getAuthorFeed.embeds.json").read_bytes()
    return BlueskySource("ada.example.org").parse(body, SourceState())


def _by_rkey(items: list[Item], rkey: str) -> Item:
    return next(i for i in items if i.key.endswith("/" + rkey))


# -- the seed scholar page (../shared) -----------------------------------------------------------


def test_seed_profile(shared: Path) -> None:
    source = BlueskySource("@mkirchhof.bsky.social")
    first = source.first_request(SourceState())
    assert first is not None
    assert first.url == XRPC + "app.bsky.actor.getProfile"
    assert first.params == {"actor": "mkirchhof.bsky.social"}
    url = XRPC + "app.bsky.actor.getProfile?actor=mkirchhof.bsky.social"
    batch = source.parse(
        (shared / SEED / "getProfile.mkirchhof.json").read_bytes(), SourceState(), url=url
    )
    (account,) = batch.accounts
    assert (account.followers, account.following, account.posts) == (340, 190, 65)
    assert account.service == "bluesky" and account.id == KIRCHHOF
    assert account.handle == "mkirchhof.bsky.social" and account.name == "Michael Kirchhof (ICML)"
    assert account.description == "Research Scientist at Apple for uncertainty quantification."
    assert account.pinned == _post(KIRCHHOF, "3l224rdyyyg22")
    assert account.created == "2023-11-20T10:00:00Z"
    assert json.loads(account.payload)["followersCount"] == 340
    # The feed is followed by DID, so a new handle does not break following.
    assert batch.next == Request(
        XRPC + "app.bsky.feed.getAuthorFeed",
        {
            "actor": KIRCHHOF,
            "limit": 100,
            "filter": "posts_and_author_threads",
            "includePins": "true",
        },
    )
    assert batch.state is not None
    assert batch.state.extra["did"] == KIRCHHOF
    assert batch.state.extra["handle"] == "mkirchhof.bsky.social"
    again = source.first_request(batch.state)
    assert again is not None and again.params == {"actor": KIRCHHOF}
    assert parse_profile((shared / SEED / "getProfile.mkirchhof.json").read_bytes()) == account


def test_seed_feed_posts_reposts_and_pinned(shared: Path) -> None:
    batch = _seed_feed(shared)
    assert not batch.warnings
    assert len(batch.items) == 26
    pinned = batch.items[0]
    assert item_extra(pinned)["pinned"] is True
    assert [item_extra(i)["pinned"] for i in batch.items].count(True) == 1
    assert pinned.key == _post(KIRCHHOF, "3l224rdyyyg22") and pinned.kind == "post"
    assert pinned.url == "https://bsky.app/profile/mkirchhof.bsky.social/post/3l224rdyyyg22"
    assert pinned.author == "Michael Kirchhof (ICML)" and pinned.account == KIRCHHOF
    assert pinned.engagement == {"replies": 1, "reposts": 6, "likes": 21, "quotes": 0}
    assert pinned.published == "2025-07-03T14:00:00Z" and pinned.updated == "2025-07-03T14:00:01Z"
    assert pinned.title.startswith("Can LLMs access and describe their own internal distributions?")
    assert len(pinned.title) <= 120 and "\n" not in pinned.title
    assert item_extra(pinned)["langs"] == ["en"] and json.loads(pinned.payload)["reason"]

    reposts = [i for i in batch.items if i.kind == "repost"]
    assert [item_extra(r)["handle"] for r in reposts] == [
        "marcocuturi.bsky.social",
        "shubhendu.bsky.social",
    ]
    for repost in reposts:
        assert item_extra(repost)["reposted_by"]["handle"] == "mkirchhof.bsky.social"
        assert repost.key == f"repost:{KIRCHHOF}:{item_extra(repost)['uri']}"
        assert repost.account == item_extra(repost)["did"] != KIRCHHOF
    assert item_extra(reposts[0])["reposted_at"] == "2025-10-01T12:00:00Z"
    assert item_extra(reposts[0])["mentions"] == ["did:plc:efarresy26qta4rgl4v3papv"]
    card = item_extra(reposts[1])["card"]
    assert card["uri"] == "https://arxiv.org/abs/2508.21184"
    assert card["title"].startswith("BED-LLM: Intelligent Information Gathering")

    reply = _by_rkey(batch.items, "3l224rdyz6her")
    assert reply.thread_root == _post(KIRCHHOF, "3l224rdyz4brk")
    assert reply.reply_parent == _post(KIRCHHOF, "3l224rdyz67nc")
    assert item_extra(reply)["reply_parent_author"] == "mkirchhof.bsky.social"
    assert item_extra(reply)["reply_root_author"] == "mkirchhof.bsky.social"


def test_seed_links_are_whole_and_papers_found(shared: Path) -> None:
    batch = _seed_feed(shared)
    for item in batch.items:
        record = json.loads(item.payload)["post"]["record"]
        for facet in record.get("facets", []):
            for feature in facet["features"]:
                if feature["$type"].endswith("#link"):
                    assert feature["uri"] in item.links
        assert not any(link.endswith(("...", "…")) for link in item.links)
        for start, end, feature in facet_spans(item.text, record.get("facets")):
            if "uri" in feature:  # the text's cut links are whole in the full text
                assert feature["uri"] in item_extra(item)["text_full"]
                if item.text[start:end].endswith("..."):
                    assert item.text[start:end] not in item_extra(item)["text_full"]
    pinned = batch.items[0]
    assert "github.com/apple/ml-sel..." in pinned.text
    assert "https://github.com/apple/ml-selfreflect" in pinned.links
    assert "💻 https://github.com/apple/ml-selfreflect\n🧵1/9" in item_extra(pinned)["text_full"]
    assert '<a href="https://github.com/apple/ml-selfreflect"' in pinned.html
    found = {m.arxiv_id for item in batch.items for m in item.mentions}
    assert {"2510.02375", "2505.20295", "2508.21184"} <= found
    assert [m.arxiv_id for m in pinned.mentions] == ["2505.20295"]
    bed = next(i for i in batch.items if item_extra(i)["uri"].endswith("3l224rdyz2teq"))
    assert [(m.arxiv_id, m.confidence) for m in bed.mentions] == [("2508.21184", 1.0)]


def test_seed_facet_spans_with_emoji(shared: Path) -> None:
    pinned = _seed_feed(shared).items[0]
    facets = json.loads(pinned.payload)["post"]["record"]["facets"]
    spans = facet_spans(pinned.text, facets)
    assert [pinned.text[start:end] for start, end, _ in spans] == [
        "arxiv.org/abs/2505.20295",
        "github.com/apple/ml-sel...",
    ]
    # 📄 and 💻 are 4 bytes but 1 character each: byte and character offsets differ.
    assert facets[0]["index"]["byteStart"] == 189 and spans[0][0] == 186
    assert spans[1][2]["uri"] == "https://github.com/apple/ml-selfreflect"


def test_seed_threads(shared: Path) -> None:
    items = _seed_feed(shared).items
    threads = assemble_threads(items)
    assert [len(t.items) for t in threads] == [10, 4, 9]
    memory, selfreflect_v2, selfreflect = threads
    assert {t.author for t in threads} == {KIRCHHOF}
    assert memory.root_key == _post(KIRCHHOF, "3l224rdyz4brk")
    assert [thread_number(i.text) for i in memory.items] == [(n, 10) for n in range(1, 10)] + [None]
    assert memory.items[0].key == memory.root_key and memory.complete
    assert selfreflect_v2.root_key == _post(KIRCHHOF, "3l224rdyz3347") and not selfreflect_v2.gaps
    assert [i.published for i in selfreflect_v2.items] == sorted(
        i.published or "" for i in selfreflect_v2.items
    )
    # The 1/9 thread, rooted at the pinned post, lacks its 2/9: exactly one gap, in place.
    missing = _post(KIRCHHOF, "3l224rdzajtpd")
    assert selfreflect.root_key == _post(KIRCHHOF, "3l224rdyyyg22")
    assert item_extra(selfreflect.items[0])["pinned"]
    assert [thread_number(i.text) for i in selfreflect.items] == [
        (1, 9),
        *[(n, 9) for n in range(3, 10)],
        None,
    ]
    assert selfreflect.gaps == [missing]
    assert sum(len(t.gaps) for t in threads) == 1
    assert all(i.kind == "post" for t in threads for i in t.items)  # reposts stay out
    assert find_gaps(items) == [missing]


def test_seed_gap_is_asked_for(shared: Path) -> None:
    replay = _seed_feed(shared)  # no next page to wait for: the gap is asked for at once
    assert replay.next is None
    assert replay.follow == [
        Request(
            XRPC + "app.bsky.feed.getPostThread",
            {"uri": _post(KIRCHHOF, "3l224rdzajtpd"), "depth": 0, "parentHeight": 80},
        )
    ]
    source = BlueskySource("mkirchhof.bsky.social")
    body = (shared / SEED / "getAuthorFeed.mkirchhof.json").read_bytes()
    live = source.parse(body, SourceState(), url=FEED_URL.format(KIRCHHOF))
    # More pages follow: the missing parent may be on one of them, so it waits.
    assert live.next is not None and live.next.params["cursor"] == "2025-07-03T14:06:00.000Z"
    assert live.follow == [] and live.state is not None
    assert live.state.extra["open_gaps"] == [_post(KIRCHHOF, "3l224rdzajtpd")]
    last = source.parse(b'{"feed": []}', live.state, url=FEED_URL.format(KIRCHHOF) + "&cursor=x")
    assert [r.params["uri"] for r in last.follow] == [_post(KIRCHHOF, "3l224rdzajtpd")]
    assert last.state is not None and last.state.cursor == "2025-10-03T09:09:00Z"
    # Never the same URI twice: the next refresh does not ask again.
    rerun = source.parse(body, last.state)
    assert rerun.follow == []


def test_atproto_recorded_responses(shared: Path) -> None:
    folder = shared / RECORDED
    source = BlueskySource("test.marshal.dev")

    thread = source.parse(
        (folder / "thread_view_post_with_embed_media.json").read_bytes(), SourceState()
    )
    (post,) = thread.items
    assert post.key == "at://did:plc:kvwvcn5iqfooopmyzvb4qzba/app.bsky.feed.post/3kaheyt6vpc22"
    assert post.author == "Python SDK" and item_extra(post)["handle"] == "test.marshal.dev"
    assert post.url == "https://bsky.app/profile/test.marshal.dev/post/3kaheyt6vpc22"
    assert post.text == "" and post.published == "2023-09-28T12:49:36Z"
    assert post.engagement == {"replies": 0, "reposts": 0, "likes": 0}
    assert item_extra(post)["images"] == [""]  # one image, no alt text
    quote = item_extra(post)["quote"]
    assert quote["text"] == "test" and quote["handle"] == "test.marshal.dev"
    assert quote["uri"].endswith("/3kahesw26il2z")

    follows = source.parse((folder / "get_follows.json").read_bytes(), SourceState())
    raw = json.loads((folder / "get_follows.json").read_text())
    assert [a.id for a in follows.accounts] == [f["did"] for f in raw["follows"]]
    assert [a.handle for a in follows.accounts] == [f["handle"] for f in raw["follows"]]
    first = follows.accounts[0]
    assert (first.name, first.created) == ("Why", "2022-11-17T01:04:43Z")
    assert first.description.startswith("Technical advisor") and first.avatar
    assert first.followers is None  # a profileView has no counts: the store keeps the old ones

    resolved = (folder / "resolve_handle.json").read_bytes()
    assert parse_resolve_handle(resolved) == "did:plc:z72i7hdynmk6r22z27h6tvur"
    batch = source.parse(resolved, SourceState(), url=XRPC + "com.atproto.identity.resolveHandle")
    assert (
        batch.state is not None and batch.state.extra["did"] == "did:plc:z72i7hdynmk6r22z27h6tvur"
    )

    for name, text in (
        ("post_record.json", "new text114"),
        ("extended_post_record.json", "regress test"),
    ):
        (record,) = source.parse((folder / name).read_bytes(), SourceState()).items
        assert record.text == text and record.account == "did:plc:kvwvcn5iqfooopmyzvb4qzba"
        assert (
            record.published
            and record.url
            and record.url.startswith("https://bsky.app/profile/did:")
        )
    for name in (
        "like_record.json",
        "extended_like_record.json",
        "feed_record.json",
        "custom_record.json",
    ):
        skipped = source.parse((folder / name).read_bytes(), SourceState())
        assert skipped.items == [] and "not a post" in skipped.warnings[0]
    (owner,) = source.parse((folder / "did_doc.json").read_bytes(), SourceState()).accounts
    assert owner.handle == "test.marshal.dev"


def test_follows_source_pages(shared: Path) -> None:
    source = BlueskyFollowsSource("@test.marshal.dev", {"max_pages": 2})
    first = source.first_request(SourceState())
    assert first is not None and first.url.endswith("/app.bsky.graph.getFollows")
    assert first.params == {"actor": "test.marshal.dev", "limit": 100}
    raw = json.loads((shared / RECORDED / "get_follows.json").read_text())
    raw["cursor"] = "page2"
    url = XRPC + "app.bsky.graph.getFollows?actor=test.marshal.dev&limit=100"
    batch = source.parse(json.dumps(raw).encode(), SourceState(), url=url)
    assert batch.next is not None and batch.next.params["cursor"] == "page2"
    assert batch.next.params["actor"] == "test.marshal.dev"
    assert batch.state is not None
    last = source.parse(json.dumps(raw).encode(), batch.state, url=url + "&cursor=page2")
    assert last.next is None  # max_pages reached


# -- our own files (always run) --------------------------------------------------------------------


def test_quote_media_and_embeds(data: Path) -> None:
    batch = _own_feed(data)
    assert len(batch.items) == 6
    assert len(batch.warnings) == 4  # no record, no URI, no post, not an object
    assert "no record" in batch.warnings[0]

    quote = _by_rkey(batch.items, "3ladaquote222")
    assert item_extra(quote)["quote"] == {
        "uri": _post("did:plc:bobbabbage00000000000000", "3lbobquoted22"),
        "did": "did:plc:bobbabbage00000000000000",
        "handle": "babbage.bsky.social",
        "name": "Charles Babbage",
        "text": "New preprint on difference engines: arxiv.org/abs/2401.0...",
        "url": "https://bsky.app/profile/babbage.bsky.social/post/3lbobquoted22",
    }
    assert quote.links == ["https://arxiv.org/abs/2402.00002v2", "https://arxiv.org/abs/2401.00001"]
    assert {m.arxiv_id for m in quote.mentions} == {"2402.00002", "2401.00001"}
    assert item_extra(quote)["mentions"] == ["did:plc:bobbabbage00000000000000"]
    assert quote.tags == item_extra(quote)["tags"] == ["MachineLearning", "replication"]
    assert quote.engagement == {
        "replies": 2,
        "reposts": 5,
        "likes": 17,
        "quotes": 1,
        "bookmarks": 4,
    }
    assert item_extra(quote)["labels"] == ["self-promo"]
    assert "🔥👉 https://arxiv.org/abs/2402.00002v2 holds up" in item_extra(quote)["text_full"]
    spans = facet_spans(quote.text, json.loads(quote.payload)["post"]["record"]["facets"])
    assert [quote.text[s:e] for s, e, _ in spans] == [
        "arxiv.org/abs/2402.0...",
        "@babbage.bsky.social",
        "#MachineLearning",
    ]

    media = _by_rkey(batch.items, "3ladarwm22222")
    assert item_extra(media)["images"] == ["Figure 1 of arXiv:2403.00003: scaling curves"]
    assert (
        item_extra(media)["quote"]["text"]
        == "Our analytical engine paper is on the HF daily papers today"
    )
    assert media.links == ["https://huggingface.co/papers/2404.00004"]
    assert {m.arxiv_id for m in media.mentions} == {"2403.00003", "2404.00004"}

    images = _by_rkey(batch.items, "3ladaimages22")
    alts = ["Poster: Note G, an algorithm for Bernoulli numbers", ""]
    assert item_extra(images)["images"] == alts
    assert images.engagement == {"replies": 1, "reposts": 0, "likes": 3}

    video = _by_rkey(batch.items, "3ladavideo222")
    assert video.engagement == {} and video.author == "ada.example.org"
    assert item_extra(video)["video_alt"] == "Talk on arXiv 2405.00005"
    assert [m.arxiv_id for m in video.mentions] == ["2405.00005"]

    broken = _by_rkey(batch.items, "3ladagap22222")
    assert broken.links == ["https://github.com/ada/note-g"]  # whole even with a broken index
    assert item_extra(broken)["text_full"] == broken.text  # but not substituted into the text
    assert item_extra(broken)["reply_parent_unavailable"] is True
    assert item_extra(broken)["reply_root_author"] == "ada.example.org"


def test_gaps_follow_and_partial_threads(data: Path) -> None:
    batch = _own_feed(data)
    missing = _post(ADA, "3ladamissing2")
    assert find_gaps(batch.items) == [missing]  # the reply to Bob is not a self-thread
    assert [r.params["uri"] for r in batch.follow] == [missing]
    (thread,) = assemble_threads(batch.items)
    assert thread.root_key == _post(ADA, "3ladaroot2222")
    assert [i.key for i in thread.items] == [_post(ADA, "3ladagap22222")]
    assert thread.gaps == [missing] and thread.author == ADA


def test_post_thread_with_missing_and_blocked_posts(data: Path) -> None:
    source = BlueskySource("ada.example.org")
    body = (data / "bluesky/getPostThread.notfound.json").read_bytes()
    url = XRPC + "app.bsky.feed.getPostThread?uri=x&depth=0&parentHeight=80"
    batch = source.parse(body, SourceState(), url=url)
    assert [i.key.rsplit("/", 1)[1] for i in batch.items] == [
        "3ladaroot2222",
        "3ladamissing2",
        "3ladagap22222",
        "3lbobreply222",
    ]
    assert batch.next is None and batch.follow == [] and not batch.warnings
    assert all(i.kind == "post" and not item_extra(i)["pinned"] for i in batch.items)
    root, middle, _, bob = batch.items
    assert [m.arxiv_id for m in root.mentions] == ["2406.00006"]
    assert item_extra(middle)["reply_parent_author"] == "ada.example.org"
    assert item_extra(bob)["reply_parent_author"] == "ada.example.org"
    assert bob.author == "Charles Babbage"
    # With the thread fetched, the feed's gap is filled and the thread is whole.
    (thread,) = assemble_threads([*_own_feed(data).items, *batch.items])
    assert [thread_number(i.text) for i in thread.items] == [(1, None), (2, None), (3, None)]
    assert thread.complete


def test_starter_pack_and_list_pages(data: Path) -> None:
    assert starter_pack_uri("https://bsky.app/starter-pack/Ada.Example.org/3lmlpack22222") == (
        "at://ada.example.org/app.bsky.graph.starterpack/3lmlpack22222"
    )
    assert starter_pack_uri(f"bsky.app/starter-pack/{ADA}/3lmlpack22222") == (
        f"at://{ADA}/app.bsky.graph.starterpack/3lmlpack22222"
    )
    pack = f"at://{ADA}/app.bsky.graph.starterpack/3lmlpack22222"
    assert starter_pack_uri(pack) == pack
    for bad in ("https://go.bsky.app/AbCdEf", f"at://{ADA}/app.bsky.graph.list/x", "nonsense"):
        with pytest.raises(UsageError):
            starter_pack_uri(bad)

    source = BlueskyStarterPackSource("https://bsky.app/starter-pack/ada.example.org/3lmlpack22222")
    first = source.first_request(SourceState())
    assert first is not None and first.url == XRPC + "app.bsky.graph.getStarterPack"
    assert first.params == {
        "starterPack": "at://ada.example.org/app.bsky.graph.starterpack/3lmlpack22222"
    }
    folder = data / "bluesky"
    url = XRPC + "app.bsky.graph.getStarterPack?starterPack=x"
    batch = source.parse((folder / "getStarterPack.json").read_bytes(), SourceState(), url=url)
    assert batch.title == "Uncertainty in ML"
    assert [a.handle for a in batch.accounts] == ["scholar1.bsky.social", "scholar2.bsky.social"]
    list_uri = f"at://{ADA}/app.bsky.graph.list/3lmlpacklist2"
    assert batch.next == Request(XRPC + "app.bsky.graph.getList", {"list": list_uri, "limit": 100})
    assert batch.state is not None

    url = XRPC + f"app.bsky.graph.getList?list={list_uri}&limit=100"
    page1 = source.parse((folder / "getList.page1.json").read_bytes(), batch.state, url=url)
    assert [a.name for a in page1.accounts] == ["Scholar 1", "Scholar 2", "Scholar 3"]
    assert page1.warnings == ["Bluesky profile without a DID"]
    assert page1.next == Request(
        XRPC + "app.bsky.graph.getList", {"list": list_uri, "limit": "100", "cursor": "3lli2"}
    )
    assert page1.state is not None
    page2 = source.parse(
        (folder / "getList.page2.json").read_bytes(), page1.state, url=url + "&cursor=3lli2"
    )
    assert [a.handle for a in page2.accounts] == ["scholar4.bsky.social", "scholar5.bsky.social"]
    assert page2.next is None
    assert all(a.service == "bluesky" and a.id.startswith("did:plc:") for a in page2.accounts)
    # The same files replay through the main kind too, recognised by their shape.
    assert (
        len(
            BlueskySource("x")
            .parse((folder / "getList.page2.json").read_bytes(), SourceState())
            .accounts
        )
        == 2
    )


def test_errors_and_unreadable_bodies(data: Path) -> None:
    source = BlueskySource("ada.example.org")
    error = (data / "bluesky/error.json").read_bytes()
    assert source.describe_error(error) == "Bluesky: InvalidRequest: Profile not found"
    assert source.describe_error(b'{"error": "RateLimitExceeded"}') == "Bluesky: RateLimitExceeded"
    assert source.describe_error(b"<html>502 Bad Gateway</html>") is None
    assert source.describe_error(b'{"feed": []}') is None
    with pytest.raises(ParseError, match="Bluesky: InvalidRequest: Profile not found"):
        source.parse(error, SourceState(), url=XRPC + "app.bsky.actor.getProfile?actor=x")
    for body, message in (
        (b"<html>oops</html>", "not JSON"),
        (b"[1, 2]", "JSON list"),
        (b'{"hello": "world"}', "keys: hello"),
        (b'{"thread": "nope"}', "no thread"),
    ):
        with pytest.raises(ParseError, match=message):
            source.parse(body, SourceState())
    with pytest.raises(ParseError, match="no feed list"):
        source.parse(b'{"posts": []}', SourceState(), url=FEED_URL.format(ADA))
    with pytest.raises(ParseError, match="getProfile"):
        BlueskyProfileSource("x").parse(b'{"feed": []}', SourceState())
    with pytest.raises(UsageError):
        BlueskySource("  @ ").first_request(SourceState())


def test_profile_replay_kind(data: Path) -> None:
    batch = BlueskyProfileSource("ada.example.org").parse(
        (data / "bluesky/getProfile.ada.json").read_bytes(), SourceState(), url="file:///x.json"
    )
    (account,) = batch.accounts
    assert (account.followers, account.following, account.posts) == (1843, 212, 977)
    assert batch.next is None and batch.items == []
    assert batch.title == "Ada Lovelace (@ada.example.org)"


def test_facet_spans_tolerate_broken_indices() -> None:
    text = "🧪 see arxiv.org/abs/2501.0... ✨ and the paper"
    link = "https://arxiv.org/abs/2501.00001"
    data = text.encode()
    start = data.index(b"arxiv")
    end = start + len(b"arxiv.org/abs/2501.0...")
    paper = data.index(b"the paper")

    def facet(start: object, end: object, uri: str = link) -> dict[str, object]:
        return {"index": {"byteStart": start, "byteEnd": end}, "features": [{"uri": uri}]}

    facets = [
        facet(start, end),
        facet(1, 3),  # inside the 4-byte emoji
        facet(end, 10_000),  # past the end
        facet(9, 5),  # reversed
        facet("0", 5),  # not numbers
        {"index": None, "features": [{"uri": "https://example.org/no-index"}]},
        "garbage",
        facet(paper, len(data), "https://example.org/paper"),
    ]
    spans = facet_spans(text, facets)
    assert [(s, e) for s, e, _ in spans] == [(6, 29), (len(text) - 9, len(text))]
    assert [text[s:e] for s, e, _ in spans] == ["arxiv.org/abs/2501.0...", "the paper"]
    assert full_text(text, facets) == (
        f"🧪 see {link} ✨ and the paper (https://example.org/paper)"
    )
    assert facet_spans(text, None) == [] and full_text(text, "nope") == text


def test_thread_numbers() -> None:
    cases = {
        "Can LLMs do this?\n🧵1/9": (1, 9),
        "Total fetch time: 38ms. [9/10]": (9, 10),
        "text then [1/10]🧵": (1, 10),
        "1/ A thread on memory": (1, None),
        "2/9 the next part": (2, 9),
        "and so on 🧵 3/": (3, None),
        "ends with a count 4/12": (4, 12),
        "(2/5) parenthesised": (2, 5),
        "arxiv.org/abs/2510.02375": None,
        "open 24/7 for questions": None,
        "no numbering here": None,
        "": None,
    }
    for text, expected in cases.items():
        assert thread_number(text) == expected, text


def test_threads_ordered_by_numbers_when_parents_are_missing() -> None:
    author = "did:plc:author"
    root = _post(author, "r0")

    def post(rkey: str, text: str, parent: str | None, published: str) -> Item:
        return Item(
            key=_post(author, rkey),
            kind="post",
            text=text,
            published=published,
            account=author,
            thread_root=root if parent else None,
            reply_parent=parent,
            post=PostDetails(uri=_post(author, rkey)),
        )

    # Times are scrambled (an import re-stamped them); the authors' numbers are not.
    items = [
        post("r6", "6/6 end", _post(author, "r5"), "2025-01-01T00:00:01Z"),
        post("r0", "1/6 start", None, "2025-01-01T00:00:09Z"),
        post("r4", "4/6", _post(author, "r3"), "2025-01-01T00:00:02Z"),
        post("r2", "2/6", root, "2025-01-01T00:00:08Z"),
        post("r2b", "a second reply to 2/6", _post(author, "r2"), "2025-01-01T00:00:07Z"),
        post("x", "someone else's thread", _post("did:plc:other", "p"), "2025-01-01T00:00:00Z"),
    ]
    (thread,) = assemble_threads(items)
    assert [i.key.rsplit("/", 1)[1] for i in thread.items] == ["r0", "r2", "r2b", "r4", "r6"]
    assert thread.gaps == [_post(author, "r3"), _post(author, "r5")]
    # Without numbers, time decides.
    for item in items:
        item.text = "no numbers"
    (thread,) = assemble_threads(items)
    assert [i.key.rsplit("/", 1)[1] for i in thread.items] == ["r0", "r2", "r2b", "r6", "r4"]
    assert thread.gaps == [_post(author, "r5"), _post(author, "r3")]


def test_paging_stops_at_cursor_and_max_pages(data: Path) -> None:
    body = (data / "bluesky/getAuthorFeed.embeds.json").read_bytes()
    source = BlueskySource(ADA, {"max_pages": 2})
    first = source.parse(body, SourceState(), url=FEED_URL.format(ADA))
    assert first.next is not None and first.next.params["cursor"] == "2025-03-01T11:00:00.000Z"
    assert first.next.params["actor"] == ADA
    assert first.state is not None and first.state.cursor is None  # not before the end
    second = source.parse(body, first.state, url=FEED_URL.format(ADA) + "&cursor=c")
    assert second.next is None  # max_pages
    assert second.state is not None and second.state.cursor == "2025-03-05T10:00:00Z"
    assert "pending_cursor" not in second.state.extra and "pages" not in second.state.extra
    # The next refresh meets posts it has seen on its first page and stops there.
    again = source.parse(body, second.state, url=FEED_URL.format(ADA))
    assert again.next is None
    assert again.state is not None and again.state.cursor == "2025-03-05T10:00:00Z"


def test_addresses_and_hosts() -> None:
    assert normalize_actor("@MKirchhof.bsky.social ") == "mkirchhof.bsky.social"
    assert normalize_actor("https://bsky.app/profile/Ada.Example.org/post/3x") == "ada.example.org"
    assert normalize_actor(f"at://{ADA}/app.bsky.feed.post/x") == ADA
    source = BlueskySource("ada.example.org", {"api_url": "http://127.0.0.1:9/xrpc/"})
    assert source.api_url == "http://127.0.0.1:9/xrpc"
    assert BlueskySource.host_interval(Settings(environ={}))["public.api.bsky.app"] == 0.1
    page = parse_response(b'{"did": "did:plc:x", "handle": "x.test"}')
    assert page.method == "app.bsky.actor.getProfile"


def test_refresh_through_the_real_http_client(
    data: Path, server: RecordedServer, settings: Settings
) -> None:
    folder = data / "bluesky"
    profile = server.route(
        "/xrpc/app.bsky.actor.getProfile", Reply(200, (folder / "getProfile.ada.json").read_bytes())
    )
    feed = (folder / "getAuthorFeed.embeds.json").read_bytes()
    server.route(
        "/xrpc/app.bsky.feed.getAuthorFeed",
        lambda hit: Reply(200, b'{"feed": []}' if "cursor" in hit.query else feed),
    )
    server.route(
        "/xrpc/app.bsky.feed.getPostThread",
        Reply(200, (folder / "getPostThread.notfound.json").read_bytes()),
    )
    source = BlueskySource("@Ada.Example.org", {"api_url": server.url("/xrpc")}, settings)
    state = SourceState()
    items: list[Item] = []
    accounts = []
    queue: list[Request | None] = [source.first_request(state)]
    followed: list[Request] = []
    with HttpClient(settings) as client:
        while queue:
            request = queue.pop(0)
            assert request is not None
            response = client.get(request.url, params=request.params)
            batch = source.parse(response.body, state, url=response.url)
            state = batch.state or state
            items += batch.items
            accounts += batch.accounts
            followed += batch.follow
            queue = [batch.next, *queue, *batch.follow] if batch.next else [*queue, *batch.follow]
    assert profile.endswith("/xrpc/app.bsky.actor.getProfile")
    assert [h.path.rsplit("/", 1)[1] for h in server.hits] == [
        "app.bsky.actor.getProfile",
        "app.bsky.feed.getAuthorFeed",
        "app.bsky.feed.getAuthorFeed",
        "app.bsky.feed.getPostThread",
    ]
    assert server.hits[0].query == {"actor": ["ada.example.org"]}
    assert server.hits[1].query["actor"] == [ADA]
    assert server.hits[1].query["filter"] == ["posts_and_author_threads"]
    assert server.hits[2].query["cursor"] == ["2025-03-01T11:00:00.000Z"]
    assert server.hits[3].query["uri"] == [_post(ADA, "3ladamissing2")]
    assert [a.followers for a in accounts if a.followers is not None] == [1843]
    assert [r.params["uri"] for r in followed] == [_post(ADA, "3ladamissing2")]
    assert state.cursor == "2025-03-05T10:00:00Z" and state.extra["did"] == ADA
    pinned = [i for i in items if item_extra(i).get("pinned")]
    assert [i.key for i in pinned] == [_post(ADA, "3ladaimages22")]  # from the profile
    (thread,) = assemble_threads(items)
    assert thread.complete and len(thread.items) == 3
