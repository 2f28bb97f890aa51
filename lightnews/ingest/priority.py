"""Background work yields the processor to people waiting for pages.

A snapshot merge, a refresh or the embedding of new papers can keep both
cores of a small machine busy for minutes while someone reads the feed. The
usual answer is a lower priority (a higher nice value), and the worker's
systemd unit sets one (``Nice=10``). But on Linux a nice value only weighs
against processes of the same *autogroup* (``man 7 sched``, "The autogroup
feature"): every session (a cron job, a terminal, a job started with
``setsid``) is a group of its own, and groups share the processor equally
whatever their members' nice values. Measured with ``bench/write_contention.py``
(writers started as cron starts them, each in its own session, at nice 10):
the three writers and a shell's loop of ``lightnews mute`` took 1.3 of the 2
cores and the web server 0.33, as if the nice value were not there.

So the commands that write in bulk (``import``, ``ingest``, ``refresh``,
``embed``, ``worker``) lower their own priority to ``background_nice``
(default 10; 0 leaves it alone): their nice value, and, when the process
leads its own session (the group then holds nothing but it and its
children), its autogroup's too. A session it does not lead is never
touched: run from a terminal, the shell's group (and whatever else that
terminal runs) keeps its priority, and only the nice value applies, among
that terminal's processes. Nothing is ever raised back: a priority is only
lowered, up to ``background_nice``, never past what it already is.
"""

from __future__ import annotations

import contextlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

__all__ = ["AUTOGROUP", "Lowered", "yield_cpu"]

#: Where Linux shows (and takes) the nice value of this process's autogroup.
AUTOGROUP = Path("/proc/self/autogroup")
_AUTOGROUP_NICE = re.compile(r"\bnice\s+(-?\d+)")


@dataclass(frozen=True, slots=True)
class Lowered:
    """What :func:`yield_cpu` left: the process's nice value and its autogroup's
    (None: no autogroup here, or a session this process does not lead)."""

    nice: int
    autogroup_nice: int | None


def _autogroup_nice() -> int | None:
    try:
        found = _AUTOGROUP_NICE.search(AUTOGROUP.read_text(encoding="ascii"))
    except OSError:
        return None
    return int(found.group(1)) if found else None


def yield_cpu(nice: int) -> Lowered:
    """Lower this process's priority to ``nice`` (0-19; 0: leave it), and its
    autogroup's when it leads its own session. Never raises: where the system
    refuses (no permission, not Linux), the priority stays as it was."""
    target = max(0, min(19, nice))
    current = os.nice(0)
    if target > current:
        with contextlib.suppress(OSError):
            current = os.nice(target - current)
    group = None
    if target and os.getsid(0) == os.getpid():
        group = _autogroup_nice()
        if group is not None and group < target:
            with contextlib.suppress(OSError):
                AUTOGROUP.write_text(str(target), encoding="ascii")
            group = _autogroup_nice()
    return Lowered(current, group)
