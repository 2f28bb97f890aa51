"""Helpers the benchmarks share: run a phase in a fresh process and watch its memory.

Every figure a benchmark reports is taken in a fresh subprocess so one
phase's allocations cannot inflate the next one's peak. The parent samples
the resident memory of the whole process tree (the phase and the worker it
starts) while it runs; the child reports its own exact high-water marks
(``VmHWM`` of itself, ``ru_maxrss`` of the children it waited for) and CPU
times. The machine is shared and noisy, so the benchmarks also report
ratios to a ceiling measured in the same run.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "bench" / "out"


def _status_kb(pid: int, key: str) -> int:
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as status:
            for line in status:
                if line.startswith(key):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def _tree(pid: int) -> list[int]:
    found = [pid]
    for current in found:
        try:
            for task in os.listdir(f"/proc/{current}/task"):
                with open(f"/proc/{current}/task/{task}/children", encoding="ascii") as kids:
                    found.extend(int(k) for k in kids.read().split())
        except OSError:
            continue
    return found


def _pss_kb(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as rollup:
            for line in rollup:
                if line.startswith("Pss:"):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


def self_report() -> dict[str, Any]:
    """Memory and CPU of this process and of the children it has waited for."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return {
        "hwm_mb": round(_status_kb(os.getpid(), "VmHWM:") / 1024, 1),
        "children_maxrss_mb": round(kids.ru_maxrss / 1024, 1),
        "cpu_self_s": round(me.ru_utime + me.ru_stime, 2),
        "cpu_children_s": round(kids.ru_utime + kids.ru_stime, 2),
    }


def _busy_seconds() -> float:
    """CPU seconds all CPUs of the machine have been busy since boot."""
    with open("/proc/stat", encoding="ascii") as stat:
        fields = [int(x) for x in stat.readline().split()[1:]]
    idle = fields[3] + (fields[4] if len(fields) > 4 else 0)  # idle + iowait
    return (sum(fields[:8]) - idle) / os.sysconf("SC_CLK_TCK")


def run_phase(args: list[str], interval: float = 0.2) -> dict[str, Any]:
    """Run ``python <args>`` in a fresh process; returns its last JSON line plus memory.

    ``tree_rss_mb`` is the highest sampled sum of RSS over the process tree
    (counts pages shared after fork twice: an upper bound); ``tree_pss_mb``
    the same for PSS (shared pages split between processes: the honest sum).
    ``other_cpus`` is how many CPUs other programs kept busy on average
    meanwhile: the noise of a shared machine, in the same units as its cores.
    """
    busy = _busy_seconds()
    started = time.perf_counter()
    process = subprocess.Popen([sys.executable, *args], stdout=subprocess.PIPE, text=True, cwd=ROOT)
    peaks = {"rss": 0, "pss": 0}
    done = threading.Event()

    def sample() -> None:
        while not done.is_set():
            pids = _tree(process.pid)
            peaks["rss"] = max(peaks["rss"], sum(_status_kb(p, "VmRSS:") for p in pids))
            peaks["pss"] = max(peaks["pss"], sum(_pss_kb(p) for p in pids))
            done.wait(interval)

    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    out, _ = process.communicate()
    wall = time.perf_counter() - started
    busy = _busy_seconds() - busy
    done.set()
    sampler.join()
    if process.returncode != 0:
        raise SystemExit(f"phase {args} failed with exit code {process.returncode}")
    result: dict[str, Any] = json.loads(out.strip().splitlines()[-1])
    ours = result.get("cpu_self_s", 0.0) + result.get("cpu_children_s", 0.0)
    result["other_cpus"] = round(max(busy - ours, 0.0) / wall, 2) if wall else 0.0
    result["tree_rss_mb"] = round(peaks["rss"] / 1024, 1)
    result["tree_pss_mb"] = round(peaks["pss"] / 1024, 1)
    return result


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    model = ""
    try:
        with open("/proc/cpuinfo", encoding="ascii", errors="replace") as info:
            for line in info:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    return {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpus": os.cpu_count(),
        "cpu": model or platform.processor(),
        "python": platform.python_version(),
        "sqlite": sqlite3.sqlite_version,
        "load_avg": [round(x, 2) for x in os.getloadavg()],
    }


def spin_seconds(loops: int = 3_000_000) -> float:
    """A fixed pure-Python loop, to show how fast this CPU is right now."""
    started = time.perf_counter()
    total = 0
    for i in range(loops):
        total += i
    return time.perf_counter() - started


def mb(path: Path) -> float:
    return round(path.stat().st_size / 1e6, 1) if path.exists() else 0.0
