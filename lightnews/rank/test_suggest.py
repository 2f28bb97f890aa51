"""Follow suggestions: who the followed scholars share and follow, co-authors, saved papers.

A small world on each backend: the reader follows two scholars (Ada, with a
Bluesky DID and arXiv papers; Ben, with a DID); the network heard Ada and Ben
repost and quote accounts, Ada follow one, a bot and a mirror reposted by
both, an account the reader muted; papers by Ada with co-authors, one with a
known Bluesky account; a paper the reader saved, written and discussed by
others. Each suggestion must say who and how many; what is followed, muted or
automated must not be suggested; another reader gets their own.
"""

from __future__ import annotations

import orjson
from click.testing import CliRunner

from lightnews.ingest.follow import follow_scholar
from lightnews.link.attribution import attribute_scholar
from lightnews.model import Account, Author, NetworkMention, NetworkPost, Paper
from lightnews.rank.suggest import Suggestion, SuggestionReason, follow_suggestions
from lightnews.sources.jetstream import SERVICE
from lightnews.store import Store
from lightnews.store.network import ListenCursor
from lightnews.store.readers import LOCAL_READER, ReaderId

NOW = "2026-12-03T08:00:00Z"
ADA, BEN = "did:plc:ada00000000000000000000", "did:plc:ben00000000000000000000"
CLARA = "did:plc:clara000000000000000000"  # reposted by Ada (3 posts) and Ben (1), quoted by Ben
DAN = "did:plc:dan00000000000000000000"  # followed by Ada
EVE = "did:plc:eve00000000000000000000"  # co-author of Ada's papers (an account named so)
BOT = "did:plc:bot00000000000000000000"
MIRROR = "did:plc:mirror0000000000000000"
MUTED = "did:plc:muted000000000000000000"
FRED = "did:plc:fred0000000000000000000"  # discussed the saved paper
GINA = "did:plc:gina0000000000000000000"  # wrote the saved paper (a known scholar)
P1, P2, P3, SAVED = "2511.00001", "2511.00002", "2511.00003", "2511.00009"


def _post(
    did: str,
    rkey: str,
    kind: str = "post",
    subject: str | None = None,
    papers: tuple[str, ...] = (P1,),
    t: int = 0,
) -> NetworkPost:
    collection = {
        "post": "app.bsky.feed.post",
        "repost": "app.bsky.feed.repost",
        "quote": "app.bsky.feed.post",
    }[kind]
    return NetworkPost(
        f"at://{did}/{collection}/{rkey}",
        did,
        kind,
        1_700_000_000_000_000 + t,
        tuple(NetworkMention(p, "id", 1.0) for p in papers),
        subject,
    )


