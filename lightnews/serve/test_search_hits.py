"""Search hits say enough to choose: authors, the abstract's words marked, why, and Save.

Before, a hit showed a title, an id and a date. On the demo library (each
backend), a search's papers carry their authors, a snippet of the abstract
around the query's words with those words marked, why each matched (words,
meaning or both, and which words), and a Save button that saves it and comes
back to the same hit; the JSON API carries the same. A public read-only site
offers no Save.
"""

from __future__ import annotations

import re

from starlette.testclient import TestClient

from lightnews.search import SearchHit, described, parse_query
from lightnews.serve.app import create_app
from lightnews.settings import Settings
from lightnews.store import Store

SETTINGS = Settings(environ={}).with_overrides(resolve_online=False)


def test_a_hit_marks_the_words_it_holds(store: Store) -> None:
    from lightnews.model import Author, Paper

    store.save_papers(
        [
            Paper(
                "2511.00001",
                title="Caching Attention for Long Sequences",
                abstract="We study "
                + "filler words here. " * 30
                + "Our caches keep attention cheap.",
                published="2025-11-01T00:00:00Z",
                authors=[Author(f"Author {n}") for n in range(12)],
            )
        ],
        "2025-11-02T00:00:00Z",
    )
    terms = parse_query("cache attention -filler")
    (hit,) = described(
        store,
        [
            SearchHit(
                "2511.00001",
                "Caching Attention for Long Sequences",
                1.0,
                matched=("words", "meaning"),
            )
        ],
        terms,
    )
    assert hit.authors == tuple(f"Author {n}" for n in range(8)) and hit.author_count == 12
    assert hit.snippet.startswith("…") and hit.snippet.endswith("cheap.")  # around the words
    assert [hit.snippet[a:b] for a, b in hit.highlights] == ["caches", "attention"]
    assert [t for t, marked in hit.title_parts if marked] == ["Caching", "Attention"]
    assert "".join(t for t, _ in hit.snippet_parts) == hit.snippet
    assert hit.words == ("cache", "attention") and hit.why == "words and meaning"
    data = hit.to_json()
    assert data["why"] == "words and meaning" and data["author_count"] == 12
    assert data["highlights"] == [list(span) for span in hit.highlights]


def test_search_page_and_api_show_authors_snippet_why_and_save(fresh_demo: str) -> None:
    with TestClient(create_app(fresh_demo, SETTINGS), base_url="http://localhost") as client:
        found = client.get("/api/search", params={"q": "attention"}).json()["hits"]
        by_words = [h for h in found if "words" in h["matched"]]
        assert by_words and all(h["authors"] and h["author_count"] >= 1 for h in found)
        first = by_words[0]
        assert "attention" in first["words"] and first["why"] in ("words", "words and meaning")
        marked = [first["snippet"][a:b].lower() for a, b in first["highlights"]]
        assert marked and all(m.startswith("attention") for m in marked)

        page = client.get("/search", params={"q": "attention"}).text
        key = re.escape(first["arxiv_id"])
        article = re.search(
            rf'<article class="hit" id="([^"]+)"[^>]*>(?:(?!</article>).)*'
            rf"{key}.*?</article>",
            page,
            re.S,
        )
        assert article, "the hit is an article with an anchor"
        hit = article.group(0)
        assert first["authors"][0] in hit and "<mark>" in hit
        assert f"Matched by {first['why']}: “attention”" in hit
        assert 'aria-label="Save “' in hit and 'name="story" value="' in hit
        token = re.search(r'name="csrf_token" value="([0-9a-f]+)"', page)
        assert token
        back = f"/search?q=attention#{article.group(1)}"
        done = client.post(
            "/mark",
            follow_redirects=False,
            data={
                "csrf_token": token.group(1),
                "story": first["arxiv_id"],
                "action": "save",
                "back": back,
            },
        )
        assert done.status_code == 303 and done.headers["location"] == back
        again = client.get("/search", params={"q": "attention"}).text
        saved = re.search(rf'id="{article.group(1)}".*?</article>', again, re.S)
        assert saved and "Saved ✓" in saved.group(0) and 'value="unsave"' in saved.group(0)
        listed = client.get("/api/saved").json()["saved"]
        assert first["arxiv_id"] in {s.get("arxiv_id") for s in listed}

    public = create_app(fresh_demo, SETTINGS, public_read_only=True)
    with TestClient(public, base_url="http://localhost") as client:
        page = client.get("/search", params={"q": "attention"}).text
        assert "<mark>" in page and "Matched by" in page
        assert 'action="/mark"' not in page and "Saved ✓" not in page  # no one's state either


def test_a_said_item_without_a_date_says_when_it_was_seen(fresh_demo: str) -> None:
    """The demo's notes give no date: the search page does not pass off the day the library
    read them as the day they were written."""
    with TestClient(create_app(fresh_demo, SETTINGS), base_url="http://localhost") as client:
        said = client.get("/api/search", params={"q": "leaderboards", "items": "1"}).json()
        notes = [h for h in said.get("items", []) if h["kind"] == "note"]
        assert notes and all(h["dated"] is False for h in notes)
        page = client.get("/search", params={"q": "leaderboards"}).text
    assert 'title="The item gives no date: when this library first saw it">seen </span>' in page
