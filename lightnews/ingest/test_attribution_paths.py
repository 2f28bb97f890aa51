"""Every path that stores papers attributes them, and a new follow attributes the backlog.

A paper by a followed scholar must say "authored by …" in the feed however it
arrived: a bulk snapshot import, an OAI-PMH harvest, or before the follow. Each
test reads the reason off the ranked feed (``lightnews.rank.rank_stories``), on
SQLite and on PostgreSQL.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from conftest import RecordedServer, Reply
from lightnews.ingest.bulk import import_snapshot
from lightnews.ingest.follow import follow_scholar
from lightnews.ingest.refresh import refresh
from lightnews.link.attribution import attribute_new, scholar_keys
from lightnews.rank import rank_stories
from lightnews.settings import Settings
from lightnews.store import LOCAL_READER, Store

NOW = "2025-12-01T00:00:00Z"


def _record(arxiv_id: str, authors: list[list[str]], title: str) -> bytes:
    record: dict[str, Any] = {
        "id": arxiv_id,
        "submitter": "Someone",
        "authors": ", ".join(f"{given} {surname}" for surname, given, _ in authors),
        "title": title,
        "comments": None,
        "journal-ref": None,
        "doi": None,
        "categories": "cs.LG",
        "license": None,
        "abstract": f"We study {title.lower()}.",
        "versions": [{"version": "v1", "created": "Wed, 26 Nov 2025 10:00:00 GMT"}],
        "update_date": "2025-11-26",
        "authors_parsed": authors,
    }
    return orjson.dumps(record)


def _snapshot(tmp_path: Path) -> Path:
    """Her paper among two by others."""
    path = tmp_path / "snapshot.jsonl"
    lines = [
        _record(
            "2511.30001",
            [["Lindqvist", "Mara", ""], ["Ng", "Wei", ""]],
            "Sparse ring attention for long documents",
        ),
        _record("2511.30002", [["Okafor", "Ada", ""]], "Kernel tricks for streaming data"),
        _record("2511.30003", [["Nyberg", "Oskar", ""]], "Gradient noise and generalization"),
    ]
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def _why(store: Store, arxiv_id: str) -> list[str]:
    """What the local reader's feed says about the paper."""
    (story,) = [s for s in rank_stories(store, LOCAL_READER, limit=None) if s.arxiv_id == arxiv_id]
    return [r.text for r in story.reasons]


def test_snapshot_import_attributes_a_followed_scholars_paper(store: Store, tmp_path: Path) -> None:
    follow_scholar(store, LOCAL_READER, NOW, arxiv_author="Mara Lindqvist")
    summary = import_snapshot(store, _snapshot(tmp_path), workers=0, now=NOW)
    assert summary.saved.papers_new == 3 and summary.attributed == 1
    assert _why(store, "2511.30001") == ["authored by Mara Lindqvist (followed)"]
    assert _why(store, "2511.30002") == ["new on arXiv"]
    # Importing again changes nothing, so nobody is attributed again.
    assert import_snapshot(store, _snapshot(tmp_path), workers=0, now=NOW).attributed == 0
    assert _why(store, "2511.30001") == ["authored by Mara Lindqvist (followed)"]


def test_new_follow_attributes_the_backlog(store: Store, tmp_path: Path) -> None:
    import_snapshot(store, _snapshot(tmp_path), workers=0, now=NOW)
    assert _why(store, "2511.30001") == ["new on arXiv"]
    follow_scholar(store, LOCAL_READER, NOW, arxiv_author="Mara Lindqvist")
    assert _why(store, "2511.30001") == ["authored by Mara Lindqvist (followed)"]


def test_oai_harvest_attributes_a_followed_scholars_paper(
    store: Store, server: RecordedServer, settings: Settings, demo_dir: Path
) -> None:
    follow_scholar(store, LOCAL_READER, NOW, arxiv_author="Mara Lindqvist")
    url = server.route("/oai", Reply(200, (demo_dir / "arxiv-oai-cs.xml").read_bytes()))
    store.add_source("arxiv-oai", "cs", now=NOW, params={"metadataPrefix": "arXiv"})
    settings = settings.with_overrides(arxiv_oai_url=url, resolve_online=False)
    (report,) = refresh(store, settings, kinds=["arxiv-oai"])  # not her arXiv API source
    assert report.ok and report.saved.papers_new and "lindqvist" in report.saved.name_keys
    assert _why(store, "2511.18342")[0] == "authored by Mara Lindqvist (followed)"
    assert _why(store, "2511.21436") == ["new on arXiv"]  # by two others