def _world(store: Store) -> dict[str, int]:
    store.save_papers(
        [
            Paper(
                P1,
                title="One",
                published="2025-11-01T00:00:00Z",
                authors=[Author("Ada Lovelace"), Author("Eve Hopper")],
            ),
            Paper(
                P2,
                title="Two",
                published="2025-11-02T00:00:00Z",
                authors=[Author("Eve Hopper"), Author("Ada Lovelace")],
            ),
            Paper(
                P3,
                title="Three",
                published="2025-11-03T00:00:00Z",
                authors=[Author("Ada Lovelace"), Author("Nobody Known")],
            ),
            Paper(
                SAVED,
                title="Saved",
                published="2025-11-04T00:00:00Z",
                authors=[Author("Gina Grace"), Author("Eve Hopper")],
            ),
        ],
        NOW,
    )
    ada = follow_scholar(store, LOCAL_READER, NOW, handle=ADA, arxiv_author="Ada Lovelace")
    store.rename_scholar(ada, "Ada Lovelace")
    ben = follow_scholar(store, LOCAL_READER, NOW, handle=BEN)
    store.rename_scholar(ben, "Ben Franklin")
    gina = store.create_scholar("Gina Grace", NOW)
    store.add_identity(gina, "arxiv-name", "Gina Grace")
    store.add_identity(gina, "bluesky-handle", "gina.bsky.social")
    attribute_scholar(store, gina)
    muted = store.create_scholar("Mute Me", NOW)
    store.add_identity(muted, "bluesky-did", MUTED)
    store.set_mute(LOCAL_READER, "scholar", str(muted), NOW)
    store.save_accounts(
        [
            Account(SERVICE, CLARA, "clara.bsky.social", "Clara Z", followers=1200),
            Account(SERVICE, EVE, "eve.bsky.social", "Eve Hopper", followers=90),
            Account(SERVICE, BOT, "arxiv-bot.bsky.social", "arXiv bot"),
            Account(SERVICE, MIRROR, "mirror.bsky.social", "Mirror"),
            Account(SERVICE, GINA, "gina.bsky.social", "Gina Grace"),
        ],
        NOW,
    )
    store.mark_bot(SERVICE, BOT, "posts bare listings")
    store.mark_bot(SERVICE, MIRROR, "says it mirrors")
    posts = [
        *(_post(CLARA, f"c{n}", t=n) for n in range(3)),
        *(
            _post(ADA, f"r{n}", "repost", f"at://{CLARA}/app.bsky.feed.post/c{n}", t=10 + n)
            for n in range(3)
        ),
        _post(ADA, "r0-again", "repost", f"at://{CLARA}/app.bsky.feed.post/c0", t=20),
        _post(BEN, "r9", "repost", f"at://{CLARA}/app.bsky.feed.post/c1", t=21),
        _post(BEN, "q1", "quote", f"at://{CLARA}/app.bsky.feed.post/c2", t=22),
        _post(ADA, "rb", "repost", f"at://{BOT}/app.bsky.feed.post/b1", t=23),
        _post(BEN, "rm", "repost", f"at://{MIRROR}/app.bsky.feed.post/m1", t=24),
        _post(ADA, "rx", "repost", f"at://{MUTED}/app.bsky.feed.post/x1", t=25),
        _post(ADA, "rs", "repost", f"at://{BEN}/app.bsky.feed.post/s1", t=26),
        _post(FRED, "f1", papers=(SAVED,), t=27),
        _post(BOT, "b9", papers=(SAVED,), t=28),
    ]
    store.save_network(posts, [], ListenCursor("test", 1), NOW)
    store.save_follows(ADA, [DAN, BEN], NOW)
    store.mark_story(LOCAL_READER, SAVED, NOW, saved=True)
    return {"ada": ada, "ben": ben, "gina": gina, "muted": muted}


def _by_did(found: list[Suggestion]) -> dict[str, Suggestion]:
    return {s.did or s.handle: s for s in found}


def _reason(s: Suggestion, kind: str) -> SuggestionReason:
    return next(r for r in s.reasons if r.kind == kind)


def test_suggestions_say_who_and_how_many(store: Store) -> None:
    ids = _world(store)
    found = follow_suggestions(store, LOCAL_READER, bar=0.5)
    got = _by_did(found)
    # Clara: three posts reposted by Ada (one twice: once), one by Ben; quoted once by Ben.
    clara = got[CLARA]
    repost = _reason(clara, "repost")
    assert repost.count == 4 and [s.name for s in repost.by] == ["Ada Lovelace", "Ben Franklin"]
    assert repost.text == "reposted 4 times by Ada Lovelace and Ben Franklin you follow"
    assert [p.href for p in repost.reason.parts if p.href] == [
        f"/scholar/{ids['ada']}",
        f"/scholar/{ids['ben']}",
    ]
    assert _reason(clara, "quote").text == "quoted once by Ben Franklin you follow"
    assert found[0].did == CLARA  # two scholars, five shares: the strongest
    assert clara.name == "Clara Z" and clara.handle == "clara.bsky.social"
    assert clara.follow_as == "clara.bsky.social" and clara.followers == 1200
    # Dan: followed by Ada (no account row: known by DID only).
    assert _reason(got[DAN], "follow").text == "followed by Ada Lovelace you follow"
    # Eve: co-author of two of Ada's papers (her account found by its exact name), and an
    # author of the saved paper.
    eve = got[EVE]
    assert _reason(eve, "coauthor").text == "co-author of 2 papers with Ada Lovelace you follow"
    assert _reason(eve, "coauthor").papers == (P2, P1)
    assert _reason(eve, "saved-author").text == f"author of 1 paper you saved ({SAVED})"
    # Gina: a known scholar (not followed) who wrote the saved paper; her DID from her handle.
    gina = got[GINA]
    assert gina.scholar_id == ids["gina"] and gina.handle == "gina.bsky.social"
    assert [r.kind for r in gina.reasons] == ["saved-author"]
    # Fred discussed the saved paper on the network.
    assert _reason(got[FRED], "discussed").text == f"discussed 1 paper you saved ({SAVED})"
    # Left out: bots and mirrors, the muted scholar, followed scholars (Ben), authors with no
    # account ("Nobody Known"), and the reader's own scholars' accounts.
    assert not {BOT, MIRROR, MUTED, BEN, ADA} & got.keys()
    assert all("Nobody" not in s.label for s in found)
    assert all(s.reasons and s.score > 0 for s in found)


