"""Bad input on the web, one case at a time: 400 with the form kept, 404, or a choice page."""

from __future__ import annotations

import html
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.testclient import TestClient

from lightnews.serve.app import create_app
from lightnews.serve.test_web import same_site
from lightnews.settings import Settings


@pytest.fixture(scope="module")
def client(demo_database: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[TestClient]:
    db = tmp_path_factory.mktemp("web-input") / "demo.db"
    shutil.copy(demo_database, db)  # this module writes (a second Mara)
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with TestClient(create_app(db, settings), base_url="http://localhost") as test_client:
        same_site(test_client)
        yield test_client


def error_of(page: str) -> str:
    """The error message a page shows, as a person reads it."""
    found = re.search(r'<p class="error"[^>]*>(.*?)</p>', page, re.S)
    assert found, "the page shows an error"
    return html.unescape(found.group(1))


def scholar_names(client: TestClient) -> list[str]:
    return [s.name for s in client.app.state.store.list_scholars()]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("form", "words"),
    [
        ({"handle": "Yann LeCun"}, ["not a Bluesky handle", 'arXiv author box: "Yann LeCun"']),
        ({"handle": "@not_valid..handle"}, ["not a Bluesky handle", "'_'"]),
        ({"handle": "nodot"}, ["at least one dot"]),
        ({"arxiv_author": "@mara.bsky.social"}, ["follow it as a handle"]),
        ({"arxiv_author": "12345"}, ["not a name"]),
        ({"handle": "mara.bsky.social", "orcid": "1234"}, ["not an ORCID iD"]),
        ({"handle": " ", "arxiv_author": ""}, ["give a Bluesky handle or an arXiv author"]),
    ],
)
def test_follow_form_refuses_with_the_form_kept(
    client: TestClient, form: dict[str, str], words: list[str]
) -> None:
    before = scholar_names(client)
    response = client.post("/follow", data=form, follow_redirects=False)
    assert response.status_code == 400
    message = error_of(response.text)
    for word in words:
        assert word in message, message
    for name in ("handle", "arxiv_author"):
        typed = form.get(name, "").strip()
        if typed:
            assert f'value="{html.escape(typed)}"' in response.text  # kept to correct
    assert 'action="/follow"' in response.text and "<main" in response.text  # the site's page
    assert scholar_names(client) == before


@pytest.mark.parametrize(
    ("params", "words"),
    [
        ({"since": "2025-13-45"}, ["not a date", "month must be in 1..12"]),
        ({"until": "2025-02-30"}, ["day is out of range"]),
        ({"since": "someday"}, ["12h, 1d, 2w, today, yesterday"]),
        ({"since": "2025-12-01", "until": "2025-01-01"}, ["is after"]),
        ({"subject": "cs.XX"}, ["not an arXiv category or archive"]),
        ({"source_kind": "twitter"}, ["not a kind of source"]),
        ({"page": "50"}, ["page 50 is past the last page"]),
        ({"page": "0"}, ["page must be a whole number"]),
    ],
)
def test_search_filters_refused_with_the_form_kept(
    client: TestClient, params: dict[str, str], words: list[str]
) -> None:
    response = client.get("/search", params={"q": "attention", **params})
    past = params.get("page") == "50"  # no such page: 404, with what is wrong
    assert response.status_code == (404 if past else 400)
    message = error_of(response.text)
    for word in words:
        assert word in message, message
    if "page" not in params:
        assert 'aria-label="Search with filters"' in response.text
        assert 'value="attention"' in response.text
        for value in params.values():
            assert f'value="{value}"' in response.text or value == "twitter"
    api = client.get("/api/search", params={"q": "attention", **params})
    if "until" in params and "since" in params:  # the API: no hits, and why
        assert api.status_code == 200 and "nothing can match" in api.json()["note"]
        return
    assert api.status_code == (404 if past else 400) and words[0] in api.json()["error"]


@pytest.mark.parametrize("since", ["2025-11-20", "1d", "yesterday", "today"])
def test_search_dates_accepted(client: TestClient, since: str) -> None:
    response = client.get("/api/search", params={"q": "attention", "since": since})
    assert response.status_code == 200


