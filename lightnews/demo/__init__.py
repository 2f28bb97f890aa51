"""The offline demo: a database built from a snapshot bundled with the package.

The files under ``demo/snapshot/`` are saved responses in the real wire
formats of arXiv's API and OAI-PMH, RSS, Atom, JSON Feed, Bluesky's XRPC,
Hugging Face Daily Papers and a notes page, written by this project.
``lightnews demo`` replays them through the real parsers and store, so a new
user sees real output without any network. Two of the demo's scholars are
followed, so their scholar pages (posts, threads, attributed papers) work too.
"""

from __future__ import annotations

from collections.abc import Callable
from contextlib import suppress
from datetime import datetime, timedelta
from importlib import resources
from pathlib import Path

from lightnews.embed import SemanticUnavailable, embed_new, encoder_for, semantic_unavailable
from lightnews.ingest.replay import ingest_bytes
from lightnews.ingest.report import RunReport
from lightnews.link.attribution import attribute_scholar
from lightnews.normalize.times import iso, now_iso
from lightnews.settings import Settings
from lightnews.sources.opml import parse_opml
from lightnews.store import LOCAL_READER, ReaderId, Store

__all__ = [
    "DEMO_SCHOLARS",
    "SNAPSHOT_FILES",
    "build_demo",
    "follow_demo_scholars",
    "snapshot_clock",
    "snapshot_path",
]

# (file, replay kind), in the order a real first run would see them: papers
# first, so that the posts, entries and notes read later can be linked to them.
SNAPSHOT_FILES = (
    ("arxiv-api-cs.LG.xml", "arxiv-api"),
    ("arxiv-oai-cs.xml", "arxiv-oai"),
    ("arxiv-oai-cs-raw.xml", "arxiv-oai"),
    ("blog-lab.rss.xml", "feed"),
    ("blog-notes.atom.xml", "feed"),
    ("blog-digest.feed.json", "feed"),
    ("bluesky-profile.mara.json", "bluesky-profile"),
    ("bluesky-feed.mara.json", "bluesky"),
    ("bluesky-profile.arxivbot.json", "bluesky-profile"),
    ("bluesky-feed.arxivbot.json", "bluesky"),
    ("hf-daily-2025-11-27.json", "hf-daily"),
    ("notes-neurips2025.html", "notes"),
)

#: The scholars the demo follows: display name, then identities (kind, value).
DEMO_SCHOLARS: tuple[tuple[str, tuple[tuple[str, str], ...]], ...] = (
    (
        "Mara Lindqvist",
        (("arxiv-name", "Mara Lindqvist"), ("bluesky-handle", "maralindqvist.bsky.social")),
    ),
    ("Tobias Achterberg-Reyes", (("arxiv-name", "Tobias Achterberg-Reyes"),)),
)


def snapshot_path(name: str) -> Path:
    return Path(str(resources.files("lightnews.demo") / "snapshot" / name))


def follow_demo_scholars(store: Store, reader: ReaderId, now: str) -> list[int]:
    """Follow the demo's scholars (idempotent); returns their ids.

    A scholar the user already follows under one of these identities (``follow
    --arxiv-author "Mara Lindqvist"``) is reused and given the others. Their
    Bluesky DID is added when the saved profile is read (see the pipeline's
    ``_link_accounts``).
    """
    ids = []
    for name, identities in DEMO_SCHOLARS:
        owners = [store.scholar_by_identity(kind, value) for kind, value in identities]
        scholar_id = next((o for o in owners if o is not None), None)
        if scholar_id is None:
            scholar_id = store.create_scholar(name, now)
        for kind, value in identities:
            store.add_identity(scholar_id, kind, value)
        store.set_followed(reader, scholar_id, True, now)
        if any(o != scholar_id for o in owners):
            # A new name to match papers under: attribute now, not only when papers change.
            attribute_scholar(store, scholar_id)
        ids.append(scholar_id)
    return ids


def build_demo(
    store: Store, settings: Settings, progress: Callable[[str], None] | None = None
) -> list[RunReport]:
    """Load every snapshot file (safe to run again: nothing changes the second time).

    ``progress`` hears a sentence per step: each file read, preparing the
    encoder (slow only the first time on a machine), embedding. The library's
    ``clock`` is set to the snapshot's last moment (unless already set), so
    that "since 1d" means the demo's last day, not a year after it.
    """
    say = progress or (lambda words: None)
    reports = []
    follow_demo_scholars(store, LOCAL_READER, now_iso())
    # The OPML says which folder each demo feed belongs in; files carry the titles.
    folders = {f.title: f.folder for f in parse_opml(snapshot_path("sources.opml").read_bytes())}
    profile_title = None
    for number, (name, kind) in enumerate(SNAPSHOT_FILES, 1):
        say(f"Reading {name} ({number}/{len(SNAPSHOT_FILES)})")
        address = f"demo:{name}"
        report = ingest_bytes(store, kind, address, snapshot_path(name).read_bytes(), settings)
        reports.append(report)
        row = store.get_source(report.source_id)
        if row.title in folders and not row.folder:
            store.add_source(kind, address, now=now_iso(), folder=folders[row.title])
        # A live Bluesky source reads the profile and the feed as one source; replayed, they
        # are two files, so the feed takes its title from the profile read just before it.
        if kind == "bluesky-profile":
            profile_title = row.title
        elif kind == "bluesky" and profile_title and not row.title:
            store.set_source_title(row.id, profile_title)
    if not store.saved_settings().get("clock"):
        store.save_setting("clock", snapshot_clock(store))
    if not semantic_unavailable(settings):
        say("Preparing the encoder (the first time on this machine takes a minute or two)")
        with suppress(SemanticUnavailable):  # embed_new says why; search stays lexical
            encoder_for(settings)  # loaded once per process; embedding below reuses it
    say("Embedding the papers for search by meaning")
    embed_new(store, settings)  # meaning-based search too, when the semantic extra is here
    return reports


def snapshot_clock(store: Store) -> str:
    """The snapshot's "now": an hour after its newest dated item."""
    dated = [i.published for i in store.recent_items(1000) if i.published]
    newest = max(dated, default=None) or now_iso()
    moment = datetime.fromisoformat(newest.replace("Z", "+00:00")) + timedelta(hours=1)
    return iso(moment)
