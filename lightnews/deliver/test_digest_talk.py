"""The digest's watched papers carry their new posts: real Bluesky posts, a real SMTP server.

The library of ``serve/test_conversation`` holds SelfReflect (2505.20295) and
follows its author. Its real posts are replayed through ``listen --from-file``
re-timed to the last hour: the author's announcement thread (the real root
and a real reply of it), a reply and a quote by others, a repost and a
listing bot's post. A later round brings the author's real second thread on
the paper and a stranger's post; another account's real post about a second
watched paper is heard before that watch began. ``lightnews digest --email``
sends each digest to a local aiosmtpd server, which keeps what it accepted.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from email.message import Message
from pathlib import Path
from typing import Any

from click.testing import CliRunner, Result

from lightnews.cli import cli
from lightnews.deliver.test_digest import Inbox, smtp  # noqa: F401 - the SMTP server fixture
from lightnews.deliver.watch import start_watching
from lightnews.serve.test_conversation import (
    BOT,
    OLDER,
    PAPER,
    QUOTER,
    REPLIER,
    REPOSTER,
    ROOT,
    SCHOLAR,
    THREAD_REPLY,
    TITLE,
    Library,
    _post,
    conversation_events,
    holding_the_paper,
    library,  # noqa: F401 - the backend fixture
    replay,
)
from lightnews.sources.jetstream import POST, SERVICE
from lightnews.sources.jetstream_fixtures import identity_event, seed_records

PUBLIC = "https://news.example.org"
#: The author's real second thread on SelfReflect (its root names the paper).
SECOND_ROOT = f"at://{SCHOLAR}/{POST}/3l224rdyz3347"
#: A real post by another account about another paper, heard before it was watched.
OTHER = "did:plc:4paxwuywibwqm2xba7bkeo2c"
OTHER_PAPER = "2508.21184"


def _records(shared: Path) -> dict[str, dict[str, Any]]:
    return {f"at://{s.did}/{POST}/{s.rkey}": s.record for s in seed_records(shared)}


def _rounds(shared: Path) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The first hour's events (all but the old post), and what a later round brings."""
    events = conversation_events(shared)
    older = next(e for e in events if e.get("did") == OLDER and e["kind"] == "commit")
    first = [e for e in events if e is not older]
    later = [
        _post(SCHOLAR, "3l224rdyz3347", _records(shared)[SECOND_ROOT], 5),
        _post(OLDER, "3lolder000001", older["commit"]["record"], 1),  # the newest, a stranger's
    ]
    return first, later


def _parts(message: Message) -> tuple[str, str]:
    """The decoded plain-text and HTML parts of an e-mail."""
    found = {p.get_content_type(): p.get_payload(decode=True) for p in message.walk()}
    text, html = found["text/plain"], found["text/html"]
    assert isinstance(text, bytes) and isinstance(html, bytes)
    return text.decode(), html.decode()


def _links(text: str, html: str) -> list[str]:
    """Every link target of both parts: Markdown ``](…)`` and HTML ``href``."""
    return re.findall(r"\]\(([^)\s]*)\)", text) + re.findall(r'href="([^"]*)"', html)


def _when(event: dict[str, Any]) -> str:
    """How the digest writes a post's time: its record's, to the minute, in UTC."""
    moment = datetime.fromisoformat(event["commit"]["record"]["createdAt"].replace("Z", "+00:00"))
    return f"{moment.astimezone(UTC):%Y-%m-%d %H:%M} UTC"


