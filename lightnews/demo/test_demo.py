"""The offline demo: every page type has data, read through the real parsers, idempotently."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from lightnews.demo import SNAPSHOT_FILES, build_demo, snapshot_path
from lightnews.link.threads import thread_number
from lightnews.model import item_extra
from lightnews.serve.scholar import scholar_page
from lightnews.settings import Settings
from lightnews.sources.bluesky import facet_spans
from lightnews.store import LOCAL_READER, CommonStore, Store

MARA = "maralindqvist.bsky.social"
BOT = "cs-lg-listings.bsky.social"


def _units(posts: list[dict[str, Any]]) -> list[list[dict[str, Any]]]:
    """The scholar page's posts cut into units (a thread, or one post)."""
    units: list[list[dict[str, Any]]] = []
    for post in posts:
        if post["position"] == 1:
            units.append([])
        units[-1].append(post)
    return units


def test_snapshot_files_are_listed_and_documented(demo_dir: Path) -> None:
    readme = (demo_dir / "README.md").read_text()
    listed = {name for name, _ in SNAPSHOT_FILES}
    on_disk = {p.name for p in demo_dir.iterdir() if p.is_file()} - {"README.md", "sources.opml"}
    assert listed == on_disk
    for name, kind in SNAPSHOT_FILES:
        assert snapshot_path(name).is_file()
        assert f"`{name}`" in readme and kind in readme
        if name.endswith(".json"):
            json.loads((demo_dir / name).read_text(encoding="utf-8"))


def test_demo_builds_every_page_type_and_twice_changes_nothing(
    store: Store, settings: Settings
) -> None:
    reports = build_demo(store, settings)
    assert all(r.ok for r in reports), [(r.address, r.error) for r in reports if not r.ok]
    assert [r.kind for r in reports] == [kind for _, kind in SNAPSHOT_FILES]
    counts = store.counts()
    assert counts["scholars"] == 2 and counts["stubs"] == 0

    again = build_demo(store, settings)
    assert all(r.ok for r in again)
    assert store.counts() == counts
    changed = [
        (r.address, r.saved.papers_new, r.saved.papers_updated, r.saved.items_new)
        for r in again
        if r.saved.changed
    ]
    assert changed == []
    assert all(r.saved.items_updated == 0 for r in again)


KASANTE = "kasantebello.bsky.social"


