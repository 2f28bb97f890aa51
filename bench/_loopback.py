"""Helpers the load benchmarks share: a real server on loopback, timed requests, percentiles.

The server is ``lightnews serve`` in its own process (uvicorn, as a user runs
it), started from a chosen checkout (``--code``) so that two versions of the
code can be measured A/B on the same database. Clients are httpx clients in
threads of the benchmark's process; every request is timed from the client.
Only 127.0.0.1 is ever contacted.
"""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def lightnews(code: Path, db: Path | str, *args: str) -> list[str]:
    """The command line that runs ``lightnews --db DB ARGS`` from the checkout ``code``
    (``db`` a file, or a PostgreSQL URL)."""
    return [
        sys.executable,
        "-c",
        "from lightnews.cli import main; main()",
        "--db",
        db if isinstance(db, str) else str(db.resolve()),
        *args,
    ]


def env_for(code: Path, **extra: str) -> dict[str, str]:
    env = {**os.environ, "PYTHONPATH": str(code), "LIGHTNEWS_RESOLVE_ONLINE": "false"}
    env.update(extra)
    return env


#: The process id of each running server, by its base URL (for CPU accounting).
SERVER_PIDS: dict[str, int] = {}


def cpu_seconds(pid: int) -> float:
    """CPU seconds (user + system, every thread) process ``pid`` has used so far; 0 if gone."""
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


@contextmanager
def server(db: Path | str, code: Path = ROOT, *options: str, **env: str) -> Iterator[str]:
    """``lightnews serve [OPTIONS]`` on a free loopback port; yields its base URL."""
    # What the server says goes to a file: a pipe nobody reads fills, and a server that
    # logs errors under load then blocks on writing them (and outlived its benchmark).
    with tempfile.TemporaryFile() as said:
        with _serving(db, code, options, env, said) as base:
            yield base
        said.seek(0)
        errors = said.read().decode(errors="replace")
        if "Traceback" in errors:  # a 500 that a benchmark did not stop at must be seen
            sys.stderr.write(f"the server at {base} logged errors:\n{errors[-4000:]}\n")


@contextmanager
def _serving(
    db: Path | str, code: Path, options: tuple[str, ...], env: dict[str, str], said: Any
) -> Iterator[str]:
    port = free_port()
    process = subprocess.Popen(
        lightnews(code, db, "serve", "--port", str(port), "--host", "127.0.0.1", *options),
        env=env_for(code, **env),
        cwd=code,
        stdout=subprocess.DEVNULL,
        stderr=said,
        start_new_session=True,
    )
    base = f"http://127.0.0.1:{port}"
    SERVER_PIDS[base] = process.pid
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(f"{base}/api/openapi.json", timeout=5)
                break
            except httpx.TransportError:
                if process.poll() is not None or time.monotonic() > deadline:
                    said.seek(0)
                    raise SystemExit(f"the server did not start: {said.read()!r}") from None
                time.sleep(0.2)
        yield base
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait()


_CSRF_INPUT = re.compile(r"<input[^>]*csrf[^>]*>", re.IGNORECASE)
_ATTR = re.compile(r'(name|value)="([^"]*)"')


class FormPoster:
    """POSTs forms the way a browser does from the site's own page (CSRF-aware).

    Fetches a page once to get what the app's CSRF protection asks for: a hidden
    form field whose name mentions ``csrf`` (its value sent back with every
    form) and the cookies the page set (kept by the client); sends the site's
    own ``Origin`` and ``Referer``. Adapt *this class* when the protection
    changes: the benchmarks post only through it. A 403 refreshes the token once.
    """

    def __init__(self, client: httpx.Client, base: str, page: str = "/sources") -> None:
        self.client, self.base, self.page = client, base, page
        self.fields: dict[str, str] = {}

    def _refresh(self) -> None:
        html = self.client.get(self.base + self.page).text
        self.fields = {}
        for tag in _CSRF_INPUT.findall(html):
            attrs = dict(_ATTR.findall(tag))
            if "name" in attrs:
                self.fields[attrs["name"]] = attrs.get("value", "")

    def post(self, path: str, form: dict[str, str]) -> httpx.Response:
        if not self.fields:
            self._refresh()
        headers = {"Origin": self.base, "Referer": self.base + self.page}
        response = self.client.post(self.base + path, data={**form, **self.fields}, headers=headers)
        if response.status_code == 403:
            self._refresh()
            response = self.client.post(
                self.base + path, data={**form, **self.fields}, headers=headers
            )
        return response


@dataclass
class Timings:
    """Latencies (ms) and statuses of requests, by label; thread-safe."""

    ms: dict[str, list[float]] = field(default_factory=dict)
    statuses: dict[str, dict[int, int]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def add(self, label: str, ms: float, status: int) -> None:
        with self._lock:
            self.ms.setdefault(label, []).append(ms)
            counts = self.statuses.setdefault(label, {})
            counts[status] = counts.get(status, 0) + 1

    def all_ms(self) -> list[float]:
        return [v for values in self.ms.values() for v in values]

    def count(self, status: int) -> int:
        return sum(c.get(status, 0) for c in self.statuses.values())


def percentile(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    index = min(len(ordered) - 1, max(0, round(q / 100 * (len(ordered) - 1))))
    return ordered[index]


def summary(values: list[float]) -> dict[str, Any]:
    return {
        "n": len(values),
        "p50": round(percentile(values, 50), 1),
        "p95": round(percentile(values, 95), 1),
        "p99": round(percentile(values, 99), 1),
        "max": round(max(values), 1) if values else None,
    }


def timed(timings: Timings, label: str, send: Callable[[], httpx.Response]) -> None:
    """Send one request and record its time and status (0: no answer) under ``label``."""
    started = time.perf_counter()
    try:
        status = send().status_code
    except httpx.HTTPError as error:
        timings.errors.append(f"{label}: {type(error).__name__}")
        status = 0
    timings.add(label, (time.perf_counter() - started) * 1000, status)


def get_loop(
    base: str,
    paths: list[str],
    stop: threading.Event,
    timings: Timings,
    pause: float = 0.05,
    timeout: float = 60,
) -> threading.Thread:
    """A reader: GETs ``paths`` in turn until ``stop``, each timed."""

    def run() -> None:
        with httpx.Client(timeout=timeout) as client:
            n = 0
            while not stop.is_set():
                url = base + paths[n % len(paths)]
                timed(timings, paths[n % len(paths)].split("?")[0], lambda u=url: client.get(u))
                n += 1
                stop.wait(pause)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread


def mark_loop(
    base: str,
    stop: threading.Event,
    timings: Timings,
    phase: Callable[[], str],
    pause: float = 0.5,
) -> threading.Thread:
    """A browser muting and unmuting a keyword on /mark, every ``pause`` seconds.

    Each POST is filed under the writers' phase when it was sent (``phase()``:
    the merge still running, or only the ingests), so that a slow answer can
    be put down to the writer that held the lock.
    """

    def run() -> None:
        with httpx.Client(timeout=120) as client:
            poster = FormPoster(client, base)
            n = 0
            while not stop.is_set():
                form = {
                    "action": "mute" if n % 2 == 0 else "unmute",
                    "kind": "keyword",
                    "value": "contention",
                    "back": "/sources",
                }
                timed(timings, phase(), lambda f=form: poster.post("/mark", f))
                n += 1
                stop.wait(pause)

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return thread
