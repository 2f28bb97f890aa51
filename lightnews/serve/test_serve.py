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

import httpx
import psutil
import pytest


@pytest.fixture
def served(demo_library: str) -> Iterator[tuple[str, int]]:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("LIGHTNEWS_")}
    process = subprocess.Popen(
        [sys.executable, "-m", "lightnews", "--db", demo_library, "serve", "--workers", "2",
         "--port", str(port)],
        env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
    )  # fmt: skip
    base = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                if httpx.get(base + "/api/sources", timeout=1).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            time.sleep(0.1)
        else:
            process.kill()
            pytest.fail("serve did not start: " + (process.stdout.read() or b"").decode())  # type: ignore[union-attr]
        yield base, process.pid
    finally:
        os.killpg(process.pid, signal.SIGTERM)
        process.wait(timeout=20)


def test_two_processes_serve_one_site_and_accept_each_others_forms(
    served: tuple[str, int],
) -> None:
    base, pid = served
    workers = psutil.Process(pid).children(recursive=True)
    assert len([w for w in workers if "python" in w.name().lower()]) >= 2
    with httpx.Client(base_url=base) as client:
        page = client.get("/")
        token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page.text)
        assert page.status_code == 200 and token
        statuses = set()
        for _ in range(12):  # new connections land on either process
            with httpx.Client(base_url=base, cookies=client.cookies) as other:
                done = other.post(
                    "/mark", data={"action": "mute", "keyword": "zebra", "csrf_token": token[1]},
                    headers={"origin": base}, follow_redirects=False,
                )  # fmt: skip
                statuses.add(done.status_code)
        assert statuses == {303}
        assert "zebra" in client.get("/").text
