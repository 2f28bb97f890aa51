"""Papers first: chatter and newsletters with no paper never outrank a followed scholar's
papers, and the feed has a view with papers only.

Before: "Packing for San Diego, coffee is on me" was #3 of the demo's feed and #1 of
its digest, and a newsletter with no paper said only "in a post on Kestrel Weekly".
"""

from __future__ import annotations

import json
from typing import Any

from click.testing import CliRunner
from starlette.testclient import TestClient

from lightnews.cli import cli
from lightnews.rank import rank_stories
from lightnews.serve.app import create_app
from lightnews.settings import Settings
from lightnews.store import LOCAL_READER, open_store

SETTINGS = Settings(environ={}).with_overrides(resolve_online=False)


def followed_reason(why: list[str]) -> bool:
    return any(w.endswith("(followed)") for w in why)


def test_an_item_without_a_paper_ranks_below_every_followed_scholars_paper(
    demo_library: str,
) -> None:
    with open_store(demo_library) as store:
        feed = rank_stories(store, LOCAL_READER, limit=None)
    lone = [n for n, s in enumerate(feed) if s.arxiv_id is None]
    assert any("Packing for San Diego" in feed[n].title for n in lone)
    newest = max(s.time for s in feed)
    horizon = [
        n
        for n, s in enumerate(feed)
        if s.arxiv_id and followed_reason(s.why) and s.time >= _days_before(newest, 6)
    ]
    assert horizon, "the demo has followed scholars' recent papers"
    assert max(horizon) < min(lone), [(feed[n].key, feed[n].why) for n in sorted(lone)[:3]]
    letter = next(s for s in feed if s.title.startswith("#46: A reading list"))
    assert not any(w.startswith("in a post on") for w in letter.why), letter.why


def _days_before(moment: str, days: int) -> str:
    from datetime import datetime, timedelta

    then = datetime.fromisoformat(moment.replace("Z", "+00:00")) - timedelta(days=days)
    return then.strftime("%Y-%m-%dT%H:%M:%SZ")


def test_the_papers_only_view_on_every_surface(demo_library: str) -> None:
    runner = CliRunner(env={"LIGHTNEWS_RESOLVE_ONLINE": "0"})

    def cli_feed(*args: str) -> list[dict[str, Any]]:
        done = runner.invoke(cli, ["--db", demo_library, "feed", "--json", "--limit", "80", *args])
        assert done.exit_code == 0, done.output
        entries: list[dict[str, Any]] = json.loads(done.stdout)
        return entries

    everything, papers = cli_feed(), cli_feed("--papers-only")
    assert any("item" in e for e in everything)
    assert papers and all("arxiv_id" in e for e in papers)
    assert [e["arxiv_id"] for e in papers] == [
        e["arxiv_id"] for e in everything if "arxiv_id" in e
    ][: len(papers)]
    assert all("arxiv_id" in e for e in cli_feed("--papers-only", "--newest"))
    with TestClient(create_app(demo_library, SETTINGS), base_url="http://localhost") as client:
        api = client.get("/api/feed", params={"view": "papers"}).json()
        assert api and all("arxiv_id" in e for e in api)
        assert any("item" in e for e in client.get("/api/feed").json())
        refused = client.get("/api/feed", params={"view": "chatter"})
        assert refused.status_code == 400 and "view must be" in refused.json()["error"]
        page = client.get("/", params={"view": "papers"}).text
        assert 'aria-current="page">papers only' in page
        assert "Packing for San Diego" not in page
        assert "Packing for San Diego" in client.get("/").text
        assert "view=papers" in page.split('type="application/atom+xml"')[1][:300]
        atom = client.get("/", params={"view": "papers", "format": "atom"}).text
        assert "<entry>" in atom and "Packing for San Diego" not in atom
