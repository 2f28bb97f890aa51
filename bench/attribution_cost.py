"""Benchmark: what attributing a snapshot import's papers costs, against the old full pass.

A snapshot import attributes the papers it added or changed to the scholars
followed under their authors' surnames (``lightnews.ingest.bulk``). This script
generates (or reuses) a realistic snapshot (``bench/make_snapshot.py``: real
author names from ``../shared/fixtures``), follows ``--scholars`` of its
authors (the commonest surnames first: the worst case, many candidates each),
and measures in one run, on one fresh SQLite library:

* ``import``: the import with nobody followed (no attribution);
* ``import, followed``: the same file into another fresh library with the
  scholars followed: the import's own time and its attribution's;
* ``reimport``: the same file again (nothing changed: nobody is recomputed);
* ``full pass``: ``attribute_all`` once (what every refresh that stored a
  paper used to run, whoever the papers were by).

    .venv/bin/python bench/attribution_cost.py --records 100000 --scholars 20
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

import orjson

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from make_snapshot import fixtures_missing, generate  # noqa: E402

from lightnews.ingest.bulk import import_snapshot  # noqa: E402
from lightnews.ingest.follow import follow_scholar  # noqa: E402
from lightnews.link import attribution  # noqa: E402
from lightnews.store import LOCAL_READER, SQLiteStore  # noqa: E402

OUT = ROOT / "bench" / "out"
NOW = "2026-12-06T00:00:00Z"


def commonest_authors(path: Path, count: int) -> list[str]:
    """Full names (given name and surname) of ``count`` authors with the commonest surnames."""
    surnames: Counter[str] = Counter()
    names: dict[str, str] = {}
    with path.open("rb") as stream:
        for line in stream:
            try:
                record = orjson.loads(line)
            except orjson.JSONDecodeError:
                continue
            for parts in record.get("authors_parsed") or []:
                surname, given = parts[0], parts[1] if len(parts) > 1 else ""
                if surname and len(given.split(" ")[0].rstrip(".")) > 1:
                    surnames[surname] += 1
                    names.setdefault(surname, f"{given} {surname}")
    return [names[s] for s, _ in surnames.most_common(count)]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--records", type=int, default=100_000)
    parser.add_argument("--scholars", type=int, default=20)
    args = parser.parse_args()
    reason = fixtures_missing()
    if reason:
        print(reason)
        return 0
    path = OUT / f"snapshot-{args.records}-seed0.jsonl"
    if not path.exists():
        OUT.mkdir(parents=True, exist_ok=True)
        generate(args.records, path, 0)
    followed = commonest_authors(path, args.scholars)
    with tempfile.TemporaryDirectory() as tmp:
        with SQLiteStore(Path(tmp) / "plain.db") as store:
            plain = import_snapshot(store, path, now=NOW)
        with SQLiteStore(Path(tmp) / "followed.db") as store:
            for name in followed:
                follow_scholar(store, LOCAL_READER, NOW, arxiv_author=name)
            spent = {"attribution": 0.0}
            timed = attribution.attribute_scholar

            def counting(store_: SQLiteStore, scholar_id: int) -> int:
                started = time.perf_counter()
                try:
                    return timed(store_, scholar_id)
                finally:
                    spent["attribution"] += time.perf_counter() - started

            attribution.attribute_scholar = counting  # type: ignore[assignment]
            try:
                first = import_snapshot(store, path, now=NOW)
                first_attribution = spent["attribution"]
                spent["attribution"] = 0.0
                again = import_snapshot(store, path, now=NOW)
                again_attribution = spent["attribution"]
            finally:
                attribution.attribute_scholar = timed
            started = time.perf_counter()
            counts = attribution.attribute_all(store)
            full = time.perf_counter() - started
    print(
        f"{args.records} records, {len(followed)} followed scholars "
        f"({', '.join(followed[:5])}, ...)"
    )
    print("| phase | seconds | scholars recomputed | attribution seconds |")
    print("| --- | --- | --- | --- |")
    print(f"| import, nobody followed | {plain.seconds:.1f} | 0 | 0 |")
    print(
        f"| import, followed | {first.seconds:.1f} | {first.attributed} | {first_attribution:.2f} |"
    )
    print(
        f"| reimport (unchanged) | {again.seconds:.1f} | {again.attributed} "
        f"| {again_attribution:.2f} |"
    )
    print(f"| full pass (`attribute_all`) | {full:.2f} | {len(counts)} | {full:.2f} |")
    print(f"authorships attributed: {sum(counts.values())}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
