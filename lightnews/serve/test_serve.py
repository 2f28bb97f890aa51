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
from contextlib import contextmanager, suppress
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


def test_a_web_process_that_dies_is_replaced(demo_library: str, tmp_path: Path) -> None:
    """A crashed web process must not halve a group's server for good: another takes its
    place on the same port, and every new connection is answered."""
    with served(demo_library, 2, tmp_path / "serve.log") as (base, pid):
        first = _descendants(pid)
        port = int(base.rsplit(":", 1)[1])
        with httpx.Client(base_url=base) as client:
            assert client.get("/api/sources").status_code == 200
            victim = next(iter(_connections_by_process(first, port)))
        os.kill(victim, signal.SIGKILL)
        for _ in range(300):
            serving = [p for p in _descendants(pid) - first if _listens(p, port)]
            if serving:
                break
            time.sleep(0.1)
        assert serving, "no process took the dead one's place"
        for _ in range(20):  # new connections, whichever process they land on
            with httpx.Client(base_url=base) as client:
                assert client.get("/api/sources").status_code == 200


def _sockets(pid: int) -> set[str]:
    """The inodes of ``pid``'s open sockets."""
    found: set[str] = set()
    try:
        for fd in Path(f"/proc/{pid}/fd").iterdir():
            with suppress(OSError):
                target = os.readlink(fd)
                if target.startswith("socket:["):
                    found.add(target[8:-1])
    except OSError:
        pass
    return found


def _tcp(port: int, state: str) -> set[str]:
    """Inodes of this machine's TCP sockets on local ``port`` in ``state`` (01 established,
    0A listening), from /proc/net/tcp."""
    inodes: set[str] = set()
    for table in ("/proc/net/tcp", "/proc/net/tcp6"):
        with suppress(OSError):
            for line in Path(table).read_text().splitlines()[1:]:
                fields = line.split()
                if int(fields[1].rsplit(":", 1)[1], 16) == port and fields[3] == state:
                    inodes.add(fields[9])
    return inodes


def _connections_by_process(pids: set[int], port: int) -> dict[int, int]:
    """How many established connections on ``port`` each of ``pids`` holds (those with any)."""
    established = _tcp(port, "01")
    held = {pid: len(_sockets(pid) & established) for pid in pids}
    return {pid: n for pid, n in held.items() if n}


def _listens(pid: int, port: int) -> bool:
    return bool(_sockets(pid) & _tcp(port, "0A"))
