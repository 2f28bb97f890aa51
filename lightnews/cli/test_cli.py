"""The command line as a user and a cron job see it: output, --json shapes, exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner, Result

from conftest import ROOT, RecordedServer, Reply, hold_write_lock
from lightnews.cli import cli
from lightnews.store import LOCAL_READER, SQLiteStore


def run(db: Path, *args: str, code: int = 0) -> Result:
    result = CliRunner().invoke(cli, ["--db", str(db), *args], catch_exceptions=False)
    assert result.exit_code == code, result.output
    return result


def as_json(result: Result) -> Any:
    return json.loads(result.stdout)


@pytest.fixture
def demo_db(tmp_path: Path) -> Path:
    db = tmp_path / "demo.db"
    run(db, "demo")
    return db


def test_init_and_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    db = tmp_path / "x.db"
    assert "schema version" in run(db, "init").stdout
    rows = as_json(run(db, "settings", "--json"))
    names = {r["name"] for r in rows}
    assert {"contact", "http_timeout", "arxiv_interval", "refresh_minutes"} <= names
    assert all(r["help"] and "default" in r for r in rows)
    run(db, "settings", "set", "refresh_minutes", "15")
    monkeypatch.setenv("LIGHTNEWS_CONTACT", "me@example.org")
    rows = {r["name"]: r for r in as_json(run(db, "settings", "--json"))}
    assert rows["refresh_minutes"]["value"] == 15 and rows["refresh_minutes"]["origin"] == "saved"
    assert rows["contact"]["origin"] == "environment"
    bad = run(db, "settings", "set", "refresh_minutes", "soon", code=2)
    assert "must be a positive integer, got 'soon'" in bad.output
    run(db, "settings", "unset", "refresh_minutes")
    monkeypatch.setenv("LIGHTNEWS_REFRESH_MINUTES", "soon")
    broken = run(db, "settings", code=4)
    assert "LIGHTNEWS_REFRESH_MINUTES must be a positive integer, got 'soon'" in broken.output


def test_a_saved_setting_this_version_refuses_leaves_the_library_usable(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """A link bar of 7 saved before bars had to be probabilities: every command still runs,
    the process says once what it set aside (a warning: on stderr when nothing else
    takes the log), and ``settings set`` puts it right."""
    db = tmp_path / "x.db"
    run(db, "init")
    with SQLiteStore(db) as store:
        store.save_setting("link_bar", "7")  # as an older version let it be saved
    run(db, "feed")
    run(db, "feed")
    said = [r.getMessage() for r in caplog.records if r.name == "lightnews.settings"]
    assert len(said) == 1, said
    assert said[0].startswith("the saved setting link_bar must be a number from 0 to 1, got '7'")
    assert "its default, 0.8, is used" in said[0]
    rows = {r["name"]: r for r in as_json(run(db, "settings", "--json"))}
    assert rows["link_bar"]["value"] == 0.8
    assert rows["link_bar"]["origin"] == "default (the saved value is unusable)"
    assert "link_bar = 0.9" in run(db, "settings", "set", "link_bar", "0.9").stdout
    fixed = run(db, "settings", "--json")
    assert {r["name"]: r for r in as_json(fixed)}["link_bar"]["origin"] == "saved"
    refused = run(db, "settings", "set", "link_bar", "5", code=2)
    assert "must be a number from 0 to 1, got '5'" in refused.output
    too_high = run(db, "resolve", "--bar", "5", "--offline", "Attention Is All You Need", code=2)
    assert "is not in the range 0<=x<=1" in too_high.output


def test_sources_add_list_export_remove(tmp_path: Path, demo_dir: Path) -> None:
    db = tmp_path / "x.db"
    added = as_json(
        run(
            db,
            "sources",
            "add",
            "--category",
            "cs.LG",
            "--author",
            "Sepp Hochreiter",
            "--ids",
            "2510.02375, 2505.20295",
            "--oai-set",
            "cs",
            "--json",
        )
    )
    assert [a["url"] for a in added] == [
        "cat:cs.LG",
        'au:"Sepp Hochreiter"',
        "id:2510.02375,2505.20295",
        "cs",
    ]
    run(db, "sources", "add", "--opml", str(demo_dir / "sources.opml"))
    run(db, "sources", "add", "https://example.org/feed.xml", "--folder", "Mine")
    again = as_json(run(db, "sources", "add", "https://example.org/feed.xml", "--json"))
    assert again[0]["created"] is False
    listed = as_json(run(db, "sources", "list", "--json"))
    assert {"id", "kind", "url", "last_success", "last_error", "error_count"} <= set(listed[0])
    feeds = [s for s in listed if s["kind"] == "feed"]
    assert len(feeds) >= 7 and {"Lab blogs", "Mine"} <= {s["folder"] for s in feeds}
    opml = run(db, "sources", "export").stdout
    assert "https://example.org/feed.xml" in opml and 'text="Lab blogs"' in opml
    run(db, "sources", "remove", str(listed[0]["id"]))
    assert len(as_json(run(db, "sources", "list", "--json"))) == len(listed) - 1
    run(db, "sources", "remove", "9999", code=1)
    run(db, "sources", "add", "ftp://nope", code=2)
    run(db, "sources", "add", code=2)


def test_demo_show_search_feed(demo_db: Path) -> None:
    paper = as_json(run(demo_db, "show", "2510.03172", "--json"))
    for key in (
        "arxiv_id",
        "title",
        "authors",
        "abstract",
        "primary_category",
        "categories",
        "versions",
        "links",
        "mentions",
    ):
        assert key in paper
    assert paper["links"]["abs"] == "https://arxiv.org/abs/2510.03172"
    assert len(paper["versions"]) == 3 and paper["mentions"]
    assert "Mara Lindqvist" in paper["authors"]
    text = run(demo_db, "show", "arXiv:2510.03172v2").stdout
    assert paper["title"][:30] in text
    run(demo_db, "show", "2510.99999", code=1)
    run(demo_db, "show", "not-an-id", code=2)
    found = as_json(run(demo_db, "search", "attention", "--json"))
    hits = [h for h in found if h["kind"] == "paper"]
    assert hits and {"arxiv_id", "title", "score", "matched"} <= set(hits[0])
    assert hits[0]["score"] >= hits[-1]["score"]
    said = found[len(hits) :]  # papers first, then posts, threads, articles and notes
    assert said and all(h["kind"] in ("post", "thread", "article", "note") for h in said)
    assert all(h["link"] == f"/item/{h['item_id']}" for h in said)
    assert as_json(run(demo_db, "search", "attention", "--kind", "papers", "--json")) == hits
    assert as_json(run(demo_db, "search", "zzzzunfindable", "--json")) == []
    lines = run(demo_db, "search", "sparse attention", "--kind", "papers").stdout.splitlines()
    first = next(i for i, line in enumerate(lines) if "2511.18342" in line)
    assert "by words and meaning" in lines[first]  # why it matched
    assert "Mara Lindqvist" in lines[first + 1]  # its authors
    assert "Sparse Ring Attention (SRA)" in lines[first + 2]  # the snippet around the words
    feed = as_json(run(demo_db, "feed", "--json", "--limit", "5"))
    assert len(feed) == 5 and all({"title", "score", "why"} <= set(s) for s in feed)
    assert all(("arxiv_id" in s) != ("item" in s) and s["why"] for s in feed)
    scores = [s["score"] for s in feed]
    assert scores == sorted(scores, reverse=True)
    # The scholar the demo follows comes first: she posted it and wrote it.
    assert any(w.startswith("posted by Mara Lindqvist") for w in feed[0]["why"])
    assert any(w.startswith("authored by") for w in feed[0]["why"])
    newest = as_json(run(demo_db, "feed", "--json", "--newest", "--limit", "5"))
    times = [s["time"] for s in newest]
    assert times == sorted(times, reverse=True)


def test_ingest_replay_and_errors(tmp_path: Path, demo_dir: Path, data: Path) -> None:
    db = tmp_path / "x.db"
    report = as_json(
        run(
            db,
            "ingest",
            "--kind",
            "arxiv-api",
            "--from-file",
            str(demo_dir / "arxiv-api-cs.LG.xml"),
            "--json",
        )
    )
    assert report["ok"] and report["papers_new"] == 14
    again = as_json(
        run(
            db,
            "ingest",
            "--kind",
            "arxiv-api",
            "--from-file",
            str(demo_dir / "arxiv-api-cs.LG.xml"),
            "--json",
        )
    )
    assert again["papers_new"] == again["papers_updated"] == again["items_new"] == 0
    broken = tmp_path / "broken.xml"
    broken.write_bytes(b"<feed><entry>")
    failed = run(db, "ingest", "--kind", "arxiv-api", "--from-file", str(broken), code=4)
    assert "not well-formed" in failed.output
    listed = as_json(run(db, "sources", "list", "--json"))  # issue 29: no broken source left
    assert [s["url"] for s in listed] == [(demo_dir / "arxiv-api-cs.LG.xml").resolve().as_uri()]
    assert not listed[0]["last_error"]
    run(db, "ingest", "--kind", "nope", "--from-file", str(broken), code=2)
    abs_report = as_json(
        run(
            db,
            "ingest",
            "--kind",
            "arxiv-abs",
            "--from-file",
            str(data / "arxiv/hep-th-9901001.abs"),
            "--json",
        )
    )
    assert abs_report["papers_new"] == 1
    assert as_json(run(db, "show", "hep-th/9901001v2", "--json"))["authors"][0] == "Jörg Müller"


def test_import_snapshot(tmp_path: Path, data: Path) -> None:
    db = tmp_path / "x.db"
    summary = as_json(
        run(db, "import", "arxiv-snapshot", str(data / "arxiv/snapshot-small.jsonl"), "--json")
    )
    assert summary["records"] == 3 and summary["papers_new"] == 3
    assert summary["unreadable_lines"] == 3 and summary["errors"]
    again = as_json(
        run(db, "import", "arxiv-snapshot", str(data / "arxiv/snapshot-small.jsonl"), "--json")
    )
    assert again["papers_new"] == again["papers_updated"] == 0 and again["unchanged"] == 3
    assert as_json(run(db, "show", "hep-th/9901001", "--json"))["withdrawn"] is True


def test_refresh_exit_codes(tmp_path: Path, server: RecordedServer, demo_dir: Path) -> None:
    db = tmp_path / "x.db"
    env = {
        "LIGHTNEWS_ALLOW_PRIVATE_ADDRESSES": "1",
        "LIGHTNEWS_HTTP_RETRIES": "1",
        "LIGHTNEWS_HTTP_BACKOFF": "0",
        "LIGHTNEWS_RESOLVE_ONLINE": "0",
    }
    good = server.route("/good", Reply(200, (demo_dir / "blog-lab.rss.xml").read_bytes()))
    bad = server.route("/bad", Reply(500))

    def invoke(*args: str) -> Result:
        return CliRunner(env=env).invoke(cli, ["--db", str(db), *args], catch_exceptions=False)

    invoke("sources", "add", good)
    assert invoke("refresh").exit_code == 0
    invoke("sources", "add", bad)
    result = invoke("refresh", "--force", "--json")
    assert result.exit_code == 3
    assert {r["ok"] for r in json.loads(result.stdout)} == {True, False}
    invoke("sources", "remove", "1")
    assert invoke("refresh", "--force").exit_code == 4


def test_console_script_runs(tmp_path: Path) -> None:
    script = Path(sys.executable).with_name("lightnews")
    command = [str(script)] if script.exists() else [sys.executable, "-m", "lightnews"]
    done = subprocess.run(
        [*command, "--db", str(tmp_path / "y.db"), "show", "2510.00001"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 1 and "not stored" in done.stderr


def test_cli_reference_is_current() -> None:
    from lightnews.cli.docs import render

    assert (ROOT / "docs/cli.md").read_text() == render(), "run `make docs`"


def test_resolve(demo_db: Path, tmp_path: Path, server: RecordedServer) -> None:
    text = (
        "we loved https://arxiv.org/pdf/2511.10268v2 and Conformal Risk Control for "
        "Autoregressive Policies"
    )
    found = as_json(run(demo_db, "resolve", text, "--json"))
    assert [(f["arxiv_id"], f["method"]) for f in found] == [
        ("2511.10268", "arxiv-url"),
        ("2511.04419", "exact-title"),
    ]
    assert all(set(f) == {"arxiv_id", "title", "method", "confidence"} for f in found)
    note = tmp_path / "note.txt"
    note.write_text("See arXiv:2511.17015 for details.")
    assert as_json(run(demo_db, "resolve", "--file", str(note), "--json"))[0]["arxiv_id"] == (
        "2511.17015"
    )
    assert as_json(run(demo_db, "resolve", "nothing to see", "--json", code=1)) == []
    page = server.route(
        "/post", Reply(200, b"<html><body><p>Our paper: arxiv.org/abs/2511.18342</p></body></html>")
    )
    env = {"LIGHTNEWS_ALLOW_PRIVATE_ADDRESSES": "1"}
    result = CliRunner(env=env).invoke(cli, ["--db", str(demo_db), "resolve", page, "--json"])
    assert json.loads(result.stdout)[0]["arxiv_id"] == "2511.18342"


def test_story_mentions_have_who_and_where(demo_db: Path) -> None:
    story = as_json(run(demo_db, "show", "2511.18342", "--json"))
    mention = story["mentions"][0]
    for key in (
        "kind",
        "source",
        "url",
        "author",
        "scholar",
        "published",
        "text",
        "method",
        "confidence",
    ):
        assert key in mention
    assert mention["kind"] == "article" and mention["source"] == "Northlake AI Lab Blog"


def test_feed_formats_bibtex_and_export(demo_db: Path) -> None:
    import feedparser

    atom = run(demo_db, "feed", "--format", "atom", "--limit", "3").stdout
    parsed = feedparser.parse(atom.encode())
    assert not parsed.bozo and len(parsed.entries) == 3
    jsonfeed = as_json(run(demo_db, "feed", "--format", "jsonfeed", "--limit", "3"))
    assert jsonfeed["version"].startswith("https://jsonfeed.org/") and len(jsonfeed["items"]) == 3
    bib = run(demo_db, "show", "2511.18342", "--bibtex").stdout
    assert bib.startswith("@misc{") and "eprint = {2511.18342}" in bib
    owned = as_json(run(demo_db, "export"))
    assert {"follows", "sources", "settings"} <= set(owned)
    assert any(f["name"] == "Mara Lindqvist" for f in owned["follows"])


def test_mute_and_read(demo_db: Path) -> None:
    run(demo_db, "read", "arXiv:2511.18342v1", "--save")
    feed = as_json(run(demo_db, "feed", "--json", "--limit", "30"))
    assert "2511.18342" not in [s.get("arxiv_id") for s in feed]  # read: out until news
    feed = as_json(run(demo_db, "feed", "--json", "--limit", "30", "--with-read"))
    entry = next(s for s in feed if s.get("arxiv_id") == "2511.18342")
    assert "read" in entry["why"] and "saved" in entry["why"]
    run(demo_db, "mute", "--keyword", "Calibrated")
    titles = [s["title"] for s in as_json(run(demo_db, "feed", "--json", "--limit", "30"))]
    assert not any("Calibrated" in t for t in titles)
    owned = as_json(run(demo_db, "export"))
    assert owned["mutes"]["keyword"] == ["calibrated"]
    assert owned["stories"]["2511.18342"]["saved"]
    run(demo_db, "mute", "--keyword", "Calibrated", "--undo")
    run(demo_db, "mute", code=2)
    run(demo_db, "read", "2511.18342", "--unread")


def test_saved_bibtex_and_digest_marks_read(demo_db: Path) -> None:
    run(demo_db, "read", "2511.18342", "2511.17015", "--save")
    bib = run(demo_db, "export", "--bibtex").stdout
    assert bib.count("@misc{") == 2 and "eprint = {2511.17015}" in bib
    run(demo_db, "read", "2511.18342", "2511.17015", "--unread")
    run(demo_db, "digest", "--since", "2025-11-01")
    feed = as_json(run(demo_db, "feed", "--json", "--limit", "30", "--with-read"))
    entry = next(s for s in feed if s.get("arxiv_id") == "2511.18342")
    assert "read" in entry["why"]


def test_related(demo_db: Path) -> None:
    related = as_json(run(demo_db, "related", "2511.18342", "--json", "--limit", "3"))
    assert 1 <= len(related) <= 3 and all(r["arxiv_id"] != "2511.18342" for r in related)
    assert {"arxiv_id", "title", "score", "matched"} <= set(related[0])
    assert related[0]["arxiv_id"] == "2510.18421"  # the other attention paper
    run(demo_db, "related", "2512.99999", code=1)


def test_embed_search_by_meaning_and_lexical_when_off(demo_db: Path) -> None:
    pytest.importorskip("faiss", reason="needs the semantic extra")
    report = as_json(run(demo_db, "embed", "--json"))
    assert report["encoder"] == "minilm-int8" and report["remaining"] == 0  # the demo embedded all
    hits = as_json(run(demo_db, "search", "benchmark leakage into training data", "--json"))
    assert hits[0]["arxiv_id"] == "2510.03172" and hits[0]["matched"] == ["meaning"]
    # A made-up word has nearest papers too; below the floor they are not results.
    assert "no results" in run(demo_db, "search", "zzzxqy").stdout
    run(demo_db, "settings", "set", "semantic", "off")
    off = run(demo_db, "search", "attention")
    assert "semantic search is off" in off.stderr and "by words" in off.stdout
    assert "no results" in run(demo_db, "search", "benchmark leakage into training data").stdout
    assert "semantic search is off" in run(demo_db, "embed", code=4).stderr
    run(demo_db, "settings", "unset", "semantic")
    assert as_json(run(demo_db, "embed", "--json"))["embedded"] == 0


def test_a_busy_database_is_a_message_and_an_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = tmp_path / "x.db"
    run(db, "init")
    holder = hold_write_lock(db, 1.0)
    run(db, "mute", "--keyword", "benchmark")  # waits for the other writer, then mutes
    holder.join()
    monkeypatch.setenv("LIGHTNEWS_WRITE_WAIT", "0.2")
    holder = hold_write_lock(db, 2.0)
    busy = run(db, "mute", "--keyword", "diffusion", code=4)
    holder.join()
    assert "error: the database is busy" in busy.output and "try again" in busy.output
    assert "Traceback" not in busy.output and "OperationalError" not in busy.output
    with SQLiteStore(db) as store:  # the first mute is stored, the second is not
        assert store.mutes(LOCAL_READER).keyword == {"benchmark"}


def test_a_broken_database_is_a_message_and_an_exit_code(tmp_path: Path) -> None:
    db = tmp_path / "x.db"
    db.write_bytes(b"this is not a database" * 500)
    for args in (["init"], ["feed"], ["settings", "set", "contact", "me@example.org"]):
        broken = run(db, *args, code=4)
        assert "error: the database could not carry this out: file is not a database" in (
            broken.output
        )
        assert "Traceback" not in broken.output


def test_hostile_input_gets_a_clear_message_and_an_exit_code(tmp_path: Path, data: Path) -> None:
    db = tmp_path / "x.db"
    added = as_json(run(db, "sources", "add", "HTTP://Blog.Example/feed.xml", "--json"))
    assert added[0]["url"] == "http://Blog.Example/feed.xml"
    notes = as_json(run(db, "sources", "add", "--notes", "HTTPS://notes.example/p", "--json"))
    assert notes[0]["url"] == "https://notes.example/p"
    refused = run(db, "sources", "add", "javascript:alert(1)", code=2)
    assert "must be an http(s) URL" in refused.output
    deep = tmp_path / "deep.xml"
    deep.write_bytes(b'<?xml version="1.0"?>' + b"<a>" * 100_000 + b"</a>" * 100_000)
    failed = run(db, "ingest", "--kind", "feed", "--from-file", str(deep), code=4)
    assert "not a readable feed" in failed.output
    pack = data / "bluesky" / "getStarterPack.json"
    wrong = run(db, "ingest", "--kind", "bluesky", "--from-file", str(pack), code=4)
    assert "read it as bluesky-starter-pack" in wrong.output


def test_import_summary_counts_stubs_and_cuts(tmp_path: Path) -> None:
    lines = [
        {"id": "2501.00001", "title": "A paper", "abstract": "Text."},
        {"id": "2501.00002", "title": "", "abstract": ""},  # a stub: no title
        {"id": "2501.00003", "title": "T" * 2000, "abstract": "Text."},
    ]
    path = tmp_path / "snapshot.jsonl"
    path.write_text("\n".join(json.dumps(line) for line in lines))
    db = tmp_path / "x.db"
    summary = as_json(run(db, "import", "arxiv-snapshot", str(path), "--json"))
    assert (summary["records"], summary["papers_new"], summary["stubs"]) == (3, 2, 1)
    assert summary["fields_cut"] == 1 and summary["cut"][0].startswith("2501.00003 title: cut")
    shown = run(db, "import", "arxiv-snapshot", str(path)).stdout
    assert "1 stubs (no title yet)" in shown


def test_feed_prints_every_reason_and_atom_carries_them(tmp_path: Path) -> None:
    """The CLI printed three reasons and dropped "87 upvotes" and "2 scholars discuss it"."""
    db = str(tmp_path / "demo.db")
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0", "COLUMNS": "80"})
    assert runner.invoke(cli, ["--db", db, "demo", "--json"]).exit_code == 0
    text = runner.invoke(cli, ["--db", db, "feed", "--limit", "1"]).output
    assert "87 upvotes on Daily Papers" in text and "2 scholars discuss it" in text
    assert "in Elif Brennan's notes" in text  # the last of seven, not cut at 80 columns
    atom = runner.invoke(cli, ["--db", db, "feed", "--limit", "1", "--format", "atom"]).output
    assert "in a post on Northlake AI Lab Blog" in atom


def test_scholar_posts_show_time_and_reposts_their_author(tmp_path: Path) -> None:
    db = str(tmp_path / "demo.db")
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0", "COLUMNS": "80"})
    assert runner.invoke(cli, ["--db", db, "demo", "--json"]).exit_code == 0
    text = runner.invoke(cli, ["--db", db, "scholar", "mara"]).output
    assert "2025-11-25 08:30 · pinned" in text  # the whole moment, not cut
    assert "reposted by Mara Lindqvist, by Priyanka Deshmane @pdeshmane.bsky.social" in text
    assert "thread 1/5" not in text  # "🧵1/5" is in the post already
