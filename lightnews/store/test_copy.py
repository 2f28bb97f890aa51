"""A library moves to PostgreSQL and back with every row and vector intact."""

from __future__ import annotations

import shutil
import sqlite3
from pathlib import Path

import pytest
from click.testing import CliRunner

from lightnews.cli import cli
from lightnews.store.copy import TABLES, checksums, copy_library

pytest.importorskip("psycopg", reason="PostgreSQL tests need the server extra")


def test_demo_library_round_trips_through_postgresql(
    demo_database: Path, pg_url: str, tmp_path: Path
) -> None:
    original = tmp_path / "original.db"
    shutil.copy(demo_database, original)
    with sqlite3.connect(original) as conn:
        papers, vectors = conn.execute(
            "SELECT (SELECT count(*) FROM papers), (SELECT count(*) FROM paper_vectors)"
        ).fetchone()
    assert papers > 10 and vectors > 10

    there = copy_library(str(original), pg_url, keep_clock=True)
    assert there.equal, [t for t in there.tables if not t.equal]
    assert {t.table for t in there.tables} == set(TABLES)
    assert next(t for t in there.tables if t.table == "paper_vectors").copied_rows == vectors
    # The copied vectors come with their HNSW index, built once over all of them
    # (else every search by meaning would read every vector).
    import psycopg

    with psycopg.connect(pg_url) as conn:
        built = conn.execute(
            "SELECT count(*) FROM pg_indexes WHERE indexname LIKE 'paper_vectors_hnsw_%'"
        ).fetchone()
    assert built is not None and built[0] == 1

    back = tmp_path / "back.db"
    home = copy_library(pg_url, str(back), keep_clock=True)
    assert home.equal
    assert checksums(str(back)) == checksums(str(original))
    with sqlite3.connect(back) as conn:  # the rebuilt full-text index answers
        hits = conn.execute(
            "SELECT count(*) FROM papers_fts WHERE papers_fts MATCH 'attention'"
        ).fetchone()[0]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with sqlite3.connect(original) as conn:
        assert (
            hits
            == conn.execute(
                "SELECT count(*) FROM papers_fts WHERE papers_fts MATCH 'attention'"
            ).fetchone()[0]
            > 0
        )


def test_copy_refuses_a_destination_that_holds_a_library(
    demo_database: Path, tmp_path: Path
) -> None:
    runner = CliRunner()
    taken = tmp_path / "taken.db"
    shutil.copy(demo_database, taken)
    result = runner.invoke(cli, ["db", "copy", str(demo_database), str(taken)])
    assert result.exit_code == 2 and "already holds a library" in result.output
    missing, fresh = str(tmp_path / "missing.db"), str(tmp_path / "x.db")
    result = runner.invoke(cli, ["db", "copy", missing, fresh])
    assert result.exit_code == 2 and "no library at" in result.output


def test_cli_copy_reports_every_table(demo_database: Path, pg_url: str) -> None:
    result = CliRunner().invoke(cli, ["db", "copy", str(demo_database), pg_url, "--json"])
    assert result.exit_code == 0, result.output
    assert '"equal": true' in result.output
    assert '"clock_left_out": "2025-11-28T11:17:44Z"' in result.output
    # The copied PostgreSQL library reads the real clock, not the demo's day.
    from lightnews.settings import Settings
    from lightnews.store.postgres import PostgresStore

    with PostgresStore(pg_url, pool_size=1) as store:
        saved = store.saved_settings()
        assert "clock" not in saved
        assert Settings(saved, environ={}).now().year > 2025


def _clock(db: Path) -> str | None:
    with sqlite3.connect(db) as conn:
        row = conn.execute("SELECT value FROM settings WHERE name = 'clock'").fetchone()
    return None if row is None else str(row[0])


def test_copy_leaves_the_demo_clock_behind_unless_kept(demo_database: Path, tmp_path: Path) -> None:
    assert _clock(demo_database) == "2025-11-28T11:17:44Z"
    runner = CliRunner()
    plain = tmp_path / "plain.db"
    result = runner.invoke(cli, ["db", "copy", str(demo_database), str(plain)])
    assert result.exit_code == 0, result.output
    assert "left out the clock setting (2025-11-28T11:17:44Z)" in result.stdout
    assert "--keep-clock keeps it" in result.stdout
    assert "DIFFERENT" not in result.stdout  # settings compared without the clock
    assert _clock(plain) is None
    with sqlite3.connect(plain) as conn:  # every other setting came along
        others = dict(conn.execute("SELECT name, value FROM settings"))
    with sqlite3.connect(demo_database) as conn:
        assert others == {
            n: v for n, v in conn.execute("SELECT name, value FROM settings") if n != "clock"
        }

    kept = tmp_path / "kept.db"
    result = runner.invoke(cli, ["db", "copy", str(demo_database), str(kept), "--keep-clock"])
    assert result.exit_code == 0, result.output
    assert "left out" not in result.stdout
    assert _clock(kept) == "2025-11-28T11:17:44Z"
