"""``lightnews serve --workers N``: several web processes answer as one site."""

from __future__ import annotations

import os
import re
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest


@contextmanager
def served(db: str, workers: int, log: Path) -> Iterator[tuple[str, int]]:
    """``lightnews serve --workers N`` on ``db``, in a process group of its own: its address
    and process id, once it answers (its output goes to ``log``). ``test_outage`` uses it."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIGHTNEWS_")}
    env["LIGHTNEWS_RESOLVE_ONLINE"] = "0"
    with log.open("wb") as out:
        process = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "lightnews",
                "--db",
                db,
                "serve",
                "--workers",
                str(workers),
                "--port",
                str(port),
            ],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(300):
            try:
                if httpx.get(base + "/api/sources", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            process.kill()
            pytest.fail("serve did not start: " + log.read_text(errors="replace"))
        yield base, process.pid
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=30)


def test_two_processes_serve_one_site_and_accept_each_others_forms(
    demo_library: str, tmp_path: Path
) -> None:
    log = tmp_path / "serve.log"
    with served(demo_library, 2, log) as (base, pid), httpx.Client(base_url=base) as client:
        assert len(_descendants(pid)) >= 2  # uvicorn's supervisor runs the processes under it
        page = client.get("/")
        token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text)
        assert page.status_code == 200 and token
        statuses = set()
        for _ in range(12):  # new connections land on either process
            with httpx.Client(base_url=base, cookies=client.cookies) as other:
                done = other.post(
                    "/mark",
                    data={"action": "mute", "keyword": "zebra", "csrf_token": token[1]},
                    headers={"origin": base},
                    follow_redirects=False,
                )
                statuses.add(done.status_code)
        assert statuses == {303}
        assert "zebra" in client.get("/").text


def _descendants(pid: int) -> set[int]:
    """Processes under ``pid`` (read from /proc)."""
    parents: dict[int, int] = {}
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            fields = stat.read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        parents[int(stat.parent.name)] = int(fields[1])
    found: set[int] = set()
    frontier = {pid}
    while frontier:
        frontier = {child for child, parent in parents.items() if parent in frontier} - found
        found |= frontier
    return found