def test_following_or_muting_removes_a_suggestion(store: Store) -> None:
    _world(store)
    follow_scholar(store, LOCAL_READER, NOW, handle="clara.bsky.social")  # by handle
    got = _by_did(follow_suggestions(store, LOCAL_READER, bar=0.5))
    assert CLARA not in got and DAN in got
    dan = store.create_scholar("Dan", NOW)
    store.add_identity(dan, "bluesky-did", DAN)
    store.set_mute(LOCAL_READER, "scholar", str(dan), NOW)
    assert DAN not in _by_did(follow_suggestions(store, LOCAL_READER, bar=0.5))


def test_each_reader_gets_their_own(store: Store) -> None:
    _world(store)
    before = follow_suggestions(store, LOCAL_READER, bar=0.5)
    first = ReaderId(store.add_user("amy", "x", admin=True, now=NOW).id)  # takes the state over
    other = ReaderId(store.add_user("zoe", "x", admin=False, now=NOW).id)
    assert follow_suggestions(store, first, bar=0.5) == before
    assert follow_suggestions(store, other, bar=0.5) == []  # follows nobody, saved nothing
    ben = store.scholar_by_identity("bluesky-did", BEN)
    assert ben is not None
    store.set_followed(other, ben, True, NOW)
    got = _by_did(follow_suggestions(store, other, bar=0.5))
    assert set(got) == {CLARA}  # Ben's shares only (Ada's are not this reader's)
    assert [r.text for r in got[CLARA].reasons] == [
        "quoted once by Ben Franklin you follow",
        "reposted once by Ben Franklin you follow",
    ]


def test_the_command_prints_reasons_and_json(store: Store) -> None:
    from lightnews.cli import cli

    _world(store)
    location = getattr(store, "url", None) or str(store.path)
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", location, "suggest"])
    assert result.exit_code == 0, result.output
    assert "reposted 4 times by Ada Lovelace and Ben Franklin you follow" in result.output
    assert "lightnews follow clara.bsky.social\n" in result.output
    # Gina is a scholar already: the command adds the handle to her, not to a new one.
    gina = store.scholar_by_identity("arxiv-name", "Gina Grace")
    assert f"lightnews follow gina.bsky.social --scholar {gina}" in result.output
    result = runner.invoke(cli, ["--db", location, "suggest", "--json", "--limit", "1"])
    data = orjson.loads(result.output)["suggestions"]
    assert len(data) == 1 and data[0]["did"] == CLARA and data[0]["reasons"][0]["count"] >= 1


