"""Watch a paper: mentions by scholars, new versions, code, each pushed once to every target.

Push targets are real local servers counting what they receive: a webhook
and an ntfy topic (HTTP) and an SMTP server (aiosmtpd).
"""

from __future__ import annotations

import contextlib
import re
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import orjson
from click.testing import CliRunner
from starlette.testclient import TestClient

from lightnews.deliver.test_digest import Inbox, smtp  # noqa: F401 - the SMTP server fixture
from lightnews.deliver.watch import code_event, notify, record, start_watching
from lightnews.ingest.listen import replay_file
from lightnews.model import Account, Paper, Version
from lightnews.settings import Settings
from lightnews.sources.jetstream import POST, REPOST
from lightnews.sources.jetstream_fixtures import commit_event, text_record
from lightnews.store import Store
from lightnews.store.network import PushTarget

A = "2505.20295"
SCHOLAR = "did:plc:ggectctbnnfbhajffo242o2o"
BOT = "did:plc:bot1000000000000000000"
STRANGER = "did:plc:stranger000000000000000"


class Counter:
    """An HTTP server taking POSTs: answers ``statuses`` in turn (the last repeating)."""

    def __init__(self, *statuses: int) -> None:
        self.statuses = list(statuses) or [200]
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, format: str, *args: Any) -> None:
                pass

            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                outer.received.append(
                    (self.path, {k.lower(): v for k, v in self.headers.items()}, body)
                )
                index = min(len(outer.received) - 1, len(outer.statuses) - 1)
                with contextlib.suppress(BrokenPipeError, ConnectionResetError):
                    self.send_response(outer.statuses[index])
                    self.send_header("Content-Length", "0")
                    self.end_headers()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}{path}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


def _settings(port: int = 25) -> Settings:
    return Settings(environ={}).with_overrides(
        allow_private_addresses=True,
        smtp_host="127.0.0.1",
        smtp_port=port,
        smtp_from="lightnews@example.org",
    )


def _library(store: Store) -> None:
    now = "2026-12-03T08:00:00Z"
    store.save_papers(
        [
            Paper(
                A,
                title="SelfReflect",
                published="2026-12-01T00:00:00Z",
                versions=[Version(1, "2026-12-01T00:00:00Z")],
            )
        ],
        now,
    )
    scholar = store.create_scholar("Michael Kirchhof", now)
    store.add_identity(scholar, "bluesky-did", SCHOLAR)
    about = "Automated feed of every new arXiv cs.LG paper"
    store.save_accounts([Account("bluesky", BOT, "arxiv-bot.example.org", "cs.LG bot", about)], now)
    store.mark_bot("bluesky", BOT, "describes itself as automated")


def _hear(store: Store, tmp_path: Path, events: list[dict[str, Any]], name: str) -> None:
    path = tmp_path / name
    path.write_bytes(b"\n".join(orjson.dumps(e) for e in events) + b"\n")
    replay_file(store, Settings(environ={}), path)


def _post(text: str) -> dict[str, Any]:
    return text_record(f"{text} arxiv.org/abs/{A}", "2026-12-03T10:00:00.000Z")


