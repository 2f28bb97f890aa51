"""Pacing: who decides when the next request to a host may start.

The HTTP client keeps a minimum interval between two requests to one host
(arXiv asks for 3 seconds). Whose requests count depends on how Lightnews
runs: one process refreshing an SQLite library paces its own requests, while
workers on any number of machines sharing a PostgreSQL library must pace all
of theirs together, or four workers would ask arXiv four times as often.
So the client does not keep the clock itself: it makes each request inside a
:class:`Pacer`'s turn at the host. :class:`LocalPacer` is the in-process pacing
(the default); the store's ``HostSlots`` gives turns to a whole cluster through
the database. Both start a turn an interval after the previous one *ended*, one
request at a time per host, as arXiv's own client does: when a request reaches
the host is known to neither side, and counted from the previous start, a slow
first request and a quick second reached a host 0.28 s apart at an interval of
0.3 s on a busy machine. The client never learns which pacer it has.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager
from typing import Protocol

__all__ = ["LocalPacer", "Pacer"]


class Pacer(Protocol):
    """Turns at a host: a request to ``host`` is made inside one, ``interval`` apart."""

    def turn(self, host: str, interval: float) -> AbstractContextManager[None]:
        """Enter when it is this caller's turn at ``host``; the request is made inside."""
        ...


class LocalPacer:
    """Turns kept in this process: every thread's requests to a host are spaced.

    A turn at a host is taken by one thread at a time; it starts once the
    previous one has ended an interval ago. ``sleep`` and ``clock`` can be
    injected so that tests check waits without waiting.
    """

    def __init__(
        self,
        *,
        sleep: Callable[[float], None] = time.sleep,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._sleep = sleep
        self._clock = clock
        self._lock = threading.Lock()
        self._next_start: dict[str, float] = {}
        self._hosts: dict[str, threading.Lock] = {}

    @contextmanager
    def turn(self, host: str, interval: float) -> Iterator[None]:
        if interval <= 0:
            yield
            return
        with self._lock:
            mine = self._hosts.setdefault(host, threading.Lock())
        with mine:
            self.wait_for(host, interval)
            try:
                yield
            finally:
                with self._lock:  # the next turn starts an interval after this one ended
                    self._next_start[host] = max(
                        self._next_start.get(host, 0.0), self._clock() + interval
                    )

    def wait_for(self, host: str, interval: float) -> None:
        """Take the host's next start and sleep until it (callers at once queue up an
        interval apart, in the order they asked)."""
        if interval <= 0:
            return
        with self._lock:
            now = self._clock()
            start = max(now, self._next_start.get(host, now))
            self._next_start[host] = start + interval
        wait = start - now
        if wait > 0:
            self._sleep(wait)
