"""``resolve`` and ingestion find the same links: one linker for every path."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from conftest import RecordedServer, Reply, hf_corpus
from lightnews.cli import cli
from lightnews.ingest.replay import ingest_bytes
from lightnews.ingest.resolve import resolve_bytes, sniff_kind
from lightnews.settings import Settings
from lightnews.store import CommonStore, Store, open_store

SEED_PAGES = [
    ("bluesky/getAuthorFeed.mkirchhof.json", "bluesky"),
    ("bluesky/getProfile.mkirchhof.json", "bluesky"),
    ("blog/apple-ml-research.rss.xml", "feed"),
    ("notes/iclr2025-notes.html", "notes"),
]


def _library(store: Store, shared: Path, data: Path, settings: Settings) -> None:
    """The 11k real papers of the Hugging Face corpus and the papers the seed pages name."""
    store.save_papers(hf_corpus(shared), "2026-01-01T00:00:00Z")
    for name in ("iclr2025-lab-papers.xml", "iclr2025-noted-papers.xml"):
        body = (data / "arxiv" / name).read_bytes()
        assert ingest_bytes(store, "arxiv-api", f"test:{name}", body, settings).ok


def _ingested(store: CommonStore, source_id: int) -> set[str]:
    rows = store.db.execute(
        "SELECT DISTINCT p.arxiv_id FROM mentions m JOIN papers p ON p.id = m.paper_id "
        "JOIN items i ON i.id = m.item_id WHERE i.source_id = ?",
        (source_id,),
    )
    return {r[0] for r in rows}


@pytest.mark.shared
def test_resolve_and_ingestion_agree_on_every_seed_page(
    store: CommonStore, settings: Settings, shared: Path, data: Path, tmp_path: Path
) -> None:
    _library(store, shared, data, settings)
    pages = sorted(p.relative_to(shared / "seed-pages") for p in (shared / "seed-pages").rglob("*"))
    assert {str(p) for p in pages if p.suffix} == {name for name, _ in SEED_PAGES}
    resolved: dict[str, set[str]] = {}
    for name, kind in SEED_PAGES:
        body = (shared / "seed-pages" / name).read_bytes()
        assert sniff_kind(body) == kind, name
        resolved[name] = {m.arxiv_id for m in resolve_bytes(store, body, settings).mentions}
    # The command gives the same answer as the function (a second connection to the library).
    db = str(getattr(store, "url", None) or tmp_path / "lightnews.db")  # PostgreSQL: its URL
    store.close()
    for name, _ in SEED_PAGES:
        result = CliRunner().invoke(
            cli,
            ["--db", db, "resolve", "--file", str(shared / "seed-pages" / name), "--json"],
            env={"LIGHTNEWS_RESOLVE_ONLINE": "0"},
            catch_exceptions=False,
        )
        assert result.exit_code in (0, 1), result.output
        assert {r["arxiv_id"] for r in json.loads(result.stdout)} == resolved[name], name
    reopened = open_store(db)
    assert isinstance(reopened, CommonStore)  # either backend
    try:
        for name, kind in SEED_PAGES:
            body = (shared / "seed-pages" / name).read_bytes()
            report = ingest_bytes(reopened, kind, f"https://seed.example/{name}", body, settings)
            assert report.ok, report.error
            assert _ingested(reopened, report.source_id) == resolved[name], name
    finally:
        reopened.close()
    # Not an empty agreement: the pages' papers are found, by id, title and reference.
    assert {"2505.20295", "2510.02375"} <= resolved["bluesky/getAuthorFeed.mkirchhof.json"]
    assert {"2410.02073", "2410.01920"} <= resolved["blog/apple-ml-research.rss.xml"]
    assert {"2408.03314", "2410.07348"} <= resolved["notes/iclr2025-notes.html"]
    # Recall >= 0.85 of the papers each page names, nothing wrong (issue 30): the spun
    # titles and misspelt headings are linked by meaning within the page's period.
    from lightnews.link.meaning import load_meaning
    from lightnews.sources.arxiv_api import parse_api_feed

    for page, truth_file, least in (
        ("blog/apple-ml-research.rss.xml", "iclr2025-lab-papers.xml", 12),
        ("notes/iclr2025-notes.html", "iclr2025-noted-papers.xml", 11),
    ):
        truth = {p.arxiv_id for p in parse_api_feed((data / "arxiv" / truth_file).read_bytes())[0]}
        assert resolved[page] <= truth, page
        if load_meaning() is not None:
            assert len(resolved[page]) >= least, (page, sorted(truth - resolved[page]))


def test_surname_short_title_in_plain_text(store: Store, settings: Settings, data: Path) -> None:
    body = (data / "arxiv/iclr2025-noted-papers.xml").read_bytes()
    assert ingest_bytes(store, "arxiv-api", "test:papers", body, settings).ok
    text = (
        b"Notes from Singapore.\n"
        b"Snell: Optimality of Scaling LLM Test-Time Compute\n"
        b"- Noukhovich: asynchronous reinforcement learning for language models\n"
    )
    found = resolve_bytes(store, text, settings, kind="text")
    assert {m.arxiv_id for m in found.mentions} == {"2408.03314", "2410.18252"}
    assert {m.method for m in found.mentions} <= {"surname-title", "fuzzy-title"}
    assert all(0.8 <= m.confidence < 1.0 for m in found.mentions)


def test_resolve_looks_unstored_references_up_online_in_one_batch(
    store: Store, settings: Settings, data: Path, server: RecordedServer
) -> None:
    api = server.route(
        "/api/query", Reply(200, (data / "arxiv/iclr2025-noted-papers.xml").read_bytes())
    )
    online = settings.with_overrides(arxiv_api_url=api)
    text = (
        b"ICLR2025 Snell: Optimality of Scaling LLM Test-Time Compute "
        b"ICLR2025 Jin: MOE++ zero computation experts"
    )
    from lightnews.sources.http import HttpClient

    offline = resolve_bytes(store, text, online, kind="text")
    assert offline.mentions == () and server.hits == []
    with HttpClient(online) as client:
        found = resolve_bytes(store, text, online, kind="text", client=client)
    assert {"2408.03314", "2410.07348"} <= {m.arxiv_id for m in found.mentions}
    (hit,) = server.hits  # both references in one query
    query = hit.query["search_query"][0]
    assert "au:Snell" in query and "au:Jin" in query and " OR " in query
    down = server.route("/api/query", Reply(503, b"down"))
    with HttpClient(settings.with_overrides(arxiv_api_url=down)) as client:
        failed = resolve_bytes(
            store, b"ICLR2025 Nobody: Unheard Of Paper Titles", settings, kind="text", client=client
        )
    assert failed.warnings and "title lookup" in failed.warnings[0]
