"""The PostgreSQL schema on a real server: migrations, full text, vectors, triggers."""

from __future__ import annotations

import re
from contextlib import nullcontext
from pathlib import Path

import pytest

from lightnews.store.postgres import is_postgres_url, migrate, migrations, redact
from lightnews.store.sqlite import SQLiteStore

psycopg = pytest.importorskip("psycopg", reason="PostgreSQL tests need the server extra")


def test_migrations_apply_once_and_record_their_version(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert migrate(conn) == []  # the fixture's template is already migrated
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
        assert versions == [number for number, _, _ in migrations()]
        tables = {
            r[0]
            for r in conn.execute("SELECT tablename FROM pg_tables WHERE schemaname = 'public'")
        }
        assert {"papers", "items", "mentions", "paper_vectors", "embed_queue"} <= tables


def test_full_text_weighs_titles_and_new_papers_queue_for_embedding(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        rows = [
            ("2501.00001", "Sparse attention for long documents", "We study memory."),
            ("2501.00002", "Memory layouts", "Sparse attention appears in passing."),
            ("2501.00003", "", ""),  # a stub: nothing to embed
        ]
        conn.cursor().executemany(
            "INSERT INTO papers (arxiv_id, title, abstract, first_seen, modified) "
            "VALUES (%s, %s, %s, 'now', 'now')",
            rows,
        )
        found = conn.execute(
            "SELECT arxiv_id FROM papers, websearch_to_tsquery('english', %s) q "
            "WHERE search @@ q ORDER BY ts_rank(search, q) DESC",
            ("sparse attention",),
        ).fetchall()
        assert [r[0] for r in found] == ["2501.00001", "2501.00002"]
        queued = conn.execute("SELECT count(*) FROM embed_queue").fetchone()
        assert queued is not None and queued[0] == 2
        paper = conn.execute("SELECT id FROM papers WHERE arxiv_id = '2501.00001'").fetchone()
        assert paper is not None
        conn.execute("DELETE FROM embed_queue")
        vector = "[" + ",".join(["0.05"] * 384) + "]"
        conn.execute(
            "INSERT INTO paper_vectors (paper_id, model, vector) VALUES (%s, 'static', %s)",
            (paper[0], vector),
        )
        nearest = conn.execute(
            "SELECT paper_id, 1 - (vector::halfvec(384) <=> %s::halfvec(384)) FROM paper_vectors "
            "WHERE model = 'static' ORDER BY vector::halfvec(384) <=> %s::halfvec(384) LIMIT 1",
            (vector, vector),
        ).fetchone()
        assert nearest is not None and nearest[0] == paper[0] and nearest[1] > 0.99
        # A changed abstract drops the stale vector and queues the paper again.
        conn.execute("UPDATE papers SET abstract = 'new words' WHERE id = %s", (paper[0],))
        assert conn.execute("SELECT count(*) FROM paper_vectors").fetchone() == (0,)
        assert conn.execute("SELECT paper_id FROM embed_queue").fetchall() == [(paper[0],)]
        conn.execute("UPDATE papers SET modified = 'later' WHERE id = %s", (paper[0],))
        assert conn.execute("SELECT count(*) FROM embed_queue").fetchone() == (1,)


@pytest.mark.parametrize(
    "value, expected",
    [
        ("postgresql://u@h/db", True),
        ("postgres://h/db", True),
        ("lightnews.db", False),
        ("/tmp/postgresql.db", False),
    ],
)
def test_urls_choose_the_backend(value: str, expected: bool) -> None:
    assert is_postgres_url(value) is expected


def test_passwords_never_shown() -> None:
    assert redact("postgresql://me:secret@db.example/lib") == "postgresql://me:***@db.example/lib"


#: Tables only one engine has: SQLite's full-text index (FTS5 tables and their shadow
#: tables), PostgreSQL's record of migrations and the workers' tables (host slots; the
#: job queue's ``procrastinate_*`` and ``queue_schema``).
_ENGINE_ONLY = re.compile(
    r"^(sqlite_|papers_fts|items_fts|papers_vocab|schema_migrations$"
    r"|host_slots$|queue_schema$|procrastinate_)"
)
#: Columns PostgreSQL derives itself (the full text SQLite keeps in its FTS5 tables).
_DERIVED = {("papers", "search"), ("items", "search")}
#: Each engine's column types by what they hold.
_KINDS = {
    "integer": "integer",
    "bigint": "integer",
    "smallint": "integer",
    "text": "text",
    "real": "real",
    "double precision": "real",
    "blob": "vector",
    "user-defined": "vector",
}


def _sqlite_schema(path: Path) -> dict[str, dict[str, tuple[str, bool]]]:
    with SQLiteStore(path) as store:
        rows = store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
        tables = [r[0] for r in rows]
        return {
            table: {
                r[1]: (_KINDS[r[2].lower()], bool(r[3] or r[5]))
                for r in store.db.execute(f"PRAGMA table_info({table})")
            }
            for table in tables
            if not _ENGINE_ONLY.match(table)
        }


def _postgres_schema(url: str) -> dict[str, dict[str, tuple[str, bool]]]:
    found: dict[str, dict[str, tuple[str, bool]]] = {}
    with psycopg.connect(url, autocommit=True) as conn:
        for table, column, kind, nullable in conn.execute(
            "SELECT table_name, column_name, data_type, is_nullable FROM "
            "information_schema.columns WHERE table_schema = 'public'"
        ):
            if not _ENGINE_ONLY.match(table) and (table, column) not in _DERIVED:
                found.setdefault(table, {})[column] = (_KINDS[kind.lower()], nullable == "NO")
    return found


def test_both_engines_migrations_make_the_same_tables_and_columns(
    pg_url: str, tmp_path: Path
) -> None:
    """The PostgreSQL migrations repeat SQLite's by hand (another spelling of the same
    types): every table, column, kind of value and NOT NULL must agree, so that a
    library moves between the engines row for row (``lightnews db copy``)."""
    sqlite_schema = _sqlite_schema(tmp_path / "l.db")
    postgres_schema = _postgres_schema(pg_url)
    assert sorted(sqlite_schema) == sorted(postgres_schema)
    for table, columns in sqlite_schema.items():
        assert columns == postgres_schema[table], table


def test_a_feeds_reads_are_prepared_on_the_server_and_rank_alike(pg_url: str) -> None:
    """A feed's statements are planned once per connection (``repeated_reads``), the feed
    is the same, and reads outside the block are still bound on the client."""
    from lightnews.demo import build_demo
    from lightnews.rank import rank_stories
    from lightnews.settings import Settings
    from lightnews.store import LOCAL_READER
    from lightnews.store.postgres import PostgresStore

    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with PostgresStore(pg_url, pool_size=2) as store:
        build_demo(store, settings)
        store.mark_story(LOCAL_READER, "2511.18342", "2026-01-01T00:00:00Z", saved=True)

        def feed() -> list[tuple[str, object]]:
            stories = rank_stories(store, LOCAL_READER, limit=50, settings=settings)
            return [(s.key, s.why) for s in stories]

        def prepared() -> list[str]:
            rows = store.db.execute("SELECT statement FROM pg_prepared_statements").fetchall()
            return [str(r[0]) for r in rows]

        first = feed()
        assert len(first) > 20
        assert prepared() == []  # psycopg prepares a statement at its sixth use
        for _ in range(6):
            assert feed() == first
        statements = prepared()
        assert any("FROM story_state" in s for s in statements), statements
        assert all(re.match(r"\s*(SELECT|WITH)\b", s, re.I) for s in statements)
        assert not store.db.prepared  # the block has ended
        assert store.db.execute("SELECT ? IS NULL", (None,)).fetchone()[0] is True


def test_a_connection_found_broken_renews_every_threads(pg_url: str) -> None:
    """A restart learned once is learned by every thread: once the server has ended the
    store's connections, the first statement to find its own broken fails (a page's
    503), and every other thread's next statement runs on a new connection, except in
    a block that set its connection up (a time budget): that one fails with it."""
    import threading

    from lightnews.store.postgres import PostgresStore

    threads = 4
    with PostgresStore(pg_url, pool_size=threads + 2) as store:
        holding = threading.Barrier(threads + 1)
        turns = [threading.Event() for _ in range(threads)]
        said: dict[int, object] = {}

        def reader(n: int) -> None:
            store.db.execute("SELECT 1").fetchone()  # a connection of its own, kept
            with store.time_budget(30) if n == 3 else nullcontext():
                holding.wait()
                turns[n].wait()
                try:
                    said[n] = store.db.execute("SELECT 1").fetchone()[0]
                except Exception as error:
                    said[n] = error

        running = [threading.Thread(target=reader, args=(n,)) for n in range(threads)]
        for thread in running:
            thread.start()
        holding.wait()
        with psycopg.connect(pg_url, autocommit=True) as admin:  # as a restart would
            ended = admin.execute(
                "SELECT count(*) FILTER (WHERE pg_terminate_backend(pid, 5000)) "
                "FROM pg_stat_activity WHERE datname = current_database() "
                "AND pid <> pg_backend_pid()"
            ).fetchone()
        assert ended is not None and ended[0] >= threads
        for n, thread in enumerate(running):
            turns[n].set()
            thread.join(30)
        assert isinstance(said[0], psycopg.OperationalError), said
        assert said[1] == 1 and said[2] == 1, said
        assert isinstance(said[3], psycopg.OperationalError), said  # not run without its budget
        assert store.db.execute("SELECT 1").fetchone()[0] == 1