def test_demo_scholar_page(store: Store, settings: Settings) -> None:
    build_demo(store, settings)
    page = scholar_page(store, MARA, reader=LOCAL_READER).to_json()
    assert page["scholar"]["name"] == "Mara Lindqvist" and page["scholar"]["followed"]
    kinds = {i["kind"] for i in page["scholar"]["identities"]}
    assert kinds == {"arxiv-name", "bluesky-handle", "bluesky-did"}
    profile = page["profile"]
    assert (profile["followers"], profile["following"], profile["posts"]) == (2318, 412, 287)
    assert profile["handle"] == MARA and profile["did"].startswith("did:plc:")
    assert not profile["bot"]

    posts = page["posts"]
    first = posts[0]
    assert first["pinned"] and first["thread_size"] == 5 and "🧵1/5" in first["text"]
    assert "arxiv.org/abs/2511.1834..." in first["text"]  # cut short in the text...
    assert first["links"] == ["https://arxiv.org/abs/2511.18342"]  # ...whole in the facet
    assert not any(link.endswith(("...", "…")) for p in posts for link in p["links"])
    assert sum(p["pinned"] for p in posts) == 1

    units = _units(posts)
    threads = [u for u in units if len(u) > 1]
    assert [len(t) for t in threads] == [5, 3]
    ring, regen = threads
    assert [p["position"] for p in ring] == [1, 2, 3, 4, 5]
    assert [thread_number(p["text"]) for p in ring] == [(n, 5) for n in range(1, 6)]
    times = [p["created_at"] for p in ring]
    assert times == sorted(times) and not any(p["gap"] for p in ring)
    assert "https://github.com/northlake-ai/ring-attention" in ring[0]["thread_links"]
    assert "2511.18342" in ring[2]["thread_papers"]

    assert [p["gap"] for p in regen] == [False, True, False]
    assert regen[0]["text"].endswith("[1/3]") and regen[2]["text"].endswith("[3/3]")
    assert regen[1]["uri"].startswith("at://did:plc:") and regen[1]["text"] == ""
    assert regen[0]["card"]["uri"] == "https://github.com/northlake-ai/regen-bench"
    assert regen[0]["papers"] == ["2510.03172"]

    reposts = [p for p in posts if p["reposted_by"]]
    assert len(reposts) == 2
    assert {p["reposted_by"]["handle"] for p in reposts} == {MARA}
    assert {p["handle"] for p in reposts} == {"pdeshmane.bsky.social", "tachterberg.bsky.social"}
    quoted = next(p for p in reposts if p["quote"])
    assert quoted["quote"]["uri"] == first["uri"] and quoted["papers"] == ["2511.18342"]
    assert "2511.10268" in {a for p in reposts for a in p["papers"]}
    engaged = [
        (p["reply_count"], p["repost_count"], p["like_count"]) for p in posts if not p["gap"]
    ]
    assert all(likes > 0 for _, _, likes in engaged)

    # After the pinned thread: newest first.
    latest = [
        max((p["created_at"] or "") for p in unit)
        for unit in units[1:]
        if not any(p["reposted_by"] for p in unit)
    ]
    assert latest == sorted(latest, reverse=True)

    items = store.account_items([profile["did"]])
    alts = [alt for i in items for alt in item_extra(i).get("images") or []]
    assert any("Calibrated Abstention for Language Model Judges" in alt for alt in alts)
    replies = [i.post for i in items if i.post and i.post.reply_parent_author == KASANTE]
    assert len(replies) == 1 and replies[0] and not replies[0].reply_parent_unavailable

    papers = {p["arxiv_id"] for p in page["papers"]}
    assert page["records_at_least"] >= 6 and page["records_at_least"] == len(page["papers"])
    assert {"2511.18342", "2510.03172", "2511.10268"} <= papers
    assert "2511.15577" not in papers  # Tobias's paper, not hers
    tobias = scholar_page(store, "Tobias Achterberg-Reyes", reader=LOCAL_READER).to_json()
    assert tobias["profile"] is None and tobias["records_at_least"] >= 6


def test_demo_facets_count_bytes(demo_dir: Path) -> None:
    feed = orjson.loads((demo_dir / "bluesky-feed.mara.json").read_bytes())
    pinned = feed["feed"][0]
    assert pinned["reason"]["$type"] == "app.bsky.feed.defs#reasonPin"
    record = pinned["post"]["record"]
    text, (facet,) = record["text"], record["facets"]
    start, end = facet["index"]["byteStart"], facet["index"]["byteEnd"]
    assert text.encode()[start:end].decode() == "arxiv.org/abs/2511.1834..."
    assert text.index("arxiv.org/abs/2511.1834...") != start  # emoji before it: bytes ≠ chars
    ((_, _, feature),) = facet_spans(text, record["facets"])
    assert feature["uri"] == "https://arxiv.org/abs/2511.18342"
    # The feed is newest first (by the time each entry entered it), pinned post aside.
    times = [
        (e.get("reason") or {}).get("indexedAt") or e["post"]["record"]["createdAt"]
        for e in feed["feed"][1:]
    ]
    assert times == sorted(times, reverse=True)


