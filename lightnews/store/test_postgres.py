"""The PostgreSQL schema on a real server: migrations, full text, vectors, triggers."""

from __future__ import annotations

import pytest

from lightnews.store.postgres import is_postgres_url, migrate, migrations, redact

psycopg = pytest.importorskip("psycopg", reason="PostgreSQL tests need the server extra")


def test_migrations_apply_once_and_record_their_version(pg_url: str) -> None:
    with psycopg.connect(pg_url, autocommit=True) as conn:
        assert migrate(conn) == []  # the fixture's template is already migrated
        versions = [r[0] for r in conn.execute("SELECT version FROM schema_migrations")]
        assert versions == [number for number, _, _ in migrations()]
        tables = {r[0] for r in conn.execute(
            "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")}  # fmt: skip
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
    [("postgresql://u@h/db", True), ("postgres://h/db", True), ("lightnews.db", False),
     ("/tmp/postgresql.db", False)],
)  # fmt: skip
def test_urls_choose_the_backend(value: str, expected: bool) -> None:
    assert is_postgres_url(value) is expected


def test_passwords_never_shown() -> None:
    assert redact("postgresql://me:secret@db.example/lib") == "postgresql://me:***@db.example/lib"
