"""The web UI and JSON API on the demo data: every page type renders what it must."""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from lightnews.serve.app import create_app
from lightnews.settings import Settings


@pytest.fixture(scope="module")
def client(demo_library: str) -> Iterator[TestClient]:
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    app = create_app(demo_library, settings)
    with TestClient(app, base_url="http://localhost") as test_client:
        same_site(test_client)
        yield test_client


def same_site(client: TestClient) -> str:
    """Let ``client`` post forms as this site's own pages do: the token from a page."""
    html = client.get("/").text
    token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', html)
    assert token, "the feed page carries a form token"
    client.headers["x-csrf-token"] = token.group(1)
    return token.group(1)


def test_home_feed_explains_every_entry(client: TestClient) -> None:
    page = client.get("/")
    assert page.status_code == 200
    html = page.text
    assert "<main" in html and 'aria-label="Main"' in html and 'role="search"' in html
    text = re.sub(r"<[^>]+>", "", html)
    assert "Sparse Ring Attention" in html and "posted by Mara Lindqvist (followed)" in text
    feed = client.get("/api/feed").json()
    assert feed and all(entry["why"] for entry in feed)


def test_scholar_page_posts_and_papers(client: TestClient) -> None:
    posts = client.get("/scholar/maralindqvist.bsky.social")
    assert posts.status_code == 200
    assert "Pinned" in posts.text and "Reposted by" in posts.text
    assert "followers" in posts.text and "is missing" in posts.text  # the thread's gap
    papers = client.get("/scholar/maralindqvist.bsky.social?tab=papers")
    assert "Publications and source records attributed to Mara Lindqvist" in papers.text
    assert "At least" in papers.text and "https://arxiv.org/abs/" in papers.text
    data = client.get("/api/scholar/maralindqvist.bsky.social").json()
    assert data["records_at_least"] >= 6 and data["posts"][0]["pinned"]


def test_counts_agree_with_their_words(client: TestClient) -> None:
    """One reply, one comment: never "1 replies" (the demo has ones, so this can fail)."""
    pages = {
        path: client.get(path).text
        for path in ("/scholar/1", "/daily", "/scholar/2", "/paper/2511.18342", "/suggestions")
    }
    ones = re.compile(r"\b1 (?:replies|reposts|likes|followers|records|comments|upvotes)\b")
    assert not {path: ones.findall(text) for path, text in pages.items() if ones.search(text)}
    assert "1 reply" in pages["/scholar/1"] and "1 comment" in pages["/daily"]


def test_story_page_groups_everything_that_mentions_it(client: TestClient) -> None:
    page = client.get("/paper/2511.18342")
    assert page.status_code == 200
    for label in ("Blog posts", "Posts", "Notes", "Daily Papers"):
        assert label in page.text
    assert client.get("/api/paper/2511.18342").json()["mentions"]
    assert client.get("/paper/2512.99999").status_code == 404
    assert client.get("/api/paper/nonsense").status_code == 400


def test_search_and_sources(client: TestClient) -> None:
    page = client.get("/search", params={"q": "attention"})
    assert page.status_code == 200 and "Sparse Ring Attention" in page.text
    found = client.get("/api/search", params={"q": "attention"}).json()
    assert found["mode"] in {"hybrid", "lexical"} and found["hits"][0]["arxiv_id"]
    said = found["items"]  # posts, threads, articles and notes, after the papers
    assert said and {h["kind"] for h in said} <= {"post", "thread", "article", "note"}
    assert 'id="said"' in page.text and f'href="{said[0]["link"]}"' in page.text
    assert client.get(said[0]["link"]).status_code == 200
    sources = client.get("/sources")
    assert sources.status_code == 200 and "Northlake AI Lab Blog" in sources.text
    assert client.get("/api/openapi.json").json()["openapi"].startswith("3.")


def test_hostile_content_renders_inert(client: TestClient) -> None:
    for path in ("/", "/paper/2511.07731", "/search?q=%3Cscript%3Ealert(1)%3C/script%3E"):
        html = client.get(path).text
        assert "<script>alert" not in html and "onerror=" not in html


def test_follow_form(client: TestClient, tmp_path: Path) -> None:
    response = client.post(
        "/follow", data={"arxiv_author": "Tobias Achterberg-Reyes"}, follow_redirects=False
    )
    assert response.status_code == 303 and response.headers["location"].startswith("/scholar/")
    assert client.post("/follow", data={}).status_code == 400


def test_feeds_out_parse_back(client: TestClient) -> None:
    import feedparser

    for path in (
        "/?format=atom",
        "/scholar/maralindqvist.bsky.social?format=atom",
        "/search?q=attention&format=atom",
    ):
        response = client.get(path)
        assert response.headers["content-type"].startswith("application/atom+xml")
        parsed = feedparser.parse(response.content)
        assert not parsed.bozo and parsed.entries, path
    home = feedparser.parse(client.get("/?format=atom").content)
    assert "posted by Mara Lindqvist" in home.entries[0].summary
    feed = client.get("/?format=jsonfeed").json()
    assert feed["version"] == "https://jsonfeed.org/version/1.1" and feed["items"]
    from lightnews.sources.feeds import parse_feed

    assert parse_feed(client.get("/?format=jsonfeed").content).items  # our own reader reads it