def _digest(at: Library, port: int, **env: str) -> Result:
    settings = {
        "LIGHTNEWS_SMTP_HOST": "127.0.0.1",
        "LIGHTNEWS_SMTP_PORT": str(port),
        "LIGHTNEWS_RESOLVE_ONLINE": "0",
        "LIGHTNEWS_SEMANTIC": "off",
        **env,
    }
    result = CliRunner(env=settings).invoke(
        cli,
        ["--db", at.address, "digest", "--since", "1d", "--email", "me@example.org"],
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.output
    return result


def test_the_digest_shows_each_watched_papers_new_posts_once_with_absolute_links(
    library: Library,
    shared: Path,
    tmp_path: Path,
    smtp: tuple[Inbox, int],
) -> None:
    inbox, port = smtp
    store = library.store
    holding_the_paper(store)
    # Heard before the second paper was watched: not news for the digest.
    other = _records(shared)[f"at://{OTHER}/{POST}/3l224rdyz2teq"]
    before = [
        identity_event(OTHER, 1, "shubhendu.bsky.social"),
        _post(OTHER, "3l224rdyz2teq", other, 120),
    ]
    replay(store, before, tmp_path / "before.jsonl")
    assert start_watching(store, "", PAPER) and start_watching(store, "", OTHER_PAPER)
    first, later = _rounds(shared)
    replay(store, first, tmp_path / "first.jsonl")
    store.mark_bot(SERVICE, BOT, "posts only arXiv listings")

    sent = _digest(library, port, LIGHTNEWS_PUBLIC_URL=PUBLIC + "/")
    assert "public_url is not set" not in sent.output
    assert "5 new posts" in sent.output  # the thread's two, the reply, the quote, the repost
    (message,) = inbox.messages
    subject = " ".join(str(message["Subject"]).split())  # unfolded
    assert subject.endswith("2 on papers you watch, 5 new posts about them")  # events, posts
    text, html = _parts(message)
    # The paper's heading links to its story page here; its new posts follow, the
    # followed author first, by name, with the time, the text and a link to each post.
    assert f"### [{TITLE}]({PUBLIC}/paper/{PAPER})" in text
    assert f'<h3><a href="{PUBLIC}/paper/{PAPER}">' in html
    assert "5 new posts by 4 people; 1 post by 1 bot or mirror folded away" in text
    root = next(e for e in first if e.get("commit", {}).get("rkey") == "3l224rdyyyg22")
    byline = f"- **Michael Kirchhof (you follow)** · {_when(root)} · "
    assert byline + "[post](https://bsky.app/profile/mkirchhof.bsky.social/post/3l224rdyyyg22)" in (
        text
    )
    assert "  > Can LLMs access and describe their own internal distributions?" in text
    assert "**Michael Kirchhof (you follow)** (thread, 2 of 2)" in text
    assert THREAD_REPLY.rsplit("/", 1)[1] in text
    assert text.index("Michael Kirchhof (you follow)") < text.index("**@replier.bsky.social**")
    assert "  - **@replier.bsky.social** (reply) · " in text and "  > Congrats! Measuring" in text
    assert "  - **@quoter.bsky.social** (quote) · " in text
    assert "https://bsky.app/profile/quoter.bsky.social/post/3lquote000001" in text
    assert f"  - reposted by {REPOSTER}" in text
    assert "<strong>Michael Kirchhof (you follow)</strong>" in html
    assert "<blockquote>Congrats! Measuring" in html
    # The bot's post is folded away, never shown; what was known before a watch is not news.
    assert "3llisting0001" not in text + html and "Natural idea" not in text + html
    assert "Reading group pick" not in text  # not heard yet
    links = _links(text, html)
    assert links and all(link.startswith("https://") for link in links), links

    # Told once: the next digest has no watched-paper posts until new ones are heard.
    _digest(library, port, LIGHTNEWS_PUBLIC_URL=PUBLIC)
    assert "Watched papers" not in "".join(_parts(inbox.messages[1]))
    replay(store, later, tmp_path / "later.jsonl")
    # A dry run shows them and tells nothing.
    preview = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0", "LIGHTNEWS_SEMANTIC": "off"}).invoke(
        cli,
        ["--db", library.address, "digest", "--since", "1d", "--dry-run"],
        catch_exceptions=False,
    )
    assert "Many treat uncertainty = a number." in preview.stdout
    # Without public_url the command says so, and the links stay absolute (arXiv's).
    third = _digest(library, port)
    assert "public_url is not set" in third.output
    text, html = _parts(inbox.messages[2])
    assert f"### [{TITLE}](https://arxiv.org/abs/{PAPER})" in text
    assert "2 new posts by 2 people" in text and "folded away" not in text
    assert text.index("Many treat uncertainty = a number.") < text.index("Reading group pick")
    assert "Congrats!" not in text and "3l224rdyyyg22" not in text  # told in the first
    assert REPLIER not in text and QUOTER not in text and ROOT not in text
    links = _links(text, html)
    assert links and all(link.startswith("https://") for link in links), links
