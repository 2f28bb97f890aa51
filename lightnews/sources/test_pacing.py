"""Pacing: the HTTP client asks its pacer for every turn at a host with an interval."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager

from conftest import RecordedServer, Reply
from lightnews.settings import Settings
from lightnews.sources.http import HttpClient
from lightnews.sources.pacing import LocalPacer


class RecordingPacer:
    """A pacer that lets every request go at once and remembers what it was asked."""

    def __init__(self) -> None:
        self.asked: list[tuple[str, float]] = []

    @contextmanager
    def turn(self, host: str, interval: float) -> Iterator[None]:
        self.asked.append((host, interval))
        self.inside = True  # the request is made inside the turn
        yield
        self.inside = False


def test_the_client_asks_its_pacer_for_each_request_to_a_paced_host(
    server: RecordedServer, settings: Settings
) -> None:
    url = server.route("/feed", Reply(200, b"ok"))
    pacer = RecordingPacer()
    with HttpClient(settings, pacer=pacer) as client:
        client.get(url)  # no interval for this host: the pacer is not asked
        assert pacer.asked == []
        client.set_host_interval("127.0.0.1", 0.25)
        client.get(url)
        client.get(url)
    assert pacer.asked == [("127.0.0.1", 0.25), ("127.0.0.1", 0.25)]
    assert len(server.hits) == 3


def test_local_pacer_queues_callers_one_interval_apart() -> None:
    now = [100.0]
    sleeps: list[float] = []
    pacer = LocalPacer(sleep=sleeps.append, clock=lambda: now[0])
    for _ in range(3):  # three threads asking at the same moment
        pacer.wait_for("example.org", 3.0)
    assert sleeps == [3.0, 6.0]  # the first goes now, the others queue behind it
    pacer.wait_for("other.org", 3.0)  # another host has its own turns
    assert sleeps == [3.0, 6.0]
    now[0] += 20.0  # long after the last turn: no wait
    pacer.wait_for("example.org", 3.0)
    assert sleeps == [3.0, 6.0]
    pacer.wait_for("example.org", 0.0)  # no interval: never a wait
    assert sleeps == [3.0, 6.0]


def test_a_turn_starts_an_interval_after_the_previous_one_ended() -> None:
    """When a request reaches the host is unknown: a slow first one and a quick second,
    spaced from their starts, reached a host closer than the interval."""
    now = [100.0]
    sleeps: list[float] = []

    def sleep(seconds: float) -> None:
        sleeps.append(seconds)
        now[0] += seconds

    pacer = LocalPacer(sleep=sleep, clock=lambda: now[0])
    with pacer.turn("export.arxiv.org", 3.0):
        now[0] += 2.0  # the request takes two seconds
    with pacer.turn("export.arxiv.org", 3.0):
        pass
    assert sleeps == [3.0]  # not 1.0: three seconds after the first ended
    with pacer.turn("other.org", 3.0):  # another host has its own turns
        pass
    assert sleeps == [3.0]


def test_turns_at_one_host_are_taken_one_at_a_time() -> None:
    pacer = LocalPacer()
    inside: list[int] = []
    most = [0]

    def request() -> None:
        with pacer.turn("127.0.0.1", 0.01):
            inside.append(1)
            most[0] = max(most[0], len(inside))
            time.sleep(0.02)
            inside.pop()

    threads = [threading.Thread(target=request) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert most[0] == 1
