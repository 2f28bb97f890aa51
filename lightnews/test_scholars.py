"""Following scholars: identities, attribution with user decisions, the scholar page data."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from conftest import RecordedServer, Reply
from lightnews.cli import cli
from lightnews.store import Store


def run(db: Path, *args: str, code: int = 0) -> Any:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    try:
        return json.loads(result.stdout)
    except json.JSONDecodeError:
        return result.stdout


def test_follow_arxiv_author_on_real_records(tmp_path: Path, shared: Path) -> None:
    db = tmp_path / "x.db"
    followed = run(db, "follow", "--arxiv-author", "Adrian Del Maestro", "--json")
    assert {"kind": "arxiv-name", "value": "Adrian Del Maestro"} in followed["identities"]
    sources = run(db, "sources", "list", "--json")
    assert sources[0]["url"] == 'au:"Adrian Del Maestro"'
    feed = shared / "arxiv/api-2016/search_au_del_maestro.xml"
    run(db, "ingest", "--kind", "arxiv-api", "--from-file", str(feed))
    page = run(db, "scholar", "Adrian Del Maestro", "--json", "--per-page", "4")
    assert page["records_at_least"] == 10 and page["pages"] == 3 and len(page["papers"]) == 4
    first = page["papers"][0]
    assert first["year"] and first["primary_category"].startswith("cond-mat")
    assert first["url"].startswith("https://arxiv.org/abs/")
    years = [p["year"] for p in page["papers"]]
    assert years == sorted(years, reverse=True)
    second = run(db, "scholar", "Adrian Del Maestro", "--json", "--per-page", "4", "--page", "2")
    assert not {p["arxiv_id"] for p in second["papers"]} & {p["arxiv_id"] for p in page["papers"]}
    # "A. Del Maestro" is matched too, with a lower confidence lifted by shared co-authors.
    assert any(p["name_as_written"] == "A. Del Maestro" for p in page["papers"] + second["papers"])

    wrong = first["arxiv_id"]
    run(db, "scholars", "reject", "Adrian Del Maestro", wrong)
    run(db, "ingest", "--kind", "arxiv-api", "--from-file", str(feed))
    after = run(db, "scholar", "Adrian Del Maestro", "--json", "--per-page", "50")
    assert after["records_at_least"] == 9
    assert wrong not in {p["arxiv_id"] for p in after["papers"]}
    run(db, "scholars", "undecide", "Adrian Del Maestro", wrong)
    assert run(db, "scholar", "Adrian Del Maestro", "--json")["records_at_least"] == 10


def test_follow_on_demo_and_decisions_survive_reingest(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    run(db, "follow", "--arxiv-author", "Mara Lindqvist")
    run(db, "demo")
    page = run(db, "scholar", "mara lindqvist", "--json")
    ids = [p["arxiv_id"] for p in page["papers"]]
    assert page["records_at_least"] == len(ids) >= 6
    assert all(p["confidence"] >= 0.6 for p in page["papers"])
    run(db, "scholars", "reject", "Mara Lindqvist", ids[0])
    run(db, "scholars", "confirm", "Mara Lindqvist", "2511.15577")  # not hers by name
    run(db, "demo")  # re-ingest everything
    again = run(db, "scholar", "Mara Lindqvist", "--json", "--per-page", "50")
    kept = [p["arxiv_id"] for p in again["papers"]]
    assert ids[0] not in kept and "2511.15577" in kept
    listed = run(db, "scholars", "list", "--json")
    assert listed[0]["records"] == again["records_at_least"]
    # A decision every reader sees: recorded with who made it (issue 31).
    from lightnews.store import open_store

    with open_store(db) as store:
        mara = store.find_scholar("Mara Lindqvist")
        made = [(e.actor, e.action, e.target) for e in reversed(store.audit_log())]
        actor = made[0][0]
        assert store.deciders(mara) == {ids[0]: actor, "2511.15577": actor}
    assert actor.startswith("cli") and made == [
        (actor, "attribution.reject", f"#{mara} {ids[0]}"),
        (actor, "attribution.confirm", f"#{mara} 2511.15577"),
    ]


def test_merge_and_split(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    run(db, "demo")
    a = run(db, "follow", "--arxiv-author", "Mara Lindqvist", "--json")
    b = run(db, "follow", "--arxiv-author", "M. Lindqvist", "--json")
    assert a["id"] != b["id"]
    run(db, "scholars", "merge", str(a["id"]), str(b["id"]))
    merged = {s["id"]: s for s in run(db, "scholars", "list", "--json")}
    assert b["id"] not in merged  # the demo follows Mara and Tobias: two scholars remain
    assert len(merged) == 2
    assert {"kind": "arxiv-name", "value": "M. Lindqvist"} in merged[a["id"]]["identities"]
    run(
        db,
        "scholars",
        "split",
        str(a["id"]),
        "--identity",
        "arxiv-name:M. Lindqvist",
        "--name",
        "Somebody Else",
    )
    assert len(run(db, "scholars", "list", "--json")) == 3
    run(db, "scholars", "merge", str(a["id"]), str(a["id"]), code=2)
    run(db, "scholar", "Nobody At All", code=1)
    run(db, "follow", code=2)


def test_seed_scholar_page(tmp_path: Path, shared: Path) -> None:
    """Seed 000: pinned first, threads whole and in order, reposts, full links, counts."""
    db = tmp_path / "x.db"
    seed = shared / "seed-pages/bluesky"
    run(db, "follow", "@mkirchhof.bsky.social")
    run(
        db,
        "ingest",
        "--kind",
        "bluesky-profile",
        "--from-file",
        str(seed / "getProfile.mkirchhof.json"),
    )
    run(
        db, "ingest", "--kind", "bluesky", "--from-file", str(seed / "getAuthorFeed.mkirchhof.json")
    )
    page = run(db, "scholar", "@mkirchhof.bsky.social", "--json")
    assert page["scholar"]["name"] == "Michael Kirchhof (ICML)"
    profile = page["profile"]
    assert (profile["followers"], profile["following"], profile["posts"]) == (340, 190, 65)
    assert profile["handle"] == "mkirchhof.bsky.social" and not profile["bot"]
    posts = page["posts"]
    first = posts[0]
    assert first["pinned"] and first["text"].startswith("Can LLMs access")
    assert (first["reply_count"], first["repost_count"], first["like_count"]) == (1, 6, 21)
    assert "https://github.com/apple/ml-selfreflect" in first["links"]
    assert not any(link.endswith("...") for p in posts for link in p["links"])

    units: list[list[dict[str, Any]]] = []
    for post in posts:
        if post["position"] == 1:
            units.append([])
        units[-1].append(post)
    threads = [u for u in units if len(u) > 1]
    assert [len(u) for u in threads] == [10, 10, 4]
    pinned_thread, memory, selfreflect = threads
    assert sum(p["gap"] for p in pinned_thread) == 1 and pinned_thread[1]["gap"]
    assert [p["position"] for p in memory] == list(range(1, 11))
    assert memory[0]["text"].endswith("[1/10]🧵") and "[9/10]" in memory[8]["text"]
    assert "2510.02375" in memory[5]["thread_papers"]
    assert [p["created_at"] for p in selfreflect] == sorted(p["created_at"] for p in selfreflect)

    reposts = [p for p in posts if p["reposted_by"]]
    assert len(reposts) == 2
    assert {p["reposted_by"]["handle"] for p in reposts} == {"mkirchhof.bsky.social"}
    assert {p["handle"] for p in reposts} == {"marcocuturi.bsky.social", "shubhendu.bsky.social"}
    mentioned = {a for p in posts for a in p["papers"]}
    assert {"2510.02375", "2505.20295", "2508.21184"} <= mentioned
    for arxiv_id in ("2510.02375", "2505.20295", "2508.21184"):
        story = run(db, "show", arxiv_id, "--json")
        assert story["stub"] and story["mentions"]  # waits for its metadata, mentions kept
    # Re-ingesting is harmless.
    run(
        db, "ingest", "--kind", "bluesky", "--from-file", str(seed / "getAuthorFeed.mkirchhof.json")
    )
    assert run(db, "scholar", "mkirchhof.bsky.social", "--json")["posts"] == posts


def test_follow_starter_pack_follows_every_member(
    tmp_path: Path, server: RecordedServer, data: Path
) -> None:
    from lightnews.ingest.refresh import refresh
    from lightnews.settings import Settings
    from lightnews.store import SQLiteStore

    folder = data / "bluesky"
    server.route(
        "/xrpc/app.bsky.graph.getStarterPack",
        Reply(200, (folder / "getStarterPack.json").read_bytes()),
    )
    server.route(
        "/xrpc/app.bsky.graph.getList",
        lambda hit: Reply(
            200,
            (
                folder / ("getList.page2.json" if "cursor" in hit.query else "getList.page1.json")
            ).read_bytes(),
        ),
    )
    store = SQLiteStore(tmp_path / "x.db")
    store.add_source(
        "bluesky-starter-pack",
        "https://bsky.app/starter-pack/ada.bsky.social/3lmlpack22222",
        now="2025-12-01T00:00:00Z",
        params={"follow_members": True, "api_url": server.url("/xrpc")},
    )
    settings = Settings(environ={}).with_overrides(
        allow_private_addresses=True, resolve_online=False
    )
    (report,) = refresh(store, settings)
    # One member of the list has no DID: recorded on the source, the others followed.
    assert report.error == "Bluesky profile without a DID"
    scholars = store.list_scholars()
    handles = {i.value for s in scholars for i in s.identities if i.kind == "bluesky-handle"}
    assert {"scholar1.bsky.social", "scholar5.bsky.social"} <= handles
    assert len([s for s in store.list_sources() if s.kind == "bluesky"]) == len(scholars)
    refresh(store, settings, force=True, kinds=["bluesky-starter-pack"])
    assert len(store.list_scholars()) == len(scholars) == 5  # idempotent
    store.close()


def test_merging_moves_everything_on_both_backends(store: Store) -> None:
    """Identities, decisions (a paper decided for both keeps the kept one's), follows."""
    now = "2026-12-03T12:00:00Z"
    keep = store.create_scholar("Ada Lovelace", now)
    drop = store.create_scholar("ada lovelace", now)
    store.add_identity(keep, "arxiv-name", "Ada Lovelace")
    store.add_identity(drop, "bluesky-handle", "ada.bsky.social")
    store.set_decision(keep, "2511.00001", "confirm", now)
    store.set_decision(drop, "2511.00001", "reject", now)
    store.set_decision(drop, "2511.00002", "confirm", now)
    store.merge_scholars(keep, drop)
    assert ("bluesky-handle", "ada.bsky.social") in store.identities(keep)
    assert store.decisions(keep) == {"2511.00001": "confirm", "2511.00002": "confirm"}
    assert store.namesakes(keep) == []
