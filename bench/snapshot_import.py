"""Benchmark: arXiv snapshot import speed and memory, against a same-run ceiling.

The target (issue "Foundation"): at least 20,000 records/s end to end on the
2-core machine (all of arXiv, about 2.7M records, in under 3 minutes) with
peak memory under 500 MB whatever the file size. This script generates (or
reuses) a realistic snapshot of N records (``bench/make_snapshot.py``) and
measures, each in a fresh process:

* ``ceiling``: read the file and ``orjson.loads`` every line; nothing any
  import can beat in one process, so the other rates are also given as a
  ratio to it (the machine is shared and noisy: ratios travel, seconds don't);
* ``parse``: turn every line into :class:`~lightnews.model.Paper` objects
  without storing them (``iter_snapshot``);
* ``import``: :func:`lightnews.bulk.import_snapshot` into a fresh SQLite file;
* ``reimport``: the same file again into the same database (nothing changes:
  the idempotent path).

The ceiling is measured before and after every phase; a phase's ratio is
to the mean of the two ceilings around it, and the table also says how many
CPUs other programs kept busy meanwhile (time the hypervisor takes from this
virtual machine is not seen there: compare runs by their ratios). Peak
memory is the high-water mark of the phase's process plus that of its
largest worker process times the number of workers (the import picks one
worker into an empty library, two for the re-import), an upper bound, and
the sampled peak of the tree (PSS).

    .venv/bin/python bench/snapshot_import.py --records 200000
    .venv/bin/python bench/snapshot_import.py --records 1000000 --json /tmp/x.json
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

sys.path.insert(0, str(Path(__file__).resolve().parent))

from _measure import OUT, machine, mb, run_phase, self_report
from make_snapshot import fixtures_missing, generate

SCRIPT = Path(__file__).resolve()


def snapshot_path(records: int, seed: int) -> Path:
    return OUT / f"snapshot-{records}-seed{seed}.jsonl"


def ensure_snapshot(records: int, seed: int) -> Path:
    """The cached snapshot of ``records`` lines, generated when missing."""
    path = snapshot_path(records, seed)
    if not path.exists():
        print(f"generating {path} ...", file=sys.stderr, flush=True)
        stats = generate(records, path, seed)
        print(f"generated: {json.dumps(stats)}", file=sys.stderr, flush=True)
    return path


# -- phases (each runs in its own process) ------------------------------------


def phase_ceiling(path: Path) -> dict[str, Any]:
    started = time.perf_counter()
    lines = 0
    with path.open("rb") as stream:
        for line in stream:
            lines += 1
            try:  # noqa: SIM105 (a with-block would slow the ceiling down)
                orjson.loads(line)
            except orjson.JSONDecodeError:
                pass
    return {"records": lines, "seconds": time.perf_counter() - started}


def phase_parse(path: Path) -> dict[str, Any]:
    from lightnews.sources.arxiv_snapshot import SnapshotErrors, iter_snapshot

    started = time.perf_counter()
    errors = SnapshotErrors()
    with path.open("rb") as stream:
        papers = sum(1 for _ in iter_snapshot(stream, errors))
    return {
        "records": papers,
        "errors": errors.count,
        "seconds": time.perf_counter() - started,
    }


def phase_import(
    path: Path, db: Path, workers: int | None, transaction_size: int | None
) -> dict[str, Any]:
    from lightnews.bulk import import_snapshot
    from lightnews.store import SQLiteStore

    store = SQLiteStore(db)
    options = {} if transaction_size is None else {"transaction_size": transaction_size}
    started = time.perf_counter()
    summary = import_snapshot(store, path, workers=workers, **options)
    seconds = time.perf_counter() - started
    store.close()
    return {
        "records": summary.records,
        "errors": summary.errors.count,
        "new": summary.saved.papers_new,
        "updated": summary.saved.papers_updated,
        "unchanged": summary.saved.unchanged,
        "workers": summary.workers,
        "seconds": seconds,
    }


def run_child(args: argparse.Namespace) -> int:
    path = Path(args.file)
    if args.phase == "ceiling":
        result = phase_ceiling(path)
    elif args.phase == "parse":
        result = phase_parse(path)
    else:
        result = phase_import(path, Path(args.db), args.workers, args.transaction_size)
    result.update(self_report())
    print(json.dumps(result))
    return 0


# -- driver ----------------------------------------------------------------------


def _peak(r: dict[str, Any]) -> float:
    """Main process plus every worker at the largest worker's peak: an upper bound."""
    return float(r["hwm_mb"] + max(r.get("workers", 1), 1) * r["children_maxrss_mb"])


