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

    there = copy_library(str(original), pg_url)
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
    home = copy_library(pg_url, str(back))
    assert home.equal
    assert checksums(str(back)) == checksums(str(original))
    with sqlite3.connect(back) as conn:  # the rebuilt full-text index answers
        hits = conn.execute(
            "SELECT count(*) FROM papers_fts WHERE papers_fts MATCH 'attention'"
        ).fetchone()[0]
        assert conn.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    with sqlite3.connect(original) as conn:
        assert hits == conn.execute(
            "SELECT count(*) FROM papers_fts WHERE papers_fts MATCH 'attention'"
        ).fetchone()[0] > 0


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