def test_demo_bot_daily_notes_and_code(store: CommonStore, settings: Settings) -> None:
    build_demo(store, settings)
    bot = store.get_account("bluesky", BOT)
    assert bot is not None and bot.bot and bot.name == "cs.LG new listings"
    bot_items = store.account_items([bot.id])
    assert len(bot_items) == 6 and all(len(i.mentions) == 1 for i in bot_items)
    mara = store.get_account("bluesky", MARA)
    assert mara is not None and not mara.bot
    titles = {s.address: s.title for s in store.list_sources()}
    assert titles["demo:bluesky-feed.mara.json"] == "Mara Lindqvist (@maralindqvist.bsky.social)"
    assert titles["demo:bluesky-feed.arxivbot.json"] == f"cs.LG new listings (@{BOT})"

    daily = store.db.execute(
        "SELECT key, engagement, extra FROM items WHERE kind = 'daily' ORDER BY key"
    ).fetchall()
    assert len(daily) == 5
    for row in daily:
        assert row["key"].startswith("hf-daily:2025-11-27:")
        assert orjson.loads(row["engagement"])["upvotes"] > 0
        assert orjson.loads(row["extra"])["featured_day"] == "2025-11-27"
    ring = store.get_paper("2511.18342")
    assert "hf-daily" in {r.source_kind for r in ring.records}
    assert ring.links["code"] == "https://github.com/northlake-ai/ring-attention"
    # The paper the daily list does not feature keeps its three arXiv records.
    assert len(store.get_paper("2510.03172").records) == 3

    notes = store.db.execute(
        "SELECT title, extra FROM items WHERE kind = 'note' ORDER BY id"
    ).fetchall()
    assert len(notes) == 10
    extras = {n["title"]: orjson.loads(n["extra"]) for n in notes}
    assert {e["papers_reviewed"] for e in extras.values()} == {8}
    sections = {t for t, e in extras.items() if e["is_section"]}
    assert sections == {"NeurIPS2025 Wednesday Posters", "NeurIPS2025 Efficiency"}
    assert extras["NeurIPS2025 Lindqvist: sparse ring attention"]["section"] == "Efficiency"
    linked = {
        arxiv_id: {
            m.title
            for m in store.get_paper(arxiv_id).mentions
            if m.kind == "note" and m.method in ("surname-title", "fuzzy-title")
        }
        for arxiv_id in ("2511.18342", "2511.15577", "2511.10268", "2510.18421", "2510.22980")
    }
    assert linked["2511.18342"] == {
        "NeurIPS2025 Lindqvist: sparse ring attention",
        "NeurIPS2025 Efficiency",
    }
    assert "NeurIPS2025 Achterberg-Reyes: verifier disagreement rewards" in linked["2511.15577"]
    assert all(linked.values())
    efficiency = store.db.execute(
        "SELECT count(*) FROM mentions m JOIN items i ON i.id = m.item_id "
        "WHERE i.title = 'NeurIPS2025 Efficiency'"
    ).fetchone()[0]
    assert efficiency == 3  # one note naming three papers
    urls = [r[0] for r in store.db.execute("SELECT url FROM items WHERE kind = 'note'")]
    assert all(u.startswith("https://elifbrennan.example/notes/neurips2025/") for u in urls)

    regen = store.get_paper("2510.03172")
    assert regen.links["code"] == "https://github.com/northlake-ai/regen-bench"


def test_demo_reuses_a_scholar_the_user_follows(store: Store, settings: Settings) -> None:
    mine = store.create_scholar("Mara L.", "2025-12-01T00:00:00Z")
    store.add_identity(mine, "arxiv-name", "Mara Lindqvist")
    build_demo(store, settings)
    scholars = store.list_scholars()
    assert len(scholars) == 2
    page = scholar_page(store, MARA, reader=LOCAL_READER).to_json()
    assert page["scholar"]["id"] == mine and page["profile"] is not None
    assert page["records_at_least"] >= 6


def test_demo_says_what_it_does_and_its_day_is_the_digest_s(tmp_path: Path) -> None:
    """The demo reports its own progress; `digest --since 1d` right after it is not empty."""
    from click.testing import CliRunner

    from lightnews.cli import cli

    db = str(tmp_path / "demo.db")
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0"})
    built = runner.invoke(cli, ["--db", db, "demo"])
    assert built.exit_code == 0, built.output
    assert "Demo library ready" in built.stderr and "Encoding tokens" not in built.output
    # It ends saying where to look next: the web UI's address and commands on this library.
    assert "http://127.0.0.1:8080/" in built.stdout
    shown = [
        line.split("#")[0].split()
        for line in built.stdout.splitlines()
        if line.strip().startswith("lightnews --db")
    ]
    assert {"serve", "feed", "search", "show"} <= {words[3] for words in shown}
    for words in shown[1:]:  # each reads this very library: the feed is not empty
        done = runner.invoke(cli, words[1:])
        assert done.exit_code == 0 and "empty" not in done.stdout, (words, done.output)
    clock = runner.invoke(cli, ["--db", db, "settings", "--json"])
    assert "2025-11-28T11:17:44Z" in clock.stdout  # an hour after the snapshot's newest item
    digest = runner.invoke(cli, ["--db", db, "digest", "--since", "1d", "--dry-run"])
    assert digest.exit_code == 0 and "Nothing new" not in digest.stdout
    assert "# Lightnews digest since 2025-11-27 11:17 UTC" in digest.stdout
    assert "How Stable Are LLM Leaderboards?" in digest.stdout