def test_bibtex(client: TestClient) -> None:
    bib = client.get("/paper/2511.18342?format=bibtex").text
    assert bib.startswith("@misc{lindqvist2025") and "eprint = {2511.18342}" in bib
    assert "archivePrefix = {arXiv}" in bib and "author = {Mara Lindqvist and" in bib


def test_mark_read_and_mute_from_the_feed(client: TestClient) -> None:
    done = client.post(
        "/mark",
        data={"story": "2511.17015", "action": "read", "back": "/?view=papers#s-2511-17015"},
        follow_redirects=False,
    )
    assert done.status_code == 303
    assert done.headers["location"] == "/?view=papers&marked=2511.17015#s-2511-17015"
    assert "2511.17015" not in [s.get("arxiv_id") for s in client.get("/api/feed").json()]
    once = client.get(done.headers["location"]).text  # where it was, with an undo, once
    aside = once.split('id="s-2511-17015"')[1].split("</article>")[0]
    assert "Marked read" in aside and 'value="unread"' in aside
    assert 'id="s-2511-17015"' not in client.get("/").text
    client.post("/mark", data={"story": "2511.17015", "action": "unread"})
    assert "2511.17015" in [s.get("arxiv_id") for s in client.get("/api/feed").json()]
    client.post("/mark", data={"story": "2511.17015", "action": "read"})
    client.post("/mark", data={"action": "mute", "keyword": "leaderboards"})
    assert "LLM Leaderboards" not in client.get("/").text
    assert client.post("/mark", data={"action": "read"}).status_code == 400
    away = client.post(
        "/mark",
        data={
            "action": "unmute",
            "kind": "keyword",
            "value": "leaderboards",
            "back": "//evil.example/",
        },
        follow_redirects=False,
    )
    assert away.headers["location"] == "/"  # never sent off the site
    assert "LLM Leaderboards" in client.get("/").text
    bad = client.post("/mark", data={"action": "mute", "kind": "source", "value": "x"})
    assert bad.status_code == 400


def test_sources_as_opml_parse_back(client: TestClient) -> None:
    from lightnews.sources.opml import parse_opml

    opml = client.get("/sources?format=opml")
    assert opml.headers["content-type"].startswith("text/x-opml")
    feeds = parse_opml(opml.content)
    assert any(f.title == "Northlake AI Lab Blog" for f in feeds)


def test_article_daily_and_notes_pages(client: TestClient) -> None:
    story = client.get("/api/paper/2511.18342").json()
    article = next(m for m in story["mentions"] if m["kind"] == "article")
    page = client.get(f"/item/{article['item_id']}")
    assert page.status_code == 200 and "Papers it names" in page.text
    assert "/paper/2511.18342" in page.text
    daily = client.get("/daily")
    assert daily.status_code == 200 and "upvotes" in daily.text
    data = client.get("/api/daily").json()
    upvotes = [e["engagement"].get("upvotes", 0) for e in data["papers"]]
    assert data["day"] == "2025-11-27" and upvotes == sorted(upvotes, reverse=True)
    sources = client.get("/api/sources").json()
    notes_source = next(s for s in sources if s["kind"] == "notes")
    notes = client.get(f"/notes/{notes_source['id']}")
    assert "papers reviewed" in notes.text and "Wednesday Posters" in notes.text
    assert client.get("/item/999999").status_code == 404


def test_search_filters_on_the_page(client: TestClient) -> None:
    everything = client.get("/api/search", params={"q": "attention"}).json()["hits"]
    robotics = client.get("/api/search", params={"q": "attention", "subject": "cs.RO"}).json()[
        "hits"
    ]
    assert len(robotics) < len(everything)
    page = client.get("/search", params={"q": "attention", "subject": "cs.LG"})
    assert page.status_code == 200 and 'aria-label="Search with filters"' in page.text
    assert client.get("/search", params={"q": "x", "scholar": "Nobody"}).status_code == 404


def test_manage_sources_from_the_page(client: TestClient) -> None:
    client.post("/sources/manage", data={"feed": "https://example.org/new.xml", "folder": "Labs"})
    client.post("/sources/manage", data={"category": "stat.ML"})
    rows = client.get("/api/sources").json()
    added = next(r for r in rows if r["url"] == "https://example.org/new.xml")
    assert added["folder"] == "Labs" and any(r["url"] == "cat:stat.ML" for r in rows)
    asked = client.post("/sources/manage", data={"remove": str(added["id"])})
    assert asked.status_code == 200 and "Remove this source?" in asked.text  # asked first
    assert any(r["url"] == "https://example.org/new.xml" for r in client.get("/api/sources").json())
    client.post("/sources/manage", data={"remove": str(added["id"]), "confirm": "yes"})
    assert all(r["url"] != "https://example.org/new.xml" for r in client.get("/api/sources").json())
    assert client.post("/sources/manage", data={"feed": "ftp://x"}).status_code == 400
