"""`lightnews import export` reads back what `lightnews export` wrote, into another library
on either backend, and a second run changes nothing (issue 29: there was no import)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner, Result

from lightnews.cli import cli
from lightnews.store import LOCAL_READER, SQLiteStore, Store

NOW = "2026-12-03T09:00:00Z"
ORCID = "0000-0002-1825-0097"


def _run(db: str, *args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["--db", db, *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def _location(store: Store) -> str:
    url = getattr(store, "url", None)
    return str(url) if url else str(store.path)


def _exported(tmp_path: Path) -> Path:
    """A library with one of everything a reader owns, exported by the CLI."""
    db = tmp_path / "from.db"
    with SQLiteStore(db) as store:
        ada = store.create_scholar("Ada Lovelace", NOW)
        store.add_identity(ada, "orcid", ORCID)
        store.add_identity(ada, "bluesky-handle", "ada.example.org")
        store.set_followed(LOCAL_READER, ada, True, NOW)
        store.set_decision(ada, "2510.03172", "reject", NOW, by="cli:me")
        noisy = store.create_scholar("Noisy Person", NOW)
        store.add_identity(noisy, "bluesky-handle", "noisy.example.org")
        store.set_mute(LOCAL_READER, "scholar", str(noisy), NOW)
        blog, _ = store.add_source(
            "feed", "https://lab.example.org/feed.xml", now=NOW, title="The Lab", folder="Labs"
        )
        store.set_source_enabled(blog.id, False)
        store.set_mute(LOCAL_READER, "source", str(blog.id), NOW)
        store.add_source("arxiv-api", "cat:cs.LG", now=NOW)
        store.set_mute(LOCAL_READER, "keyword", "survey", NOW)
        store.mark_story(LOCAL_READER, "2511.18342", "2026-12-01T10:00:00Z", read=True, saved=True)
        store.mark_story(LOCAL_READER, "2511.17015", "2026-12-02T10:00:00Z", read=True)
        store.mark_story(LOCAL_READER, "item:7", "2026-12-02T10:00:00Z", saved=True)
        store.save_setting("refresh_minutes", "45")
        store.save_reader_setting(LOCAL_READER, "digest_to", "ada@example.org")
    path = tmp_path / "export.json"
    path.write_text(_run(str(db), "export").stdout)
    return path


def _state(store: Store) -> dict[str, Any]:
    scholars = {s.id: s for s in store.list_scholars()}
    mutes = store.mutes(LOCAL_READER)
    sources = {r.id: r for r in store.list_sources()}
    return {
        "follows": sorted(scholars[i].name for i in store.follows(LOCAL_READER)),
        "identities": sorted(
            (s.name, i.kind, i.value) for s in scholars.values() for i in s.identities
        ),
        "decisions": {s.name: store.decisions(s.id) for s in scholars.values()},
        "muted scholars": sorted(scholars[int(i)].name for i in mutes.scholar),
        "muted sources": sorted(sources[int(i)].address for i in mutes.source),
        "keywords": sorted(mutes.keyword),
        "sources": sorted(
            (r.kind, r.address, r.title, r.folder, r.enabled) for r in sources.values()
        ),
        "stories": store.story_states(LOCAL_READER),
        "settings": (
            store.saved_settings().get("refresh_minutes"),
            store.reader_settings(LOCAL_READER).get("digest_to"),
        ),
    }


def test_import_takes_back_what_export_wrote_once(store: Store, tmp_path: Path) -> None:
    path = _exported(tmp_path)
    db = _location(store)
    # Ada is already known here by another identity's twin: her ORCID finds her.
    known = store.create_scholar("A. Lovelace", NOW)
    store.add_identity(known, "orcid", ORCID)
    first = _run(db, "import", "export", str(path))
    assert "1 follows, 3 mutes, 2 stories, 2 settings, 2 sources, 1 decisions" in first.stdout
    assert "1 stories of entries without a paper (item:ID) not taken" in first.stderr
    state = _state(store)
    assert state == {
        "follows": ["A. Lovelace"],
        "identities": [
            ("A. Lovelace", "bluesky-handle", "ada.example.org"),
            ("A. Lovelace", "orcid", ORCID),
            ("Noisy Person", "bluesky-handle", "noisy.example.org"),
        ],
        "decisions": {"A. Lovelace": {"2510.03172": "reject"}, "Noisy Person": {}},
        "muted scholars": ["Noisy Person"],
        "muted sources": ["https://lab.example.org/feed.xml"],
        "keywords": ["survey"],
        "sources": [
            ("arxiv-api", "cat:cs.LG", None, None, True),
            ("feed", "https://lab.example.org/feed.xml", "The Lab", "Labs", False),
        ],
        "stories": {
            "2511.18342": ("2026-12-01T10:00:00Z", "2026-12-01T10:00:00Z"),
            "2511.17015": ("2026-12-02T10:00:00Z", None),
        },
        "settings": ("45", "ada@example.org"),
    }
    again = orjson.loads(_run(db, "import", "export", str(path), "--json").stdout)
    assert {k: v for k, v in again.items() if k not in ("left_out", "remarks")} == dict.fromkeys(
        ("follows", "decisions", "sources", "settings", "mutes", "stories"), 0
    )
    assert again["left_out"] == [] and _state(store) == state
    audited = [e.action for e in store.audit_log(limit=50)]
    assert audited.count("sources.add") == 2 and "attribution.reject" in audited


def test_import_refuses_a_file_that_is_not_an_export_and_says_what_it_left_out(
    tmp_path: Path,
) -> None:
    db = str(tmp_path / "to.db")
    for name, body in (
        ("notes.txt", b"hello"),
        ("list.json", b"[1, 2]"),
        ("other.json", b'{"follows": [], "version": 1}'),
    ):
        (tmp_path / name).write_bytes(body)
        refused = _run(db, "import", "export", str(tmp_path / name), code=2)
        assert "not a Lightnews export" in refused.output, name
    document = orjson.loads(_exported(tmp_path).read_bytes())
    document["follows"].append({"name": "Mallory", "identities": [{"kind": "x", "value": "y"}]})
    document["sources"].append({"kind": "feed", "url": "javascript:alert(1)"})
    document["settings"]["refresh_minutes"] = "soon"
    bad = tmp_path / "bad.json"
    bad.write_bytes(orjson.dumps(document))
    partial = _run(db, "import", "export", str(bad), code=3)
    said = partial.stderr
    assert "left out: an identity of 'Mallory'" in said
    assert "left out: a feed source must be an http(s) URL" in said
    assert "left out: setting refresh_minutes must be a positive integer, got 'soon'" in said
    assert "1 follows, 3 mutes, 2 stories" in partial.stdout  # the rest was taken
