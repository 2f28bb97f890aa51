"""How fast the Jetstream filter reads the network, against bare JSON decoding of the same events.

Generates N events in the network's mix (most name no paper; the paper posts
are real seed records from ../shared/fixtures) into a file, then reads that
file line by line, each phase in a fresh process (its peak memory its own):

* ``decode``: the file read in chunks of 10,000 events, each chunk timed three
  times in turn: ``json.loads`` of every event (the ceiling the issue names),
  ``orjson.loads`` (the decoder Lightnews uses), a substring test of the raw
  bytes before decoding (the alternative the filter was first built on) and
  :class:`~lightnews.sources.jetstream.NetworkFilter` (orjson, the cheap tests
  of each post's own fields, reading the few posts that pass for papers).
  Interleaving keeps the ratio honest on a shared, loaded machine; the fastest
  chunk of each shows what an idle core does;
* ``replay``: ``lightnews listen --from-file`` end to end into a new SQLite
  library (the filter, linking, bot classification, the writes with the cursor).

    python bench/listen_replay.py --events 1000000
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHARED = ROOT.parent / "shared" / "fixtures"


def _generate(path: Path, count: int, share: float) -> None:
    from lightnews.sources.jetstream_fixtures import EventMaker, seed_records

    maker = EventMaker(seed_records(SHARED), seed=1, paper_share=share)
    with path.open("wb") as out:
        for line in maker.lines(count):
            out.write(line + b"\n")


_RAW_NEEDLES = (b"xiv", b"doi.org", b"doi:", b"openreview", b"/paper")


def raw_prefilter(raw: bytes) -> bool:
    """The alternative measured against: the same needles over the raw, case-folded event
    before any decoding (what the filter did first; slower than decoding with orjson)."""
    if b'"kind":"commit"' not in raw or b'"operation":"delete"' in raw:
        return True
    if b'"collection":"app.bsky.feed.post"' not in raw:
        return False
    folded = raw.lower()
    for needle in _RAW_NEEDLES:
        if needle in folded:
            return True
    return b"10." in raw


def _phase(name: str, path: Path) -> dict[str, object]:
    """One phase in this (fresh) process: events/s and the peak resident memory."""
    started = time.perf_counter()
    extra: dict[str, object] = {}
    count = 0
    if name == "decode":
        import orjson

        from lightnews.sources.jetstream import NetworkFilter

        found = NetworkFilter()
        readers = {
            "json": json.loads,
            "orjson": orjson.loads,
            "raw_prefilter": raw_prefilter,
            "filter": found.read,
        }
        spent = dict.fromkeys(readers, 0.0)
        best = dict.fromkeys(readers, 0.0)
        with path.open("rb") as lines:
            while True:
                chunk = [line for _, line in zip(range(10_000), lines, strict=False)]
                if not chunk:
                    break
                count += len(chunk)
                for reader, read in readers.items():
                    begin = time.perf_counter()
                    for line in chunk:
                        read(line)
                    took = time.perf_counter() - begin
                    spent[reader] += took
                    best[reader] = max(best[reader], len(chunk) / took)
        extra = {f"{r}_events_per_s": round(count / spent[r]) for r in readers}
        extra.update({f"{r}_best_chunk_per_s": round(best[r]) for r in readers})
        extra["filter_vs_json"] = round(spent["json"] / spent["filter"], 3)
        extra["filter_vs_orjson"] = round(spent["orjson"] / spent["filter"], 3)
        extra.update(found.counts.to_json())
    else:
        from lightnews.ingest.listen import replay_file
        from lightnews.settings import Settings
        from lightnews.store import SQLiteStore

        with tempfile.TemporaryDirectory() as scratch:
            store = SQLiteStore(Path(scratch) / "listen.db")
            report = replay_file(store, Settings(environ={}), path)
            count = report.counts.events
            extra = {"stored": report.stored, **report.counts.to_json()}
            store.close()
    seconds = time.perf_counter() - started
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "phase": name,
        "events": count,
        "seconds": round(seconds, 2),
        "events_per_s": round(count / seconds),
        "peak_mb": round(peak_mb, 1),
        **extra,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument(
        "--paper-share",
        type=float,
        default=0.01,
        help="share of posts that name a paper (the rest do not)",
    )
    parser.add_argument("--phases", default="decode,replay")
    parser.add_argument("--phase", help=argparse.SUPPRESS)
    parser.add_argument("--file", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.phase:
        print(json.dumps(_phase(args.phase, args.file)))
        return
    with tempfile.TemporaryDirectory() as scratch:
        path = Path(scratch) / "events.jsonl"
        _generate(path, args.events, args.paper_share)
        size = path.stat().st_size
        print(
            f"{args.events} events, {size / 1e6:.0f} MB ({size / args.events:.0f} B each); "
            f"load average before: {os.getloadavg()}",
            flush=True,
        )
        results = []
        for phase in args.phases.split(","):
            run = subprocess.run(
                [sys.executable, __file__, "--phase", phase, "--file", str(path)],
                capture_output=True,
                text=True,
                check=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            result = json.loads(run.stdout)
            result["load_average"] = [round(x, 2) for x in os.getloadavg()]
            results.append(result)
            print(json.dumps(result), flush=True)


if __name__ == "__main__":
    main()
