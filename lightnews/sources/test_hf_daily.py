"""Hugging Face Daily Papers: entries, paging day by day, errors, and the papers-page snapshots."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest

from conftest import Hit, RecordedServer, Reply
from lightnews import sources
from lightnews.errors import ParseError, UsageError
from lightnews.ingest.refresh import refresh
from lightnews.ingest.replay import ingest_bytes
from lightnews.model import Request, SourceState, item_extra
from lightnews.settings import Settings
from lightnews.sources import Source
from lightnews.sources.hf_daily import (
    HfDailySource,
    HfPapersFeedSource,
    parse_daily_papers,
    parse_papers_feed,
    split_feed_content,
)
from lightnews.store import Store

API = "https://huggingface.co/api/daily_papers"
TODAY = "2025-10-02"


def _body(data: Path, name: str = "daily_papers.2025-10-02.json") -> bytes:
    return (data / "hf" / name).read_bytes()


def _entries(data: Path) -> list[dict[str, Any]]:
    entries: list[dict[str, Any]] = json.loads(_body(data))
    return entries


def _url(**query: str | int) -> str:
    return API + "?" + "&".join(f"{k}={v}" for k, v in query.items())


@pytest.fixture
def hf_registered(monkeypatch: pytest.MonkeyPatch) -> None:
    """The two kinds as the entry points will register them (pyproject is not ours to edit)."""
    kinds: dict[str, type[Source]] = {
        **sources.registry(),
        "hf-daily": HfDailySource,
        "hf-papers-feed": HfPapersFeedSource,
    }
    monkeypatch.setattr(sources, "registry", lambda: kinds)


def test_entries_become_papers_and_daily_items(data: Path) -> None:
    source = HfDailySource("", {"today": TODAY})
    batch = source.parse(_body(data), SourceState(), url=None)
    assert [p.arxiv_id for p in batch.papers] == ["2509.25454", "2510.00406", "2509.26536"]
    assert len(batch.warnings) == 1 and "'2510.0040'" in batch.warnings[0]
    assert "no valid arXiv id" in batch.warnings[0]
    full, minimal, fallback = batch.items

    # Everything the API sent, in its place.
    paper = batch.papers[0]
    assert paper.title.startswith("DeepSearch: Overcome the Bottleneck") and "\n" not in paper.title
    assert paper.abstract.startswith("Although RLVR has become") and "\n" not in paper.abstract
    assert [a.name for a in paper.authors] == ["Mira Solberg", "Tomás Ilić", "Wen-Li Okafor"]
    assert paper.published == "2025-09-29T20:15:31Z"  # the arXiv date
    assert full.kind == "daily" and full.key == "hf-daily:2025-10-02:2509.25454"
    assert full.url == "https://huggingface.co/papers/2509.25454"
    assert full.paper_id == "2509.25454" and full.title == paper.title
    assert full.published == "2025-10-02T04:23:24Z"  # the featured time, not the arXiv date
    assert full.author == "Ari Kestrel"
    assert full.text.startswith("DeepSearch integrates Monte Carlo Tree Search")  # ai_summary
    assert full.engagement == {"upvotes": 41, "comments": 3, "github_stars": 128}
    assert full.links == [
        "https://huggingface.co/papers/2509.25454",
        "https://arxiv.org/abs/2509.25454",
        "https://github.com/example-lab/DeepSearch",
        "https://example-lab.github.io/deepsearch/",
    ]
    assert full.tags == ["RLVR", "Monte Carlo Tree Search", "credit assignment"]
    assert full.mentions == []  # the item is the paper's own record
    extra = item_extra(full)
    assert extra["featured_day"] == "2025-10-02"
    assert extra["arxiv_published"] == "2025-09-29T20:15:31Z"
    assert extra["submitter"] == {
        "id": "60f1abe7544c2adfd699860c",
        "name": "akestrel",
        "fullname": "Ari Kestrel",
        "avatar_url": "https://cdn-avatars.huggingface.co/v1/production/uploads/"
        "1674929746905-60f1abe7544c2adfd699860c.jpeg",
        "followers": 2817,
    }
    assert extra["github"] == "https://github.com/example-lab/DeepSearch"
    assert extra["github_stars"] == 128
    assert extra["project_page"] == "https://example-lab.github.io/deepsearch/"
    assert extra["organization"] == "Example Lab"
    assert extra["keywords"] == full.tags
    assert extra["author_participating"] is True
    assert extra["thumbnail"].endswith("/papers/2509.25454.png")
    assert extra["claimed_authors"] == [{"name": "Mira Solberg", "user": "msolberg"}]
    assert json.loads(full.payload) == _entries(data)[0]

    # A bare entry: the abstract stands in for the missing AI summary.
    assert minimal.text.startswith("Vision-Language-Action (VLA) models")
    assert minimal.author == "jmbeki"  # empty fullname: the user name
    assert minimal.engagement == {"upvotes": 12, "comments": 0}
    assert minimal.links == [
        "https://huggingface.co/papers/2510.00406",
        "https://arxiv.org/abs/2510.00406",
    ]
    assert minimal.tags == [] and item_extra(minimal)["author_participating"] is False
    for absent in ("github", "github_stars", "project_page", "organization", "keywords"):
        assert absent not in item_extra(minimal)

    # No submittedOnDailyAt: the entry's own publishedAt is when it was featured.
    assert fallback.published == "2025-10-02T06:41:09Z"
    assert fallback.key == "hf-daily:2025-10-02:2509.26536"
    assert fallback.engagement == {"upvotes": 27, "comments": 5}
    assert fallback.links[-1] == "https://github.com/example-ocean/OceanGym"
    assert all("javascript" not in link for link in fallback.links)
    assert "project_page" not in item_extra(fallback)
    assert item_extra(fallback)["organization"] == "example-ocean"
    assert "newFieldFromTheFuture" in json.loads(fallback.payload)


def test_odd_and_broken_answers() -> None:
    source = HfDailySource("", {"today": TODAY})
    empty = source.parse(b"[]", SourceState(), url=_url(date=TODAY, p=0, limit=50))
    assert empty.items == [] and empty.warnings == []  # a day with nothing featured
    odd = source.parse(b'[1, null, {"paper": {}}, {"title": "x"}]', SourceState())
    assert odd.items == [] and len(odd.warnings) == 4
    with pytest.raises(ParseError, match="not JSON"):
        source.parse(b"<!doctype html><title>502</title>", SourceState())
    with pytest.raises(ParseError, match="expected a JSON array of entries, got object"):
        source.parse(b'{"papers": 3}', SourceState())
    with pytest.raises(ParseError, match="empty response"):
        source.parse(b"  ", SourceState())
    # The shape the papers web page embeds is read too.
    page, count = parse_daily_papers(b'{"dailyPapers": [{"paper": {"id": "2502.01341"}}]}')
    assert count == 1 and page.items[0].key == "hf-daily:2502.01341"


def test_error_bodies_are_explained(data: Path) -> None:
    source = HfDailySource("")
    body = _body(data, "error.json")
    message = 'Hugging Face: Invalid date: "2025-13-40". Use the YYYY-MM-DD format.'
    assert source.describe_error(body) == message
    assert source.describe_error(b"<html>Bad gateway</html>") is None
    assert source.describe_error(b"[]") is None
    with pytest.raises(ParseError) as raised:
        source.parse(body, SourceState())
    assert str(raised.value) == message
    assert HfDailySource.host_interval(Settings(environ={})) == {"huggingface.co": 1.0}


def test_first_request_resumes_after_the_cursor() -> None:
    def first(address: str, state: SourceState, **params: Any) -> Request | None:
        return HfDailySource(address, {"today": TODAY, **params}).first_request(state)

    assert first("", SourceState()) == Request(API, {"date": TODAY, "p": 0, "limit": 50})
    three = first("", SourceState(), days=3, limit=20, api_url="http://127.0.0.1:9/api")
    assert three == Request("http://127.0.0.1:9/api", {"date": "2025-09-30", "p": 0, "limit": 20})
    assert first("", SourceState(cursor="2025-09-27"), days=1) is not None
    resumed = first("", SourceState(cursor="2025-09-27"))
    assert resumed is not None and resumed.params["date"] == "2025-09-28"
    far = first("today", SourceState(cursor="2024-01-01"))
    assert far is not None and far.params["date"] == "2025-09-03"  # 30 days at most
    assert first("", SourceState(cursor=TODAY)) is None
    assert first("", SourceState(), limit=1000) == Request(
        API, {"date": TODAY, "p": 0, "limit": 100}
    )
    assert first("", SourceState(), limit="many") == Request(
        API, {"date": TODAY, "p": 0, "limit": 50}
    )
    day = first("2025-09-15", SourceState(cursor="2025-10-01"))
    assert day is not None and day.params == {"date": "2025-09-15", "p": 0, "limit": 50}
    week = first("2025-W40", SourceState())
    assert week is not None and week.params["week"] == "2025-W40"
    month = first("2025-09", SourceState())
    assert month is not None and month.params["month"] == "2025-09"
    assert first("2025-10-03", SourceState()) is None  # not featured yet
    with pytest.raises(UsageError, match="not empty, a day"):
        first("yesterday", SourceState())
    today = HfDailySource("").today
    assert today == datetime.now(UTC).date()


def test_pages_then_days_then_stops_before_today(data: Path) -> None:
    source = HfDailySource("", {"today": TODAY, "limit": 2})
    entries = _entries(data)
    full_page = json.dumps(entries[:2]).encode()
    short_page = json.dumps(entries[2:3]).encode()
    state = SourceState(cursor="2025-09-29")

    first = source.parse(full_page, state, url=_url(date="2025-09-30", p=0, limit=2))
    assert first.next == Request(API, {"date": "2025-09-30", "p": 1, "limit": 2})
    assert first.state is not None and first.state.cursor == "2025-09-29"  # day not finished
    second = source.parse(short_page, first.state, url=_url(date="2025-09-30", p=1, limit=2))
    assert second.next == Request(API, {"date": "2025-10-01", "p": 0, "limit": 2})
    assert second.state is not None and second.state.cursor == "2025-09-30"
    last = source.parse(short_page, second.state, url=_url(date=TODAY, p=0, limit=2))
    assert last.next is None
    # Today's list still grows: the cursor stops the day before, so it is read again.
    assert last.state is not None and last.state.cursor == "2025-10-01"
    assert state.cursor == "2025-09-29"  # the state given is never changed in place

    # A fixed day pages but never moves on; a replayed file never pages.
    fixed = HfDailySource("2025-09-30", {"today": TODAY, "limit": 2})
    paged = fixed.parse(full_page, SourceState(), url=_url(date="2025-09-30", p=0, limit=2))
    assert paged.next is not None and paged.next.params["p"] == 1
    done = fixed.parse(short_page, SourceState(), url=_url(date="2025-09-30", p=1, limit=2))
    assert done.next is None and done.state is not None and done.state.cursor is None
    replay = source.parse(full_page, SourceState(), url="file:///tmp/daily.json")
    assert replay.next is None and replay.state is not None and replay.state.cursor is None


def test_refresh_reads_days_from_a_local_server(
    data: Path,
    server: RecordedServer,
    store: Store,
    settings: Settings,
    hf_registered: None,
) -> None:
    entries = _entries(data)
    days = {
        ("2025-09-30", "0"): entries[:2],
        ("2025-09-30", "1"): entries[2:3],
        ("2025-10-01", "0"): entries[3:],  # only the entry with a broken id
        (TODAY, "0"): entries[1:2],  # featured again: the same item, updated in place
    }

    def answer(hit: Hit) -> Reply:
        key = (hit.query["date"][0], hit.query["p"][0])
        return Reply(200, json.dumps(days[key]).encode(), {"Content-Type": "application/json"})

    url = server.route("/api/daily_papers", answer)
    params = {"api_url": url, "limit": 2, "days": 3, "today": TODAY}
    store.add_source("hf-daily", "", now="2025-10-02T00:00:00Z", params=params)
    clock = lambda: datetime(2025, 10, 2, 12, tzinfo=UTC)  # noqa: E731
    (report,) = refresh(store, settings, clock=clock)
    assert report.pages == 4
    asked = [(h.query["date"][0], h.query["p"][0], h.query["limit"][0]) for h in server.hits]
    assert asked == [
        ("2025-09-30", "0", "2"),
        ("2025-09-30", "1", "2"),
        ("2025-10-01", "0", "2"),
        (TODAY, "0", "2"),
    ]
    # The skipped entry is reported on the source; the rest is stored.
    assert not report.ok and "2510.0040" in (report.error or "")
    assert report.saved.items_new == 3 and report.saved.papers_new == 3
    row = store.list_sources()[0]
    assert row.state.cursor == "2025-10-01" and row.title == "Hugging Face Daily Papers"
    paper = store.get_paper("2509.25454")
    assert paper.title.startswith("DeepSearch") and paper.records

    # The next refresh starts at today again and changes nothing it already has.
    server.hits.clear()
    (again,) = refresh(store, settings, clock=clock, force=True)
    assert [h.query["date"][0] for h in server.hits] == [TODAY]
    assert again.ok and again.saved.items_new == 0


def test_refresh_error_shows_what_hugging_face_said(
    data: Path,
    server: RecordedServer,
    store: Store,
    settings: Settings,
    hf_registered: None,
) -> None:
    url = server.route("/api/daily_papers", Reply(400, _body(data, "error.json")))
    store.add_source("hf-daily", "2025-09-30", now="2025-10-02T00:00:00Z", params={"api_url": url})
    (report,) = refresh(store, settings)
    assert not report.ok and "HTTP 400" in (report.error or "")
    assert "Hugging Face: Invalid date" in (report.error or "")


def test_replayed_file_is_stored(
    data: Path, store: Store, settings: Settings, hf_registered: None
) -> None:
    path = data / "hf" / "daily_papers.2025-10-02.json"
    report = ingest_bytes(store, "hf-daily", path.as_uri(), path.read_bytes(), settings)
    assert report.saved.items_new == 3 and report.saved.papers_new == 3
    assert "2510.0040" in (report.error or "")
    feed = data / "hf" / "papers-feed.json"
    again = ingest_bytes(store, "hf-papers-feed", feed.as_uri(), feed.read_bytes(), settings)
    assert again.saved.items_new == 3 and again.saved.papers_new == 2  # one paper known


def test_papers_feed_fixture(data: Path) -> None:
    batch = HfPapersFeedSource("file:///feed.json").parse(
        _body(data, "papers-feed.json"), SourceState()
    )
    assert batch.title == "Hugging Face Papers"
    assert [i.key for i in batch.items] == [
        "hf-daily:2025-10-02:2509.25454",
        "hf-daily:2026-06-02:2605.30611",
        "hf-daily:2025-02-04:2502.01341",
    ]
    assert len(batch.warnings) == 1 and "'1'" in batch.warnings[0]
    deep, crafter, align = batch.items
    assert deep.title.startswith("DeepSearch: Overcome") and "\n" not in deep.title
    assert deep.text == "DeepSearch integrates Monte Carlo Tree Search into RLVR training."
    assert deep.engagement == {} and deep.published == "2025-10-02T04:23:24Z"
    assert batch.papers[0].abstract.startswith("Although RLVR has become an essential")
    assert item_extra(crafter)["ai_summary"].startswith("Automated systems for generating")
    assert batch.papers[1].abstract.startswith("Scientific figures are among")
    assert item_extra(crafter)["thumbnail"].endswith("2605.30611.png")
    assert align.text == batch.papers[2].abstract and "ai_summary" not in item_extra(align)
    assert all(i.kind == "daily" and i.paper_id for i in batch.items)
    with pytest.raises(ParseError, match="not JSON"):
        parse_papers_feed(b"<rss/>")
    with pytest.raises(ParseError, match="items list"):
        parse_papers_feed(b'{"version": "https://jsonfeed.org/version/1"}')
    with pytest.raises(ParseError, match="line 2 is not JSON"):
        parse_papers_feed(b'{"id": "https://huggingface.co/papers/2502.01341"}\n{cut')


def test_split_feed_content() -> None:
    assert split_feed_content("Plain abstract.") == ("", "Plain abstract.")
    assert split_feed_content("Sum.  \t\tAI-generated summary \t Abs.") == ("Sum.", "Abs.")
    assert split_feed_content("Abstract Sum.  Generated by org/model-1 Abs.") == ("Sum.", "Abs.")
    assert split_feed_content("Abstract  Only the abstract.") == ("", "Only the abstract.")


@pytest.mark.shared
def test_papers_page_snapshots(shared: Path) -> None:
    folder = shared / "corpus/hf-papers"
    total = 0
    for path in sorted((folder / "snapshots").glob("*.json")):
        document = json.loads(path.read_bytes())
        batch = parse_papers_feed(path.read_bytes())
        assert batch.warnings == [] and batch.title == "Hugging Face Papers", path.name
        assert len(batch.items) == len(batch.papers) == len(document["items"]), path.name
        for item, paper in zip(batch.items, batch.papers, strict=True):
            assert item.key == f"hf-daily:{item_extra(item)['featured_day']}:{paper.arxiv_id}"
            assert item.url == f"https://huggingface.co/papers/{paper.arxiv_id}"
            assert paper.title and "  " not in paper.title
            assert "AI-generated summary" not in paper.abstract
            assert "Generated by" not in paper.abstract[:40]
        total += len(batch.items)
    assert total == 263
    july = parse_papers_feed(
        (folder / "snapshots/2025-07-14_2f3f865ca9_hf_papers.json").read_bytes()
    )
    first = july.items[0]
    assert first.key == "hf-daily:2025-07-14:2507.01951"
    assert first.title == "Test-Time Scaling with Reflective Generative Model"
    assert first.text.startswith("MetaStone-S1, a reflective generative model")
    assert july.papers[0].abstract.startswith("We introduce our first reflective generative model")
    # The whole corpus (JSON Lines): one broken item, recorded and skipped.
    corpus = parse_papers_feed((folder / "hf-papers-11k.jsonl").read_bytes())
    assert len(corpus.items) == 11021 and len(corpus.warnings) == 1
