"""The offline demo: a database built from a snapshot bundled with the package.

The files under ``demo/snapshot/`` are saved responses in the real wire
formats of arXiv's API and OAI-PMH, RSS, Atom and JSON Feed, written by this
project. ``lightnews demo`` replays them through the real parsers and store,
so a new user sees real output without any network.
"""

from __future__ import annotations

from importlib import resources
from pathlib import Path

from lightnews.pipeline import RunReport, _iso, ingest_bytes, utc_now
from lightnews.settings import Settings
from lightnews.sources.opml import parse_opml
from lightnews.store import SQLiteStore

__all__ = ["SNAPSHOT_FILES", "build_demo", "snapshot_path"]

# (file, replay kind), in the order a real first run would see them.
SNAPSHOT_FILES = (
    ("arxiv-api-cs.LG.xml", "arxiv-api"),
    ("arxiv-oai-cs.xml", "arxiv-oai"),
    ("arxiv-oai-cs-raw.xml", "arxiv-oai"),
    ("blog-lab.rss.xml", "feed"),
    ("blog-notes.atom.xml", "feed"),
    ("blog-digest.feed.json", "feed"),
)


def snapshot_path(name: str) -> Path:
    return Path(str(resources.files("lightnews.demo") / "snapshot" / name))


def build_demo(store: SQLiteStore, settings: Settings) -> list[RunReport]:
    """Load every snapshot file (safe to run again: nothing changes the second time)."""
    reports = []
    # The OPML says which folder each demo feed belongs in; files carry the titles.
    folders = {f.title: f.folder for f in parse_opml(snapshot_path("sources.opml").read_bytes())}
    for name, kind in SNAPSHOT_FILES:
        address = f"demo:{name}"
        report = ingest_bytes(store, kind, address, snapshot_path(name).read_bytes(), settings)
        reports.append(report)
        row = store.get_source(report.source_id)
        if row.title in folders and not row.folder:
            store.add_source(kind, address, now=_iso(utc_now()), folder=folders[row.title])
    return reports