def test_saves_name_only_new_or_changed_papers_authors(store: Store, tmp_path: Path) -> None:
    """What a save reports decides whom to attribute again: unchanged papers name nobody."""
    path = _snapshot(tmp_path)
    assert import_snapshot(store, path, workers=0, now=NOW).saved.name_keys == set()  # no follows
    follow_scholar(store, LOCAL_READER, NOW, arxiv_author="Oskar Nyberg")
    follow_scholar(store, LOCAL_READER, NOW, arxiv_author="Mara Lindqvist")
    keys = scholar_keys(store)
    assert set(keys) == {"nyberg", "lindqvist"}
    changed = path.read_bytes().replace(b"Kernel tricks", b"Kernel methods")
    path.write_bytes(changed.replace(b"Sparse ring", b"Sparse ringed"))
    summary = import_snapshot(store, path, workers=0, now=NOW)
    assert summary.saved.papers_updated == 2 and summary.saved.unchanged == 1
    assert summary.saved.name_keys == {"lindqvist"} and summary.attributed == 1
    # Names nobody follows under recompute nobody.
    assert attribute_new(store, {"okafor", "ng"}) == {}
    assert list(attribute_new(store, {"nyberg"}).values()) == [1]


def test_the_command_line_paths(tmp_path: Path) -> None:
    """`import arxiv-snapshot` after `follow --arxiv-author`, and a follow after an import."""
    from click.testing import CliRunner

    from lightnews.cli import cli

    def feed(db: Path) -> dict[str, list[str]]:
        result = CliRunner().invoke(cli, ["--db", str(db), "feed", "--json"])
        assert result.exit_code == 0, result.output
        return {s["arxiv_id"]: s["why"] for s in orjson.loads(result.stdout) if "arxiv_id" in s}

    def run(db: Path, *args: str) -> None:
        result = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
        assert result.exit_code == 0, result.output

    snapshot = str(_snapshot(tmp_path))
    followed_first, imported_first = tmp_path / "a.db", tmp_path / "b.db"
    run(followed_first, "follow", "--arxiv-author", "Mara Lindqvist")
    run(followed_first, "import", "arxiv-snapshot", snapshot)
    assert feed(followed_first)["2511.30001"] == ["authored by Mara Lindqvist (followed)"]
    run(imported_first, "import", "arxiv-snapshot", snapshot)
    assert feed(imported_first)["2511.30001"] == ["new on arXiv"]
    run(imported_first, "follow", "--arxiv-author", "Mara Lindqvist")
    assert feed(imported_first)["2511.30001"] == ["authored by Mara Lindqvist (followed)"]


def test_papers_looked_up_for_references_are_attributed(
    server: RecordedServer, store: Store, settings: Settings, data: Path
) -> None:
    """A notes page cites "Snell: Optimality of ..."; the paper fetched for it is his."""
    follow_scholar(store, LOCAL_READER, NOW, arxiv_author="Charlie Snell")
    page = (
        b"<html><body><h1>ICLR 2025 notes</h1><h2>ICLR2025 Snell: Optimality of Scaling "
        b"LLM Test-Time Compute</h2><p>Spend compute at test time wisely.</p></body></html>"
    )
    url = server.route("/notes", Reply(200, page, {"Content-Type": "text/html"}))
    api = server.route(
        "/api/query", Reply(200, (data / "arxiv/iclr2025-noted-papers.xml").read_bytes())
    )
    store.add_source("notes", url, now=NOW)
    online = settings.with_overrides(resolve_online=True, arxiv_api_url=api)
    (report,) = refresh(store, online, kinds=["notes"])  # not his own arXiv source
    assert report.ok and not report.saved.papers_new  # the notes page stored no paper itself
    assert _why(store, "2408.03314")[0].startswith("authored by Charlie Snell")