def test_each_event_reaches_each_target_once_across_runs(
    store: Store,
    tmp_path: Path,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    hook, topic = Counter(), Counter()
    settings = _settings(port)
    _library(store)
    clock = iter(range(int(time.time() * 1e6), 1 << 62, 1000))
    # Said before anyone watched: never pushed.
    _hear(
        store,
        tmp_path,
        [commit_event(SCHOLAR, next(clock), POST, "3old", _post("Old:"))],
        "before.jsonl",
    )
    assert start_watching(store, "", A) and not start_watching(store, "", A)
    for target in (
        PushTarget("webhook", hook.url("/hook")),
        PushTarget("ntfy", topic.url("/t")),
        PushTarget("email", "reader@example.org"),
    ):
        store.set_push_target(target, "2026-12-03T09:00:00Z")
    try:
        _hear(
            store,
            tmp_path,
            [
                commit_event(SCHOLAR, next(clock), POST, "3new", _post("Now at the poster:")),
                commit_event(BOT, next(clock), POST, "3bot", _post("[cs.LG] SelfReflect")),
                commit_event(STRANGER, next(clock), POST, "3str", _post("cool")),
                commit_event(
                    SCHOLAR,
                    next(clock),
                    REPOST,
                    "3rep",
                    {
                        "$type": REPOST,
                        "createdAt": "2026-12-03T10:00:00Z",
                        "subject": {"uri": f"at://{STRANGER}/{POST}/3str", "cid": "bafy"},
                    },
                ),
            ],
            "after.jsonl",
        )
        store.save_papers(
            [
                Paper(
                    A,
                    title="SelfReflect",
                    published="2026-12-01T00:00:00Z",
                    versions=[
                        Version(1, "2026-12-01T00:00:00Z"),
                        Version(2, "2026-12-05T00:00:00Z"),
                    ],
                )
            ],
            "2026-12-05T01:00:00Z",
        )
        # Another part of Lightnews (code links) hands over what it learned.
        record(store, [code_event(A, "https://github.com/apple/ml-selfreflect", "2026-12-05")])
        first = notify(store, settings)
        second = notify(store, settings)
    finally:
        hook.close()
        topic.close()
    # The scholar's post, the scholar's repost, version 2 (found by notify) and the code
    # (handed over): 4 events x 3 targets.
    assert (first.events, first.sent, first.failed) == (3, 12, 0), first.errors
    assert (second.events, second.sent) == (0, 0)
    kinds = sorted(orjson.loads(body)["event"]["kind"] for _, _, body in hook.received)
    assert kinds == ["code", "mention", "mention", "version"]
    keys = [headers["idempotency-key"] for _, headers, _ in hook.received]
    assert len(set(keys)) == 4 and f"version:{A}:v2" in keys
    assert not any("3bot" in k or "3old" in k or "v1" in k for k in keys)  # bots, old news
    assert len(topic.received) == 4 and len(inbox.messages) == 4
    said = {body.decode() for _, _, body in topic.received}
    assert "Michael Kirchhof reposted a post about arXiv 2505.20295" in said
    assert all(m["To"] == "reader@example.org" for m in inbox.messages)


def test_a_delivery_is_marked_sent_only_once_the_target_took_it(store: Store) -> None:
    hook = Counter(500, 200)
    _library(store)
    start_watching(store, "", A)
    store.set_push_target(PushTarget("webhook", hook.url("/hook")), "2026-12-03T09:00:00Z")
    record(store, [code_event(A, "https://github.com/apple/ml-selfreflect", "2026-12-05")])
    try:
        runs = [notify(store, _settings()) for _ in range(3)]
    finally:
        hook.close()
    assert [(r.sent, r.failed) for r in runs] == [(0, 1), (1, 0), (0, 0)]
    assert "HTTP 500" in runs[0].errors[0] and len(hook.received) == 2


def test_watch_commands_and_button(tmp_path: Path) -> None:
    from lightnews.cli import cli
    from lightnews.serve.app import create_app
    from lightnews.store import SQLiteStore

    db = tmp_path / "watch.db"
    with SQLiteStore(db) as store:
        _library(store)
    runner = CliRunner()
    result = runner.invoke(
        cli, ["--db", str(db), "watch", f"https://arxiv.org/abs/{A}v2", "--json"]
    )
    assert result.exit_code == 0 and orjson.loads(result.output)["watching"] == [A]
    assert runner.invoke(cli, ["--db", str(db), "unwatch", A]).output.startswith("no longer")
    bad = runner.invoke(cli, ["--db", str(db), "push", "add", "webhook", "ftp://x"])
    assert bad.exit_code == 2 and "http(s) URL" in bad.output
    added = runner.invoke(cli, ["--db", str(db), "push", "add", "ntfy", "https://ntfy.sh/t"])
    assert added.exit_code == 0
    listed = runner.invoke(cli, ["--db", str(db), "push", "list", "--json"])
    assert orjson.loads(listed.output) == [{"kind": "ntfy", "address": "https://ntfy.sh/t"}]
    app = create_app(db, Settings(environ={}))
    with TestClient(app, base_url="http://localhost") as client:
        page = client.get(f"/paper/{A}").text
        token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page)
        assert token and ">Watch</button>" in page
        form = {"csrf_token": token.group(1), "paper": A, "action": "watch"}
        done = client.post("/watch", data=form, follow_redirects=False)
        assert done.status_code == 303 and done.headers["location"] == f"/paper/{A}"
        assert ">Stop watching</button>" in client.get(f"/paper/{A}").text
        refused = client.post("/watch", data={"paper": A, "action": "watch"})
        assert refused.status_code == 403  # no token: refused like every other form
        missing = client.post("/watch", data={**form, "paper": "2401.99999"})
        assert missing.status_code == 404
    with SQLiteStore(db) as store:
        assert store.watched("") == {A: {""}}


