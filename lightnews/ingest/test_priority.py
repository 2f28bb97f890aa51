"""Bulk commands lower their own priority; their autogroup's only when they lead their session.

Each case runs in a process of its own (a priority, once lowered, stays lowered):
a real ``lightnews ingest`` of a real lab blog's feed, started the way cron
starts a job (a session of its own) and the way a terminal does (inside the
caller's session).
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from lightnews.ingest.priority import AUTOGROUP

ROOT = Path(__file__).resolve().parents[2]
pytestmark = pytest.mark.skipif(
    not AUTOGROUP.exists() or sys.platform != "linux", reason="Linux with autogroups only"
)

#: Runs the CLI, then prints the nice value and the autogroup line it was left with.
PROBE = (
    "import atexit, os\n"
    "atexit.register(lambda: print('PROBE', os.nice(0), open('/proc/self/autogroup').read()))\n"
    "from lightnews.cli import main\n"
    "main()\n"
)


def ingest(db: Path, feed: Path, *, own_session: bool, **env: str) -> tuple[int, str]:
    """(nice, autogroup line) a ``lightnews ingest`` process ended with."""
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            PROBE,
            "--db",
            str(db),
            "ingest",
            "--kind",
            "feed",
            "--from-file",
            str(feed),
        ],
        env={
            **{k: v for k, v in os.environ.items() if k != "LIGHTNEWS_BACKGROUND_NICE"},
            "PYTHONPATH": str(ROOT),
            "LIGHTNEWS_RESOLVE_ONLINE": "false",
            **env,
        },
        capture_output=True,
        text=True,
        timeout=300,
        start_new_session=own_session,
    )
    assert done.returncode == 0, done.stderr
    line = next(x for x in done.stdout.splitlines() if x.startswith("PROBE"))
    _, nice, group = line.split(" ", 2)
    return int(nice), group.strip()


def group_nice(line: str) -> int:
    return int(line.rsplit("nice", 1)[1])


def test_a_bulk_command_lowers_itself_and_its_own_sessions_group(
    shared: Path, tmp_path: Path
) -> None:
    feed = shared / "feeds" / "lab-blogs" / "feed_xai_news.xml"
    ours = AUTOGROUP.read_text(encoding="ascii").strip()
    # Started as cron starts a job: its own session, so its own autogroup, lowered too.
    nice, group = ingest(tmp_path / "a.db", feed, own_session=True)
    assert nice == 10 and group_nice(group) == 10 and group != ours
    # The setting chooses how far.
    nice, group = ingest(tmp_path / "b.db", feed, own_session=True, LIGHTNEWS_BACKGROUND_NICE="4")
    assert nice == 4 and group_nice(group) == 4
    # From a terminal (the caller's session): its nice value only; the caller's group
    # (the shell, and what else the terminal runs) is left as it was.
    nice, group = ingest(tmp_path / "c.db", feed, own_session=False)
    assert nice == max(10, os.nice(0)) and group == ours
    assert AUTOGROUP.read_text(encoding="ascii").strip() == ours
    # 0 leaves the priority alone.
    nice, group = ingest(tmp_path / "d.db", feed, own_session=True, LIGHTNEWS_BACKGROUND_NICE="0")
    assert nice == os.nice(0) and group_nice(group) == 0
