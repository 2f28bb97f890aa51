"""Benchmark: kill -9 at random points of an ingest; the library must be whole and complete.

The suite for issue 14 (item 10): a crash loses at most the transaction in
flight, never leaves the database damaged, and running the same commands
again ends exactly where a run that was never interrupted ends.

The ingest is a sequence of ``lightnews`` commands, each in its own process
group as a user or cron runs them: a snapshot import of ``--records``
records (bulk transactions), then two real lab blogs' feeds (linked by title
against the library: two write transactions per page, linking between
them). A clean run gives the reference. Each of ``--trials`` trials starts
the sequence on a fresh database, sends SIGKILL to the running command's
whole process group at a random moment (each command in turn, at a uniform
moment of the time it took in the clean run, seeded), checks the database as the crash left it
(``integrity_check``, the full-text indexes' own ``integrity-check``,
foreign keys), runs the whole sequence again, and compares the result with
the reference table by table (content columns: no timestamps or row ids).
Semantic search is off (``LIGHTNEWS_SEMANTIC=off``) unless ``--embed``.

    .venv/bin/python bench/crash_trials.py --trials 6
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import random
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loopback import ROOT, env_for, lightnews
from _measure import OUT, machine

LAB_BLOGS = ROOT.parent / "shared" / "fixtures" / "feeds" / "lab-blogs"
FEEDS = ("feed_anthropic_news.xml", "feed_xai_news.xml")

#: What must be equal after a crash and a re-run: content columns, no times or row ids.
TABLES = {
    "papers": "SELECT arxiv_id, title, abstract, authors, categories, published, versions, "
    "latest_version, doi, withdrawn, content_hash FROM papers",
    "authorships": "SELECT p.arxiv_id, a.position, a.name, a.name_key, a.affiliations "
    "FROM authorships a JOIN papers p ON p.id = a.paper_id",
    "items": "SELECT s.address, i.key, i.kind, i.title, i.url, i.text, i.content_hash, "
    "(SELECT arxiv_id FROM papers WHERE id = i.paper_id) FROM items i "
    "JOIN sources s ON s.id = i.source_id",
    "mentions": "SELECT s.address, i.key, p.arxiv_id, m.method, round(m.confidence, 6) "
    "FROM mentions m JOIN items i ON i.id = m.item_id JOIN papers p ON p.id = m.paper_id "
    "JOIN sources s ON s.id = i.source_id",
    "paper_links": "SELECT p.arxiv_id, l.kind, l.url FROM paper_links l "
    "JOIN papers p ON p.id = l.paper_id",
    "sources": "SELECT kind, address, title, last_error, error_count, enabled FROM sources",
    "paper_vectors": "SELECT p.arxiv_id, v.model, hex(v.vector) FROM paper_vectors v "
    "JOIN papers p ON p.id = v.paper_id",
}


def steps(snapshot: Path) -> list[tuple[str, list[str]]]:
    found = [("import", ["import", "arxiv-snapshot", str(snapshot)])]
    for name in FEEDS:
        found.append((name, ["ingest", "--kind", "feed", "--from-file", str(LAB_BLOGS / name)]))
    return found


def run_steps(
    code: Path, db: Path, snapshot: Path, env: dict[str, str], kill_at: float | None = None
) -> dict[str, Any]:
    """Run the sequence; with ``kill_at`` (seconds), SIGKILL whatever runs at that moment."""
    began = time.monotonic()
    durations: dict[str, float] = {}
    for name, args in steps(snapshot):
        step_began = time.monotonic()
        process = subprocess.Popen(
            lightnews(code, db, *args),
            env=env,
            cwd=code,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        while process.poll() is None:
            if kill_at is not None and time.monotonic() - began >= kill_at:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
                return {"killed": name, "at": round(time.monotonic() - began, 2)}
            time.sleep(0.01)
        if process.returncode not in (0, 3):
            error = process.stderr.read().decode() if process.stderr else ""
            raise SystemExit(f"{name} failed ({process.returncode}): {error[-500:]}")
        durations[name] = time.monotonic() - step_began
    return {"killed": None, "seconds": round(time.monotonic() - began, 2), "steps": durations}


def checks(db: Path) -> dict[str, Any]:
    """The database as it is: SQLite's and FTS5's own integrity checks, foreign keys."""
    with sqlite3.connect(db) as conn:
        result: dict[str, Any] = {
            "integrity": conn.execute("PRAGMA integrity_check").fetchone()[0],
            "foreign_keys": len(conn.execute("PRAGMA foreign_key_check").fetchall()),
        }
        for table in ("papers_fts", "items_fts"):
            try:
                conn.execute(f"INSERT INTO {table}({table}) VALUES('integrity-check')")
                result[table] = "ok"
            except sqlite3.DatabaseError as error:
                result[table] = str(error)
    return result


def fingerprint(db: Path) -> dict[str, tuple[int, str]]:
    """Per table: row count and a hash of its sorted content rows."""
    found = {}
    with sqlite3.connect(db) as conn:
        for name, sql in TABLES.items():
            rows = sorted(repr(tuple(r)) for r in conn.execute(sql))
            digest = hashlib.blake2b("\n".join(rows).encode(), digest_size=10).hexdigest()
            found[name] = (len(rows), digest)
    return found


def fresh(db: Path) -> Path:
    for suffix in ("", "-wal", "-shm", ".static.faiss", ".static.json"):
        Path(f"{db}{suffix}").unlink(missing_ok=True)
    return db


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--trials", type=int, default=6)
    parser.add_argument("--records", type=int, default=20_000)
    parser.add_argument("--seed", type=int, default=11)
    parser.add_argument("--embed", action="store_true", help="embed as ingest does by default")
    parser.add_argument("--code", type=Path, default=ROOT, help="checkout to run")
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if not all((LAB_BLOGS / name).exists() for name in FEEDS):
        print(f"SKIP: {LAB_BLOGS} is not present (../shared/fixtures)")
        return
    from snapshot_import import ensure_snapshot

    code = args.code.resolve()
    snapshot = ensure_snapshot(args.records, seed=2)
    env = env_for(code) if args.embed else env_for(code, LIGHTNEWS_SEMANTIC="off")
    reference_db = fresh(OUT / "crash-reference.db")
    clean = run_steps(code, reference_db, snapshot, env)
    reference = fingerprint(reference_db)
    print(
        f"clean run: {clean['seconds']} s; "
        + ", ".join(f"{name} {count:,}" for name, (count, _) in reference.items()),
        flush=True,
    )
    rng = random.Random(args.seed)
    trials = []
    names = list(clean["steps"])
    for n in range(args.trials):
        # Each step in turn, at a uniform moment of it (as long as it took in the clean run).
        name = names[n % len(names)]
        start = sum(clean["steps"][k] for k in names[: names.index(name)])
        kill_at = start + rng.uniform(0.02, 0.98) * clean["steps"][name]
        db = fresh(OUT / "crash-trial.db")
        killed = run_steps(code, db, snapshot, env, kill_at=kill_at)
        after_crash = checks(db)
        run_steps(code, db, snapshot, env)
        final = fingerprint(db)
        differing = [name for name in TABLES if final[name] != reference[name]]
        trial = {
            **killed,
            "after_crash": after_crash,
            "after_rerun": checks(db),
            "differing_tables": differing,
        }
        trials.append(trial)
        print(json.dumps(trial), flush=True)
    whole = sum(
        1
        for t in trials
        if t["after_crash"]["integrity"] == "ok"
        and t["after_crash"]["papers_fts"] == "ok"
        and t["after_crash"]["items_fts"] == "ok"
        and not t["after_crash"]["foreign_keys"]
    )
    equal = sum(1 for t in trials if not t["differing_tables"])
    results = {
        "machine": machine(),
        "code": str(code),
        "records": args.records,
        "embed": args.embed,
        "clean": clean,
        "reference": {k: v[0] for k, v in reference.items()},
        "trials": trials,
        "whole_after_crash": whole,
        "equal_after_rerun": equal,
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    killed_in: dict[str, int] = {}
    for trial in trials:
        key = trial["killed"] or "(finished)"
        killed_in[key] = killed_in.get(key, 0) + 1
    print(
        f"\n{len(trials)} trials (killed in: {killed_in}): database whole after the crash "
        f"in {whole}, equal to the clean run after running again in {equal}"
    )


if __name__ == "__main__":
    main()