def _parts(message: Any) -> tuple[str, str]:
    """The decoded plain-text and HTML parts of an e-mail."""
    found = {
        p.get_content_type(): p.get_payload(decode=True).decode()
        for p in message.walk()
        if p.get_content_type() in ("text/plain", "text/html")
    }
    return found["text/plain"], found["text/html"]


def test_watch_events_go_into_the_next_digest_once(
    store: Store,
    tmp_path: Path,
    smtp: tuple[Inbox, int],
) -> None:
    from datetime import UTC, datetime, timedelta

    import pytest
    from aiosmtpd.controller import Controller

    from lightnews.cli import cli
    from lightnews.deliver.digest import deliver_due_digest, digest_events, library_recipient
    from lightnews.deliver.test_digest import Refusing
    from lightnews.deliver.watch import venue_event
    from lightnews.errors import FetchError
    from lightnews.store.readers import LOCAL_READER

    inbox, port = smtp
    settings = _settings(port).with_overrides(
        digest_to="reader@example.org", digest_schedule="daily 07:00", semantic="off"
    )
    recipient = library_recipient(settings)
    assert recipient is not None
    _library(store)
    clock = iter(range(int(time.time() * 1e6), 1 << 62, 1000))
    _hear(
        store,
        tmp_path,
        [commit_event(SCHOLAR, next(clock), POST, "3old", _post("Old:"))],
        "before.jsonl",
    )
    assert start_watching(store, "", A)
    assert digest_events(store, LOCAL_READER) == []  # what was known is not news
    _hear(
        store,
        tmp_path,
        [
            commit_event(SCHOLAR, next(clock), POST, "3new", _post("Now at the poster:")),
            commit_event(BOT, next(clock), POST, "3bot", _post("[cs.LG] SelfReflect")),
        ],
        "after.jsonl",
    )
    store.save_papers(
        [
            Paper(
                A,
                title="SelfReflect",
                published="2026-12-01T00:00:00Z",
                versions=[Version(1, "2026-12-01T00:00:00Z"), Version(2, "2026-12-05T00:00:00Z")],
            )
        ],
        "2026-12-05T01:00:00Z",
    )
    record(store, [code_event(A, "https://github.com/apple/ml-selfreflect", "2026-12-05")])
    now = datetime.now(UTC)
    # A digest the SMTP server refused tells nothing: its events wait for the next.
    refusing = Refusing()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        refused_port = probe.getsockname()[1]
    controller = Controller(refusing, hostname="127.0.0.1", port=refused_port)
    controller.start()
    try:
        with pytest.raises(FetchError):
            deliver_due_digest(
                store, settings.with_overrides(smtp_port=refused_port), recipient, now
            )
    finally:
        controller.stop()
    assert refusing.tried == 1
    waiting = digest_events(store, LOCAL_READER)
    assert sorted(e.kind for e in waiting) == ["code", "mention", "version"]
    # Delivered: the "Watched papers" section has each event, once.
    outcome = deliver_due_digest(store, settings, recipient, now)
    assert (outcome.status, outcome.events) == ("delivered", 3)
    (message,) = inbox.messages
    assert "3 on papers you watch" in message["Subject"]
    text, html = _parts(message)
    assert "## Watched papers" in text and "<h2>Watched papers</h2>" in html
    assert "Michael Kirchhof posted about arXiv 2505.20295" in text
    assert f"arXiv {A} has a new version (v2)" in text
    assert "https://github.com/apple/ml-selfreflect" in text
    assert "3old" not in text and "3bot" not in text and "cs.LG bot" not in text
    assert digest_events(store, LOCAL_READER) == []
    # The next digest does not repeat them; a new event goes into the one after.
    second = deliver_due_digest(store, settings, recipient, now + timedelta(days=1))
    assert second.events == 0
    assert all("Watched papers" not in "".join(_parts(m)) for m in inbox.messages[1:])
    record(store, [venue_event(A, "ICLR 2026", "accepted", "2026-12-06")])
    third = deliver_due_digest(store, settings, recipient, now + timedelta(days=2))
    assert (third.status, third.events) == ("delivered", 1)
    last = "".join(_parts(inbox.messages[-1]))
    assert f"arXiv {A} at ICLR 2026: accepted" in last and "(v2)" not in last
    # The printed digest: a dry run tells nothing; a printed one tells each event once.
    record(store, [venue_event(A, "ICLR 2026", "oral", "2026-12-07")])
    location = getattr(store, "url", None) or str(store.path)
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0", "LIGHTNEWS_SEMANTIC": "off"})
    digest = ["--db", location, "digest", "--since", "1d"]
    preview = runner.invoke(cli, [*digest, "--dry-run"])
    assert preview.exit_code == 0 and "ICLR 2026: oral" in preview.stdout
    printed = runner.invoke(cli, digest)
    assert printed.exit_code == 0 and "ICLR 2026: oral" in printed.stdout
    again = runner.invoke(cli, digest)
    assert again.exit_code == 0 and "Watched papers" not in again.stdout
    # Another reader watching nothing is told nothing.
    assert store.undigested_events("user:99") == []


