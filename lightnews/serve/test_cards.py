"""Feed cards: time words, authors named and marked, and what the web feed shows of them."""

from __future__ import annotations

import re
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from starlette.testclient import TestClient

from lightnews.normalize.times import iso
from lightnews.serve.app import create_app
from lightnews.serve.cards import AUTHORS_SHOWN, absolute_time, card_authors, relative_time
from lightnews.serve.test_web import same_site
from lightnews.settings import Settings
from lightnews.store import open_store
from lightnews.store.views import PaperAuthorship

NOW = datetime(2025, 11, 28, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize(
    ("moment", "words"),
    [
        ("2025-11-28T11:59:40Z", "just now"),
        ("2025-11-28T11:55:00Z", "5 minutes ago"),
        ("2025-11-28T09:00:00Z", "3 hours ago"),
        ("2025-11-27T12:00:00Z", "1 day ago"),
        ("2025-11-14T12:00:00Z", "2 weeks ago"),
        ("2024-11-01T00:00:00Z", "1 year ago"),
        ("2025-11-20", "1 week ago"),
        ("not a date", ""),
        (None, ""),
    ],
)
def test_relative_time(moment: str | None, words: str) -> None:
    assert relative_time(moment, NOW) == words


def test_a_moment_after_a_still_clock_is_told_by_the_real_one() -> None:
    """A demo library's clock stands at its snapshot; the reader's saves are real time."""
    real = datetime.now(UTC)
    assert relative_time(iso(real - timedelta(minutes=5)), NOW) == "5 minutes ago"
    assert relative_time(iso(real + timedelta(hours=3, minutes=1)), real) == "in 3 hours"


def test_the_demo_reads_as_on_its_own_day(demo_library: str) -> None:
    """Relative times on the web count from the library's clock (the demo's snapshot)."""
    with open_store(demo_library) as store:
        saved = Settings(store.saved_settings(), environ={})
    assert saved.clock  # the demo sets it
    app = create_app(demo_library, saved.with_overrides(resolve_online=False))
    with TestClient(app, base_url="http://localhost") as client:
        same_site(client)
        times = re.findall(r"<time [^>]*>([^<]+)</time>", client.get("/").text)
        assert times and not any("year" in t or t.startswith("in ") for t in times), times
        assert any("hour" in t or "day" in t or "minute" in t for t in times), times
        api = client.get("/api/search", params={"q": "attention", "since": "1w"}).json()
        assert api["hits"]  # a week before the demo's clock holds its papers


def test_absolute_time_keeps_a_date_a_date() -> None:
    assert absolute_time("2025-11-27T19:20:03Z") == "2025-11-27 19:20 UTC"
    assert absolute_time("2025-11-27") == "2025-11-27"


def test_followed_authors_are_always_named_and_marked() -> None:
    many = [PaperAuthorship(1, n, f"Author {n}") for n in range(10)]
    many.append(PaperAuthorship(1, 10, "Ada Follow", scholar_id=7, confidence=0.9))
    many.append(PaperAuthorship(1, 11, "Unsure Match", scholar_id=8, confidence=0.3))
    shown, more = card_authors(many, {7: "Ada Follow", 8: "Unsure Match"}, bar=0.6)
    assert [a.name for a in shown][:AUTHORS_SHOWN] == [f"Author {n}" for n in range(6)]
    assert shown[-1].name == "Ada Follow" and shown[-1].followed and shown[-1].scholar_id == 7
    assert more == 12 - len(shown) == 5  # the unsure match is not named as followed


@pytest.fixture(scope="module")
def client(demo_library: str) -> Iterator[TestClient]:
    app = create_app(demo_library, Settings(environ={}).with_overrides(resolve_online=False))
    with TestClient(app, base_url="http://localhost") as test_client:
        same_site(test_client)
        yield test_client


def _first_card(html: str) -> str:
    start = html.index('<article class="entry"')
    return html[start : html.index("</article>", start)]


def test_a_feed_card_has_what_a_researcher_scans_for(client: TestClient) -> None:
    html = client.get("/").text
    card = _first_card(html)
    assert "Sparse Ring Attention" in card
    # Authors, the followed ones linked to their pages and marked.
    assert re.search(r'<a class="followed" href="/scholar/\d+">Mara Lindqvist</a>', card)
    assert "Wen-Li Hsiao" in card and card.count(">followed</span>") == 2
    # A summary that opens to the abstract, without script.
    assert '<details class="summary"><summary><span class="clamp">Serving language models' in card
    # The only script is the one that keeps the reader's place (progressive, in a file).
    assert "<script" not in html.replace('<script src="/static/reading.js" defer></script>', "")
    # When: relative words, the exact moment in the datetime attribute and in words.
    assert re.search(
        r'<time datetime="2025-11-2\dT[\d:]+Z" title="2025-11-2\d [\d:]+ UTC">'
        r"[^<]+ ago</time>",
        card,
    )
    # Badges: code, Daily Papers with its upvotes, a revised version.
    assert 'href="https://github.com/northlake-ai/ring-attention">code</a>' in card
    assert "Daily Papers · 87▲" in card and ">v2</a>" in card
    # Reasons: every one, linked to what they name.
    why = card[card.index('class="why"') :]
    assert re.search(r'authored by <a href="/scholar/\d+">Mara Lindqvist</a> and <a', why)
    assert re.search(r'in a post on <a href="/item/\d+">Northlake AI Lab Blog</a>', why)
    assert re.search(r'in <a href="/notes/\d+">Elif Brennan&#39;s notes</a>', why)
    assert '<a href="/paper/2511.18342#posts">531 likes and reposts</a>' in why
    # Feeds linked and autodiscovered.
    assert '<link rel="alternate" type="application/atom+xml"' in html
    assert 'href="/?format=jsonfeed"' in html


def test_outgoing_feeds_carry_every_reason(client: TestClient) -> None:
    atom = client.get("/?format=atom").text
    assert "2 scholars discuss it" in atom and "87 upvotes on Daily Papers" in atom
    assert "in Elif Brennan&apos;s notes" in atom or "in Elif Brennan's notes" in atom
    items = client.get("/?format=jsonfeed").json()["items"]
    first = items[0]
    assert first["_lightnews"]["why"][0] == (
        "authored by Mara Lindqvist and Tobias Achterberg-Reyes (followed)"
    )
    assert first["summary"].startswith("Serving language models")
    assert "Mara Lindqvist" in [a["name"] for a in first["authors"]]
    api = client.get("/api/feed").json()[0]
    assert len(api["reasons"]) == len(api["why"]) == 8


def test_save_changes_the_button(client: TestClient) -> None:
    client.post("/mark", data={"story": "2511.17015", "action": "save"})
    card = client.get("/").text
    start = card.index('id="t-2511-17015"')
    button = card[start : card.index("</form>", start)]
    assert 'value="unsave" aria-pressed="true"' in button and "Saved ✓" in button
    client.post("/mark", data={"story": "2511.17015", "action": "unsave"})
    card = client.get("/").text
    start = card.index('id="t-2511-17015"')
    assert 'value="save" aria-pressed="false"' in card[start : card.index("</form>", start)]


def test_the_story_page_offers_actions_and_speaks_in_words(client: TestClient) -> None:
    html = client.get("/paper/2511.18342").text
    # Actions: Save and Mark read as small forms with the token, BibTeX as a download.
    actions = html[html.index('class="story-actions"') :]
    actions = actions[: actions.index("</div>")]
    assert (
        'name="csrf_token"' in actions and 'value="save"' in actions and 'value="read"' in actions
    )
    assert 'href="/paper/2511.18342?format=bibtex"' in actions
    bib = client.get("/paper/2511.18342?format=bibtex")
    assert bib.text.startswith("@misc{") and "2511.18342" in bib.text
    client.post(
        "/mark", data={"story": "2511.18342", "action": "save", "back": "/paper/2511.18342"}
    )
    saved = client.get("/paper/2511.18342").text
    assert 'value="unsave" aria-pressed="true"' in saved and "Saved ✓" in saved
    client.post("/mark", data={"story": "2511.18342", "action": "unsave"})
    # Authors linked to their scholar pages.
    assert re.search(r'<a class="followed" href="/scholar/\d+">Tobias Achterberg-Reyes</a>', html)
    # Confidence in words, the method only in the tooltip.
    assert (
        '<span class="confidence" title="surname-title 0.99">linked by title, certain</span>'
        in html
    )
    text = re.sub(r"<[^>]+>", " ", html)
    assert "surname-title" not in text and "arxiv-url" not in text
    assert text.count("demo:arxiv") == 0  # listing file names are not shown
    # The posts of Mara Lindqvist's thread that name it are one entry. (The third, 3/5,
    # describes its results without naming it: the words-only announcement model linked
    # it; the model with meaning, which a library with the encoder runs, does not.)
    assert "Thread of 2 posts that name it" in html
    # The Hugging Face entry with its counts.
    assert "<strong>87</strong> upvotes · 6 comments" in html
    # The JSON keeps the method and the thread.
    data = client.get("/api/paper/2511.18342").json()
    assert {m["method"] for m in data["mentions"]} >= {"arxiv-url", "surname-title"}
    assert any(r["engagement"].get("upvotes") == 87 for r in data["records"])


def test_confidence_words() -> None:
    from lightnews.serve.story import confidence_words

    assert confidence_words("surname-title", 0.8) == "linked by title, likely"
    assert confidence_words("arxiv-url", 1.0) == "linked by its arXiv link, certain"
    assert confidence_words("fuzzy-title", 0.55) == "linked by title, possible"
    assert confidence_words("listed", 1.0) == "listed there"
    assert confidence_words("something-new", 0.95) == "linked, very likely"