def test_the_page_follows_a_known_scholar_onto_that_scholar(store: Store) -> None:
    import re

    from starlette.testclient import TestClient

    from lightnews.serve.app import create_app
    from lightnews.settings import Settings

    ids = _world(store)
    location = getattr(store, "url", None) or str(store.path)
    app = create_app(location, Settings(environ={}).with_overrides(resolve_online=False))
    with TestClient(app, base_url="http://localhost") as client:
        page = client.get("/suggestions").text
        assert "reposted 4 times by" in page and 'href="/scholar/' in page
        # Gina is a known scholar: her button follows her handle onto her, not a new one.
        form = re.search(
            r'<form action="/follow" method="post">(?:(?!</form>).)*'
            r'value="gina.bsky.social".*?</form>',
            page,
            re.S,
        )
        assert form and f'name="scholar" value="{ids["gina"]}"' in form.group(0)
        token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page)
        assert token
        done = client.post(
            "/follow",
            follow_redirects=False,
            data={
                "csrf_token": token.group(1),
                "handle": "gina.bsky.social",
                "scholar": str(ids["gina"]),
            },
        )
        assert done.status_code == 303 and done.headers["location"] == f"/scholar/{ids['gina']}"
        after = client.get("/suggestions").text
        assert 'aria-label="Follow Gina Grace"' not in after
        # Following her made her co-author Eve's suggestion stronger, and it says so.
        assert "co-author of 3 papers with <a" in after and ">Gina Grace</a> you follow" in after
        data = client.get("/api/suggestions").json()["suggestions"]
        assert CLARA in {s["did"] for s in data} and GINA not in {s["did"] for s in data}
    assert ids["gina"] in store.follows(LOCAL_READER)


def test_following_a_suggested_arxiv_author_adds_the_handle_to_them(store: Store) -> None:
    """Eve Hopper is an arXiv author the instance knows (a scholar, followed by no one) and
    the account "Eve Hopper" on the network: following the suggestion is one scholar."""
    import re

    from starlette.testclient import TestClient

    from lightnews.serve.app import create_app
    from lightnews.settings import Settings

    _world(store)
    eve = store.create_scholar("Eve Hopper", NOW)
    store.add_identity(eve, "arxiv-name", "Eve Hopper")
    attribute_scholar(store, eve)
    suggested = _by_did(follow_suggestions(store, LOCAL_READER, bar=0.5))[EVE]
    assert suggested.scholar_id == eve and suggested.follow_as == "eve.bsky.social"
    scholars_before = {r.id for r in store.list_scholars(0.5)}
    location = getattr(store, "url", None) or str(store.path)
    app = create_app(location, Settings(environ={}).with_overrides(resolve_online=False))
    with TestClient(app, base_url="http://localhost") as client:
        page = client.get("/suggestions").text
        form = re.search(
            r'<form action="/follow" method="post">(?:(?!</form>).)*'
            r'value="eve.bsky.social".*?</form>',
            page,
            re.S,
        )
        assert form and f'name="scholar" value="{eve}"' in form.group(0)
        token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page)
        assert token
        done = client.post(
            "/follow",
            follow_redirects=False,
            data={"csrf_token": token.group(1), "handle": "eve.bsky.social", "scholar": str(eve)},
        )
        assert done.status_code == 303 and done.headers["location"] == f"/scholar/{eve}"
        # The scholar's page says when her posts come (no worker here: the next refresh).
        shown = client.get(f"/scholar/{eve}").text
        assert 'id="first-fetch"' in shown
        assert (
            "First fetch now, on the next <code>lightnews refresh</code> (no worker is running)."
        ) in shown
        api = client.get(f"/api/scholar/{eve}").json()
        assert api["first_fetch"]["by_worker"] is False and api["first_fetch"]["sources"] == 1
        # A scholar that was never fetched from anywhere new says nothing of it.
        assert 'id="first-fetch"' not in client.get("/scholar/Mute Me").text
        # A scholar that is not there is refused, and nothing is followed for it.
        bad = client.post(
            "/follow",
            follow_redirects=False,
            data={"csrf_token": token.group(1), "handle": "clara.bsky.social", "scholar": "99999"},
        )
        assert bad.status_code == 404
    assert store.scholar_by_identity("bluesky-handle", "eve.bsky.social") == eve
    assert {r.id for r in store.list_scholars(0.5)} == scholars_before  # no "@eve..." scholar
    assert all(r.name != "@eve.bsky.social" for r in store.list_scholars(0.5))
    assert eve in store.follows(LOCAL_READER)
    assert store.scholar_by_identity("bluesky-handle", "clara.bsky.social") is None