def test_an_address_with_a_line_break_is_refused_and_a_stored_one_fails_alone(
    store: Store,
    tmp_path: Path,
    smtp: tuple[Inbox, int],
) -> None:
    """Issue 31: "x@y\\nBcc: ..." would add headers; a stored one blocked every later delivery."""
    from lightnews.cli import cli

    db = tmp_path / "lib.db"
    runner = CliRunner()
    base = ["--db", str(db), "settings", "set"]
    assert runner.invoke(cli, [*base, "smtp_host", "127.0.0.1"]).exit_code == 0
    for bad in (
        "reader@example.org\nBcc:all@example.org",
        "reader@example.org\r\nX:y",
        "reader@example.org\tx",
        "reader @example.org",
    ):
        refused = runner.invoke(cli, ["--db", str(db), "push", "add", "email", bad])
        assert refused.exit_code == 2 and "not an e-mail address" in refused.output, bad
    inbox, port = smtp
    _library(store)
    start_watching(store, "", A)
    for address in (
        "first@example.org",
        "bad@example.org\nBcc: all@example.org",
        "last@example.org",
    ):
        store.set_push_target(PushTarget("email", address), "2026-12-03T09:00:00Z")
    record(store, [code_event(A, "https://github.com/apple/ml-selfreflect", "2026-12-05")])
    report = notify(store, _settings(port))
    assert (report.sent, report.failed) == (2, 1), report.errors
    assert "not an e-mail address" in report.errors[0]
    assert sorted(m["To"] for m in inbox.messages) == ["first@example.org", "last@example.org"]


