"""How fast the Jetstream filter reads the network, against bare JSON decoding of the same events.

Generates N events in the network's mix (most name no paper; the paper posts
are real seed records from ../shared/fixtures) into a file, then reads that
file line by line, each phase in a fresh process (its peak memory its own):

* ``json``: ``json.loads`` of every event (the ceiling the issue names), and
  ``orjson``: ``orjson.loads`` of every event (the decoder Lightnews uses);
* ``filter``: :class:`~lightnews.sources.jetstream.NetworkFilter` over every event
  (pre-filter, decoding what may matter, reading the posts that do);
* ``replay``: ``lightnews listen --from-file`` end to end into a new SQLite
  library (the filter, linking, and the writes with the cursor).

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


def _phase(name: str, path: Path) -> dict[str, object]:
    """One phase in this (fresh) process: events/s and the peak resident memory."""
    started = time.perf_counter()
    extra: dict[str, object] = {}
    count = 0
    if name in ("json", "orjson", "filter"):
        import orjson

        from lightnews.sources.jetstream import NetworkFilter

        found = NetworkFilter()
        read = {"json": json.loads, "orjson": orjson.loads, "filter": found.read}[name]
        with path.open("rb") as lines:
            for line in lines:
                read(line)
                count += 1
        if name == "filter":
            extra = found.counts.to_json()
    else:
        from lightnews.listen import replay_file
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
    return {"phase": name, "events": count, "seconds": round(seconds, 2),
            "events_per_s": round(count / seconds), "peak_mb": round(peak_mb, 1), **extra}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--events", type=int, default=1_000_000)
    parser.add_argument("--paper-share", type=float, default=0.01,
                        help="share of posts that name a paper (the rest do not)")
    parser.add_argument("--phases", default="json,orjson,filter,replay")
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
        print(f"{args.events} events, {size / 1e6:.0f} MB ({size / args.events:.0f} B each); "
              f"load average before: {os.getloadavg()}", flush=True)
        results = []
        for phase in args.phases.split(","):
            run = subprocess.run(
                [sys.executable, __file__, "--phase", phase, "--file", str(path)],
                capture_output=True, text=True, check=True,
                env={**os.environ, "PYTHONPATH": str(ROOT)},
            )
            result = json.loads(run.stdout)
            result["load_average"] = [round(x, 2) for x in os.getloadavg()]
            results.append(result)
            print(json.dumps(result), flush=True)
        ceiling = next((r for r in results if r["phase"] == "json"), None)
        for result in results:
            if ceiling and result is not ceiling:
                ratio = float(result["events_per_s"]) / float(ceiling["events_per_s"])  # type: ignore[arg-type]
                print(f"{result['phase']}: {ratio:.2f}x json.loads")


if __name__ == "__main__":
    main()
