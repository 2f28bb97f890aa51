"""Missing papers noticed: a listing cut short or served stale marks its source incomplete.

Real arXiv API and OAI-PMH responses (``../shared/fixtures/arxiv``), replayed by a
local HTTP server through a real refresh; the variations are made by hand from
them (a feed date moved by a day, a total that promises more than arrives).
"""

from __future__ import annotations

import json
from pathlib import Path

from click.testing import CliRunner

from conftest import RecordedServer, Reply
from lightnews.cli import cli
from lightnews.ingest.fetch import refresh_source
from lightnews.settings import Settings
from lightnews.sources.http import HttpClient
from lightnews.store import SQLiteStore, Store

RECORDED = "arxiv/api-2026/q_testing_s0_m10_bc5a6c384fe9.json"


def listing(shared: Path, *, day: str, total: int) -> bytes:
    """The recorded listing (10 entries) as served on ``day``, reporting ``total`` results."""
    body: bytes = json.loads((shared / RECORDED).read_text())["body"].encode("latin-1")
    body = body.replace(
        b"<updated>2026-04-12T22:09:27Z</updated>",
        f"<updated>{day}T22:09:27Z</updated>".encode(),
        1,
    )
    return body.replace(
        b"<opensearch:totalResults>214881<", f"<opensearch:totalResults>{total}<".encode()
    )


def run(store: Store, server: RecordedServer, settings: Settings, *bodies: bytes) -> list[str]:
    url = server.route("/api/query", *(Reply(200, b) for b in bodies))
    settings = settings.with_overrides(arxiv_api_url=url, arxiv_page_size=20, arxiv_max_results=50)
    row, _ = store.add_source("arxiv-api", "cat:cs.SE", now="2026-04-14T00:00:00Z")
    errors = []
    with HttpClient(settings) as client:
        for _ in bodies:
            report = refresh_source(store, store.get_source(row.id), client, settings)
            errors.append(report.error or "")
    return errors


def test_replayed_stale_batch_marks_the_source_incomplete(
    store: Store, server: RecordedServer, settings: Settings, shared: Path
) -> None:
    tuesday = listing(shared, day="2026-04-14", total=10)
    wednesday = listing(shared, day="2026-04-15", total=10)  # the same batch, a day later
    first, second = run(store, server, settings, tuesday, wednesday)
    assert first == ""
    assert "served cat:cs.SE on 2026-04-15 exactly as on 2026-04-14" in second
    [source] = store.list_sources()
    assert source.incomplete and source.to_json()["incomplete"] == source.incomplete
    assert source.last_error and "stale" in source.last_error


def test_weekend_repeat_is_not_stale(
    store: Store, server: RecordedServer, settings: Settings, shared: Path
) -> None:
    friday = listing(shared, day="2026-04-17", total=10)
    saturday = listing(shared, day="2026-04-18", total=10)
    assert run(store, server, settings, friday, saturday) == ["", ""]
    assert store.list_sources()[0].incomplete is None


def test_short_listing_is_incomplete_and_read_again(
    store: Store, server: RecordedServer, settings: Settings, shared: Path
) -> None:
    # arXiv says 214,881 results; a page of 20 was asked for and 10 came back.
    short = listing(shared, day="2026-04-14", total=214881)
    whole = listing(shared, day="2026-04-14", total=10)
    first, second = run(store, server, settings, short, whole)
    assert "reported 214881 results for cat:cs.SE but its listing stopped after 10" in first
    assert "results 11-50 are read again" in first
    assert second == ""  # read again from the top: whole this time
    source = store.list_sources()[0]
    assert source.incomplete is None and source.state.cursor  # the cursor moved only now


def test_sources_list_exits_3_while_incomplete(
    tmp_path: Path, server: RecordedServer, settings: Settings, shared: Path
) -> None:
    db = tmp_path / "lightnews.db"
    with SQLiteStore(db) as store:
        run(store, server, settings, listing(shared, day="2026-04-14", total=214881))
    result = CliRunner().invoke(cli, ["--db", str(db), "sources", "list", "--json"])
    assert result.exit_code == 3
    assert "stopped after 10" in json.loads(result.stdout)[0]["incomplete"]


def test_oai_list_shorter_than_its_size_is_incomplete(
    store: Store, server: RecordedServer, settings: Settings, shared: Path
) -> None:
    # The real first page of a list of 58,011 records, then the end of the list (an empty
    # token) after it: 6 records arrived of 58,011.
    first = (shared / "arxiv/oai-pmh/ListRecordsResponse.xml").read_bytes()
    last = first.replace(
        b'completeListSize="58011">726959|1001</resumptionToken>',
        b'completeListSize="58011"></resumptionToken>',
    )
    url = server.route("/oai", Reply(200, first), Reply(200, last))
    settings = settings.with_overrides(arxiv_oai_url=url)
    row, _ = store.add_source("arxiv-oai", "cs", now="2026-04-14T00:00:00Z")
    with HttpClient(settings) as client:
        report = refresh_source(store, store.get_source(row.id), client, settings)
    assert report.error and "holds 58011 records but" in report.error
    source = store.get_source(row.id)
    assert source.incomplete and source.state.cursor is None  # harvested again from the start