def test_push_send_says_which_target_failed_and_why_and_push_add_refuses_private_addresses(
    tmp_path: Path,
) -> None:
    """Issue 29: "2 failed" without why, a partial failure exited 0, and a webhook on a
    private address was accepted by `push add` and refused at every send."""
    from lightnews.cli import cli
    from lightnews.store import SQLiteStore

    db = tmp_path / "lib.db"
    with SQLiteStore(db) as store:
        _library(store)
        start_watching(store, "", A)
    runner = CliRunner()

    def run(*args: str) -> Any:
        return runner.invoke(cli, ["--db", str(db), *args])

    good, broken = Counter(200), Counter(500)
    try:
        for url in (
            good.url("/hook"),
            "http://localhost/hook",
            "http://10.0.0.7/hook",
            "http://[::ffff:127.0.0.1]/hook",
        ):
            refused = run("push", "add", "webhook", url)
            assert refused.exit_code == 2, (url, refused.output)
            assert "not a public address" in refused.output and "allow_private" in refused.output
        assert run("push", "list", "--json").output.strip() == "[]"
        assert run("settings", "set", "allow_private_addresses", "true").exit_code == 0
        for url in (good.url("/hook"), broken.url("/hook")):
            assert run("push", "add", "webhook", url).exit_code == 0
        with SQLiteStore(db) as store:
            record(store, [code_event(A, "https://github.com/apple/ml-selfreflect", "2026-12-05")])
        partial = run("push", "send")
        assert partial.exit_code == 3, partial.output
        assert "1 messages sent, 1 failed" in partial.stdout
        assert f"failed: webhook {broken.url('/hook')}: HTTP 500" in partial.stderr
        assert good.url("/hook") not in partial.stderr
        # The instance stops allowing private addresses: the stored one fails, saying why.
        assert run("settings", "set", "allow_private_addresses", "false").exit_code == 0
        failed = run("push", "send", "--json")
        assert failed.exit_code == 4, failed.output
        errors = orjson.loads(failed.stdout)["errors"]
        assert len(errors) == 1 and errors[0].startswith(f"webhook {broken.url('/hook')}: ")
        assert "not a public address" in errors[0]
    finally:
        good.close()
        broken.close()
    assert len(good.received) == 1 and len(broken.received) == 1


def _location(store: Store) -> str:
    """Where the CLI finds ``store``'s library: its PostgreSQL URL or its SQLite file."""
    url = getattr(store, "url", None)
    return str(url) if url else str(store.path)


def test_watches_lists_the_readers_watches(store: Store) -> None:
    """Issue 29: there was no list of watches."""
    from lightnews.cli import cli

    _library(store)
    runner = CliRunner()
    db = ["--db", _location(store)]
    empty = runner.invoke(cli, [*db, "watches"])
    assert empty.exit_code == 0 and "no watched papers" in empty.stdout
    assert runner.invoke(cli, [*db, "watch", A]).exit_code == 0
    assert runner.invoke(cli, [*db, "watch", "2401.00001"]).exit_code == 0  # not stored yet
    store.set_watch("user:7", "2402.00002", "2026-12-03T09:00:00Z")  # another reader's
    assert runner.invoke(cli, [*db, "push", "add", "ntfy", "https://ntfy.sh/t"]).exit_code == 0
    text = runner.invoke(cli, [*db, "watches"])
    assert text.exit_code == 0, text.output
    assert f"{A}  SelfReflect  (since " in text.stdout and "2401.00001  (since" in text.stdout
    assert "2402.00002" not in text.stdout and "news goes to: ntfy https://ntfy.sh/t" in text.stdout
    listed = orjson.loads(runner.invoke(cli, [*db, "watches", "--json"]).stdout)
    assert sorted((w["paper"], w["title"]) for w in listed["watching"]) == [
        ("2401.00001", None),
        (A, "SelfReflect"),
    ]
    assert listed["targets"] == [{"kind": "ntfy", "address": "https://ntfy.sh/t"}]
