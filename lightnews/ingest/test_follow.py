"""A follow says what happens next: when the scholar's sources are first fetched.

With a worker heard from (a heartbeat in the queue's table, PostgreSQL), the
fetch comes at the first worker tick after the source is due; without one, at
the next ``lightnews refresh``. Once the source was attempted, nothing is said.
"""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
from click.testing import CliRunner

from lightnews.cli import cli
from lightnews.ingest.follow import first_fetch, follow_scholar
from lightnews.settings import Settings
from lightnews.store import Store
from lightnews.store.readers import LOCAL_READER

NOW = datetime(2026, 12, 6, 12, 0, 15, tzinfo=UTC)
AT = "2026-12-06T12:00:15Z"


def _heartbeat(store: Store) -> None:
    """A worker's heartbeat, as ``lightnews worker`` writes it into the queue's table."""
    store.db.execute("INSERT INTO procrastinate_workers DEFAULT VALUES")  # type: ignore[attr-defined]


def test_first_fetch_counts_to_the_workers_tick_or_says_refresh(store: Store) -> None:
    settings = Settings(environ={}).with_overrides(worker_tick=60)
    scholar = follow_scholar(store, LOCAL_READER, AT, handle="ada.bsky.social")
    waiting = first_fetch(store, scholar, settings, NOW)
    assert waiting is not None and waiting.sources == 1
    # No worker runs (SQLite never has one; this PostgreSQL library has none yet).
    assert not waiting.by_worker and waiting.seconds == 0
    assert waiting.text == (
        "First fetch now, on the next `lightnews refresh` (no worker is running)"
    )
    if store.workers_heard(30.0) == 0 and hasattr(store, "url"):  # PostgreSQL: a worker beats
        _heartbeat(store)
        assert store.workers_heard(30.0) == 1
        waiting = first_fetch(store, scholar, settings, NOW)
        # Due now (12:00:15); the worker looks on the minute: 45 s.
        assert waiting is not None and waiting.by_worker and waiting.seconds == 45
        assert waiting.text == "First fetch in about 45 s"
        assert waiting.to_json()["seconds"] == 45
    # A first try that failed backs off until 12:05:00: the fetch waits for it (a worker
    # looks then, on the minute).
    (source,) = store.scholar_sources(scholar)
    store.record_attempt(source.id, AT)
    store.record_failure(source.id, "timed out", AT, "2026-12-06T12:05:00Z")
    later = first_fetch(store, scholar, settings, NOW)
    assert later is not None and later.seconds == 285
    assert later.text in (
        "First fetch in about 5 min",
        "First fetch due in about 5 min, on the next `lightnews refresh` after that "
        "(no worker is running)",
    )
    store.record_success(source.id, AT, "2026-12-06T13:00:00Z")
    assert first_fetch(store, scholar, settings, NOW) is None  # fetched: nothing to say
    # Her arXiv name added to her: its new source waits for its first fetch.
    follow_scholar(store, LOCAL_READER, AT, arxiv_author="Ada Lovelace", scholar_id=scholar)
    pending = first_fetch(store, scholar, settings, NOW)
    assert pending is not None and pending.sources == 1


def test_follow_command_says_when_the_first_fetch_comes(store: Store) -> None:
    location = getattr(store, "url", None) or str(store.path)
    runner = CliRunner()
    result = runner.invoke(cli, ["--db", location, "follow", "@ada.bsky.social"])
    assert result.exit_code == 0, result.output
    assert "following #" in result.stdout and "@ada.bsky.social" in result.stdout
    assert "First fetch now, on the next `lightnews refresh` (no worker is running)" in (
        result.stdout
    )
    result = runner.invoke(cli, ["--db", location, "follow", "@ada.bsky.social", "--json"])
    data = orjson.loads(result.stdout)
    assert data["first_fetch"]["seconds"] == 0 and data["first_fetch"]["by_worker"] is False
    # Once the source was fetched, a follow says nothing of a first fetch.
    scholar = store.scholar_by_identity("bluesky-handle", "ada.bsky.social")
    assert scholar is not None
    (source,) = store.scholar_sources(scholar)
    store.record_success(source.id, AT, "2026-12-06T13:00:15Z")
    result = runner.invoke(cli, ["--db", location, "follow", "@ada.bsky.social"])
    assert result.exit_code == 0 and "First fetch" not in result.stdout
    data = orjson.loads(
        runner.invoke(cli, ["--db", location, "follow", "@ada.bsky.social", "--json"]).stdout
    )
    assert data["first_fetch"] is None
