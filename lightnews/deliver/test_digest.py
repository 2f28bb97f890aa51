"""The digest: Markdown, HTML and e-mail through a real local SMTP server."""

from __future__ import annotations

import email
import socket
from collections.abc import Iterator
from email.message import Message
from pathlib import Path

import pytest
from aiosmtpd.controller import Controller
from click.testing import CliRunner

from lightnews.cli import cli
from lightnews.store import LOCAL_READER


class Inbox:
    def __init__(self) -> None:
        self.messages: list[Message] = []

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        self.messages.append(email.message_from_bytes(envelope.content))  # type: ignore[attr-defined]
        return "250 OK"


@pytest.fixture
def smtp() -> Iterator[tuple[Inbox, int]]:
    inbox = Inbox()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(inbox, hostname="127.0.0.1", port=port)
    controller.start()
    yield inbox, port
    controller.stop()


def test_digest_markdown_html_and_email(tmp_path: Path, smtp: tuple[Inbox, int]) -> None:
    db = tmp_path / "demo.db"
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0"})
    assert runner.invoke(cli, ["--db", str(db), "demo"]).exit_code == 0
    markdown = runner.invoke(cli, ["--db", str(db), "digest", "--since", "2025-11-01"]).stdout
    assert markdown.startswith("# Lightnews digest") and "Sparse Ring Attention" in markdown
    assert "posted by Mara Lindqvist (followed)" in markdown
    html = runner.invoke(
        cli, ["--db", str(db), "digest", "--since", "2025-11-01", "--format", "html"]
    ).stdout
    assert "<ol>" in html and "<li><p><a href=" in html  # the next stories: seen ones left out
    empty = runner.invoke(cli, ["--db", str(db), "digest", "--since", "1d"]).stdout
    assert "Nothing new" in empty  # the demo's stories are a year old
    inbox, port = smtp
    env = {
        "LIGHTNEWS_SMTP_HOST": "127.0.0.1",
        "LIGHTNEWS_SMTP_PORT": str(port),
        "LIGHTNEWS_SMTP_FROM": "digest@lightnews.example",
        "LIGHTNEWS_RESOLVE_ONLINE": "0",
    }
    sent = CliRunner(env=env).invoke(
        cli, ["--db", str(db), "digest", "--since", "2025-11-01", "--email", "reader@example.org"]
    )
    assert sent.exit_code == 0, sent.output
    (message,) = inbox.messages
    assert message["To"] == "reader@example.org" and "Lightnews digest" in message["Subject"]
    parts = {p.get_content_type() for p in message.walk()}
    assert {"text/plain", "text/html"} <= parts
    bad = runner.invoke(cli, ["--db", str(db), "digest", "--since", "soon"])
    assert bad.exit_code == 2
    nowhere = runner.invoke(cli, ["--db", str(db), "digest", "--email"])
    assert nowhere.exit_code == 2


def test_a_digested_story_is_not_digested_again(tmp_path: Path) -> None:
    db = tmp_path / "demo.db"
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0"})
    runner.invoke(cli, ["--db", str(db), "demo"])
    first = runner.invoke(cli, ["--db", str(db), "digest", "--since", "2025-11-01"]).stdout
    second = runner.invoke(cli, ["--db", str(db), "digest", "--since", "2025-11-01"]).stdout
    assert "Sparse Ring Attention" in first and "Sparse Ring Attention" not in second


class Refusing:
    """An SMTP server that takes the connection and refuses the message."""

    def __init__(self) -> None:
        self.tried = 0

    async def handle_DATA(self, server: object, session: object, envelope: object) -> str:
        self.tried += 1
        return "554 5.7.1 Message refused"


def unread(db: Path) -> bool:
    """No story of the library is marked read."""
    from lightnews.store import SQLiteStore

    store = SQLiteStore(db)
    try:
        return not any(read for read, _ in store.story_states(LOCAL_READER).values())
    finally:
        store.close()


@pytest.fixture
def demo_db(tmp_path: Path) -> Path:
    db = tmp_path / "demo.db"
    CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0"}).invoke(cli, ["--db", str(db), "demo"])
    assert unread(db)
    return db


DIGEST = ["digest", "--since", "2025-11-01"]


def test_no_smtp_settings_leave_every_story_unread(demo_db: Path) -> None:
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0", "LIGHTNEWS_SMTP_HOST": ""})
    result = runner.invoke(cli, ["--db", str(demo_db), *DIGEST, "--email", "me@example.org"])
    assert result.exit_code == 2 and "smtp_host" in result.output
    assert unread(demo_db)
    again = runner.invoke(cli, ["--db", str(demo_db), *DIGEST]).stdout
    assert "Sparse Ring Attention" in again  # the next digest still has the news


def test_a_refusing_server_leaves_every_story_unread(demo_db: Path) -> None:
    refusing = Refusing()
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    controller = Controller(refusing, hostname="127.0.0.1", port=port)
    controller.start()
    try:
        env = {
            "LIGHTNEWS_SMTP_HOST": "127.0.0.1",
            "LIGHTNEWS_SMTP_PORT": str(port),
            "LIGHTNEWS_RESOLVE_ONLINE": "0",
        }
        result = CliRunner(env=env).invoke(
            cli, ["--db", str(demo_db), *DIGEST, "--email", "me@example.org"]
        )
    finally:
        controller.stop()
    assert refusing.tried == 1
    assert result.exit_code == 4 and "could not send the digest" in result.output
    assert "refused" in result.output
    assert unread(demo_db)


def test_a_sent_digest_marks_its_stories_read(demo_db: Path, smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    env = {
        "LIGHTNEWS_SMTP_HOST": "127.0.0.1",
        "LIGHTNEWS_SMTP_PORT": str(port),
        "LIGHTNEWS_RESOLVE_ONLINE": "0",
    }
    sent = CliRunner(env=env).invoke(
        cli, ["--db", str(demo_db), *DIGEST, "--email", "me@example.org"]
    )
    assert sent.exit_code == 0, sent.output
    assert len(inbox.messages) == 1 and not unread(demo_db)
    body = inbox.messages[0].get_payload()[0].get_payload(decode=True).decode()  # type: ignore[index,union-attr]
    assert "Sparse Ring Attention" in body


def test_dry_run_previews_and_marks_nothing(demo_db: Path, smtp: tuple[Inbox, int]) -> None:
    inbox, port = smtp
    env = {
        "LIGHTNEWS_SMTP_HOST": "127.0.0.1",
        "LIGHTNEWS_SMTP_PORT": str(port),
        "LIGHTNEWS_RESOLVE_ONLINE": "0",
    }
    runner = CliRunner(env=env)
    preview = runner.invoke(cli, ["--db", str(demo_db), *DIGEST, "--dry-run"])
    assert preview.exit_code == 0 and "Sparse Ring Attention" in preview.stdout
    mail = runner.invoke(
        cli, ["--db", str(demo_db), *DIGEST, "--email", "me@example.org", "--dry-run"]
    )
    assert mail.exit_code == 0 and "would send" in mail.output and "me@example.org" in mail.output
    assert not inbox.messages and unread(demo_db)
    printed = runner.invoke(cli, ["--db", str(demo_db), *DIGEST])
    assert "Sparse Ring Attention" in printed.stdout and not unread(demo_db)  # printed is seen