def _row(name: str, r: dict[str, Any]) -> str:
    rate = r["records"] / r["seconds"]
    workers = r.get("workers", "–")
    return (
        f"| {name} | {r['records']:,} | {r['seconds']:.1f} | {rate:,.0f} | "
        f"{r['ceiling']:,.0f} | {rate / r['ceiling']:.3f} | {r['hwm_mb']:.0f} | "
        f"{workers} × {r['children_maxrss_mb']:.0f} | {_peak(r):.0f} | {r['tree_pss_mb']:.0f} | "
        f"{r['cpu_self_s']:.1f} | {r['cpu_children_s']:.1f} | {r['other_cpus']:.2f} |"
    )


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=200_000)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--workers", type=int, default=None, help="passed to import_snapshot")
    parser.add_argument(
        "--transaction-size", type=int, default=None, help="passed to import_snapshot"
    )
    parser.add_argument(
        "--json", help="write the figures here (default: bench/out/snapshot_import-N.json)"
    )
    parser.add_argument(
        "--keep", action="store_true", help=f"keep the database as {OUT}/import-N.db"
    )
    parser.add_argument("--phase", choices=["ceiling", "parse", "import"], help=argparse.SUPPRESS)
    parser.add_argument("--file", help=argparse.SUPPRESS)
    parser.add_argument("--db", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.phase:
        return run_child(args)

    reason = fixtures_missing()
    if reason and not snapshot_path(args.records, args.seed).exists():
        print(reason)
        return 0
    path = ensure_snapshot(args.records, args.seed)
    workdir = Path(tempfile.mkdtemp(prefix="lightnews-bench-"))
    db = workdir / "import.db"
    base = [str(SCRIPT), "--file", str(path)]
    extra = [] if args.workers is None else ["--workers", str(args.workers)]
    if args.transaction_size is not None:
        extra += ["--transaction-size", str(args.transaction_size)]
    info = machine()
    results: dict[str, Any] = {}
    phases = [
        ("parse", ["--phase", "parse"]),
        ("import", ["--phase", "import", "--db", str(db), *extra]),
        ("reimport", ["--phase", "import", "--db", str(db), *extra]),
    ]
    ceilings: list[dict[str, Any]] = []
    try:
        print("running ceiling ...", file=sys.stderr, flush=True)
        ceilings.append(run_phase([*base, "--phase", "ceiling"]))
        for name, phase in phases:
            print(f"running {name} ...", file=sys.stderr, flush=True)
            results[name] = run_phase([*base, *phase])
            print("running ceiling ...", file=sys.stderr, flush=True)
            ceilings.append(run_phase([*base, "--phase", "ceiling"]))
            around = ceilings[-2:]
            results[name]["ceiling"] = sum(c["records"] / c["seconds"] for c in around) / 2
        wal = db.with_name(db.name + "-wal")
        db_mb, wal_mb = mb(db), mb(wal)
        if args.keep:
            kept = OUT / f"import-{args.records}.db"
            for suffix in ("", "-wal", "-shm"):
                source = db.with_name(db.name + suffix)
                if source.exists():
                    shutil.move(source, kept.with_name(kept.name + suffix))
    finally:
        shutil.rmtree(workdir, ignore_errors=True)

    rates = [c["records"] / c["seconds"] for c in ceilings]
    size_mb = mb(path)
    print()
    print(
        f"## Snapshot import, {args.records:,} records ({size_mb:,.0f} MB, "
        f"{size_mb * 1e6 / args.records:,.0f} B/line)"
    )
    print()
    print(
        f"{info['date']}; {info['cpus']} CPUs ({info['cpu']}); Python {info['python']}; "
        f"SQLite {info['sqlite']}; load average at start {info['load_avg']}"
    )
    print()
    print(
        "| phase | records | s | records/s | ceiling lines/s | ratio to ceiling | "
        "main peak MB | workers × peak MB | peak MB (main + workers) | sampled tree PSS MB | "
        "CPU main s | CPU worker s | other programs (CPUs busy) |"
    )
    print("| --- |" + " ---: |" * 12)
    for name in ("parse", "import", "reimport"):
        print(_row(name, results[name]))
    print()
    print(
        "Ceiling (read + orjson.loads every line, one process), measured before and after "
        "each phase; a phase's ratio is to the mean of the two around it: "
        + ", ".join(f"{r:,.0f}" for r in rates)
        + " lines/s."
    )
    imp, re_imp = results["import"], results["reimport"]
    print()
    print(
        f"Import: {imp['new']:,} new, "
        f"{imp['errors']} unreadable lines. Re-import: {re_imp['unchanged']:,} unchanged, "
        f"{re_imp['new'] + re_imp['updated']} changed."
    )
    print(f"Database: {db_mb:,.0f} MB (+ WAL {wal_mb:,.0f} MB) after the re-import.")
    target = 20_000
    rate = imp["records"] / imp["seconds"]
    print(
        f"Target 20,000 records/s: {'PASS' if rate >= target else 'MISS'} "
        f"({rate:,.0f}/s = {rate / target:.0%} of target); all of arXiv (2.7M) would take "
        f"{2.7e6 / rate / 60:.1f} min."
    )
    peak = max(_peak(r) for r in (imp, re_imp))
    print(f"Target peak < 500 MB: {'PASS' if peak < 500 else 'MISS'} ({peak:.0f} MB).")
    print()
    print(
        f"Reproduce: .venv/bin/python bench/snapshot_import.py --records {args.records}"
        + (f" --seed {args.seed}" if args.seed else "")
        + (f" --workers {args.workers}" if args.workers is not None else "")
        + (
            f" --transaction-size {args.transaction_size}"
            if args.transaction_size is not None
            else ""
        )
    )
    record = {
        "machine": info,
        "records": args.records,
        "snapshot_mb": size_mb,
        "db_mb": db_mb,
        "wal_mb": wal_mb,
        "ceilings": ceilings,
        "phases": results,
    }
    target_json = Path(args.json) if args.json else OUT / f"snapshot_import-{args.records}.json"
    target_json.parent.mkdir(parents=True, exist_ok=True)
    target_json.write_text(json.dumps(record, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