def test_a_day_that_does_not_exist(client: TestClient) -> None:
    page = client.get("/daily/2025-13-01")
    assert page.status_code == 400 and "month must be in 1..12" in error_of(page.text)
    assert client.get("/api/daily/2025-02-30").status_code == 400
    assert client.get("/daily/yesterday").status_code == 400
    assert client.get("/daily/2025-11-27").status_code == 200


def test_a_scholars_page_past_the_last(client: TestClient) -> None:
    page = client.get("/scholar/maralindqvist.bsky.social", params={"tab": "papers", "page": "5"})
    assert page.status_code == 404
    assert "page 5 is past the end: there is only 1 page" in error_of(page.text)
    assert client.get("/api/scholar/maralindqvist.bsky.social?page=5").status_code == 404
    assert client.get("/scholar/maralindqvist.bsky.social?tab=nonsense").status_code == 400


def test_a_scholar_named_by_digits_that_are_not_a_number(client: TestClient) -> None:
    # "¹" and "²³" are digits to str.isdigit but no int(): they answered 500.
    for who in ("¹", "²³", "٣"):
        assert client.get(f"/api/scholar/{who}").status_code == 404, who
        assert client.get(f"/scholar/{who}").status_code == 404, who


def test_scholar_by_part_of_a_name(client: TestClient) -> None:
    for who in ("Mara", "Lindqvist", "maralind"):
        page = client.get(f"/scholar/{who}")
        assert page.status_code == 200 and "Mara Lindqvist" in page.text, who


def test_several_scholars_matching_give_a_choice(client: TestClient) -> None:
    client.post("/follow", data={"arxiv_author": "Mara Olsen"})
    page = client.get("/scholar/Mara", params={"tab": "papers"})
    assert page.status_code == 300 and "Which one?" in page.text
    choices = re.findall(r'<li><a href="(/scholar/\d+\?tab=papers)">([^<]+)</a>', page.text)
    assert [label for _, label in choices] == [
        "Mara Lindqvist (@maralindqvist.bsky.social)",
        "Mara Olsen",
    ]
    assert all(client.get(href).status_code == 200 for href, _ in choices)
    data = client.get("/api/scholar/mara").json()
    assert [c["label"] for c in data["choices"]][1] == "Mara Olsen"
    search = client.get("/search", params={"q": "attention", "scholar": "mara"})
    assert search.status_code == 300 and "/search?q=attention&amp;scholar=" in search.text


def test_mark_of_an_unknown_story(client: TestClient) -> None:
    unknown = client.post("/mark", data={"story": "2512.99999", "action": "save"})
    assert unknown.status_code == 404 and "not stored" in error_of(unknown.text)
    bad = client.post("/mark", data={"story": "nonsense", "action": "read"})
    assert bad.status_code == 400 and "not a story" in error_of(bad.text)


def test_a_category_that_does_not_exist_is_not_added(client: TestClient) -> None:
    response = client.post("/sources/manage", data={"category": "cs.XX"})
    assert response.status_code == 400 and "not an arXiv category" in error_of(response.text)
    rows = client.get("/api/sources").json()
    assert all(r["url"] != "cat:cs.XX" for r in rows)


def test_a_feed_address_is_checked_as_on_the_command_line(client: TestClient) -> None:
    response = client.post("/sources/manage", data={"feed": "javascript:alert(1)"})
    assert response.status_code == 400 and "must be an http(s) URL" in error_of(response.text)
    client.post("/sources/manage", data={"feed": "HTTPS://Example.org/caps.xml"})
    rows = client.get("/api/sources").json()
    assert any(r["url"] == "https://Example.org/caps.xml" for r in rows)


def test_a_papers_address_opens_its_page(client: TestClient) -> None:
    response = client.get("/paper/https://arxiv.org/abs/2511.18342v2", follow_redirects=False)
    assert response.status_code == 301 and response.headers["location"] == "/paper/2511.18342"


def test_an_empty_date_range_still_checks_the_other_filters(client: TestClient) -> None:
    """Found by schemathesis: nothing can match, but a wrong kind is still a 400."""
    params = {"q": "[", "since": "2w", "until": "1976-03-28", "source_kind": "~þ{"}
    api = client.get("/api/search", params=params)
    assert api.status_code == 400 and "source" in api.json()["error"].lower()
    params["source_kind"] = ""
    assert client.get("/api/search", params=params).json()["hits"] == []
