"""A stranger's page, a rebound host name or a stored link cannot act for the reader."""

from __future__ import annotations

import re
import shutil
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest
from starlette.routing import Route
from starlette.testclient import TestClient

from lightnews.serve.app import create_app
from lightnews.serve.security import SECURITY_HEADERS, link, safe_href
from lightnews.serve.test_web import same_site
from lightnews.settings import Settings

TEMPLATES = Path(__file__).with_name("templates")
# A form that would change something on every POST route if it were carried out.
FORM = {
    "action": "mute",
    "kind": "keyword",
    "keyword": "attention",
    "value": "attention",
    "story": "2511.17015",
    "feed": "https://example.org/evil.xml",
    "category": "cs.CR",
    "remove": "1",
    "handle": "someone.bsky.social",
    "arxiv_author": "Eve Example",
}


@pytest.fixture
def library(demo_database: Path, tmp_path: Path) -> Path:
    copy = tmp_path / "library.db"
    shutil.copy(demo_database, copy)
    return copy


@pytest.fixture
def app_client(library: Path) -> Iterator[TestClient]:
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with TestClient(create_app(library, settings), base_url="http://localhost") as client:
        yield client


def state(db: Path) -> dict[str, list[tuple[object, ...]]]:
    """Everything a form could change, read straight from the database."""
    with sqlite3.connect(db) as conn:
        tables = [
            r[0]
            for r in conn.execute(
                "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE '%fts%' "
                "AND name NOT IN ('settings', 'sqlite_sequence')"
            )
        ]
        return {t: sorted(map(tuple, conn.execute(f"SELECT * FROM {t}")), key=repr) for t in tables}


def post_routes(client: TestClient) -> list[str]:
    paths = [
        re.sub(r"\{[^}]+\}", "1", route.path)
        for route in client.app.routes  # type: ignore[attr-defined]
        if isinstance(route, Route) and "POST" in (route.methods or ())
    ]
    assert len(paths) >= 3, "the app has its form routes"
    return paths


def test_every_post_route_refuses_other_sites_and_tokenless_posts(
    app_client: TestClient, library: Path
) -> None:
    before = state(library)
    token = same_site(app_client)
    for path in post_routes(app_client):
        tokenless = TestClient(app_client.app, base_url="http://localhost")
        assert tokenless.post(path, data=FORM).status_code == 403, path
        tokenless.get("/")  # a cookie, but no token in the form
        assert tokenless.post(path, data=FORM).status_code == 403, path
        wrong = {**FORM, "csrf_token": "0" * 64}
        assert tokenless.post(path, data=wrong).status_code == 403, path
        for header in (
            {"origin": "http://evil.example"},
            {"origin": "null"},
            {"origin": "http://localhost:9999"},  # another port is another origin
            {"referer": "http://evil.example/page"},
            {"sec-fetch-site": "cross-site"},
        ):
            refused = app_client.post(path, data={**FORM, "csrf_token": token}, headers=header)
            assert refused.status_code == 403, (path, header)
            assert "another site" in refused.text
    assert state(library) == before, "nothing changed"
    # The same forms from the site itself are carried out: the guard is not a blanket refusal.
    own = {"origin": "http://localhost"}
    done = app_client.post(
        "/mark", data={**FORM, "csrf_token": token}, headers=own, follow_redirects=False
    )
    assert done.status_code == 303 and state(library) != before


def test_foreign_host_names_get_400(app_client: TestClient) -> None:
    for host in ("evil.example", "127.0.0.1.nip.io", "localhost.evil.example", ""):
        assert app_client.get("/", headers={"host": host}).status_code == 400, host
    for host in ("localhost", "localhost:8080", "127.0.0.1:8080", "[::1]:8080"):
        assert app_client.get("/", headers={"host": host}).status_code == 200, host


def test_allowed_hosts_setting(library: Path) -> None:
    settings = Settings(environ={"LIGHTNEWS_ALLOWED_HOSTS": "news.example.org"})
    with TestClient(create_app(library, settings), base_url="http://news.example.org") as client:
        assert client.get("/").status_code == 200
        assert client.get("/", headers={"host": "localhost"}).status_code == 400


def test_security_headers_on_every_page_type(app_client: TestClient) -> None:
    item = app_client.get("/api/paper/2511.18342").json()["mentions"][0]["item_id"]
    notes = next(s["id"] for s in app_client.get("/api/sources").json() if s["kind"] == "notes")
    paths = [
        "/",
        "/?format=atom",
        "/api/feed",
        "/scholar/maralindqvist.bsky.social",
        "/paper/2511.18342",
        f"/item/{item}",
        "/daily",
        f"/notes/{notes}",
        "/search?q=attention",
        "/sources",
        "/static/site.css",
        "/paper/2512.99999",
        "/api/paper/nonsense",
        "/no/such/page",
    ]
    for path in paths:
        response = app_client.get(path)
        for name, value in SECURITY_HEADERS.items():
            assert response.headers.get(name) == value, (path, name)
        assert "'unsafe-inline'" not in response.headers["content-security-policy"]


def test_no_template_prints_a_stored_url_or_a_tokenless_form() -> None:
    for template in TEMPLATES.glob("*.html"):
        html = template.read_text()
        assert not re.search(r"""(href|src|action)\s*=\s*["']?\{\{""", html), template.name
        for form in re.findall(r"<form[^>]*>", html):
            if 'method="post"' in form:
                after = html[html.index(form) + len(form) :][:40]
                assert after.startswith("{{ csrf_field() }}"), template.name


def test_stored_script_links_never_go_live(library: Path) -> None:
    hostile = [
        "javascript:alert(1)",
        " JaVaScRiPt:alert(2)",
        "data:text/html,<b>x</b>",
        "vbscript:msgbox",
        "java\tscript:alert(3)",
        "//evil.example/x",
    ]
    with sqlite3.connect(library) as conn:  # as if stored by an older, laxer version
        conn.execute(
            "UPDATE items SET url = ?, links = json_array(?, ?, ?, ?, ?, ?)", (hostile[0], *hostile)
        )
        conn.execute(
            "UPDATE items SET extra = json_set(extra, '$.card.uri', ?, '$.github', ?) "
            "WHERE json_type(extra, '$.card') = 'object' OR kind = 'daily'",
            (hostile[1], hostile[2]),
        )
        conn.execute("UPDATE paper_links SET url = ?", (hostile[3],))
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with TestClient(create_app(library, settings), base_url="http://localhost") as client:
        item_ids = [m["item_id"] for m in client.get("/api/paper/2511.18342").json()["mentions"]]
        notes = next(s["id"] for s in client.get("/api/sources").json() if s["kind"] == "notes")
        pages = [
            "/",
            "/scholar/maralindqvist.bsky.social",
            "/paper/2511.18342",
            "/daily",
            f"/notes/{notes}",
            "/search?q=attention",
            "/sources",
        ]
        pages += [f"/item/{i}" for i in item_ids if i]
        for path in pages:
            html = client.get(path).text
            hrefs = re.findall(r"""(?:href|src|action)\s*=\s*["']([^"']*)""", html)
            for href in hrefs:
                assert safe_href(href.replace("&amp;", "&")) is not None, (path, href)
                assert not re.match(r"\s*(javascript|data|vbscript):", href, re.I), (path, href)


@pytest.mark.parametrize(
    "url, safe",
    [
        ("https://arxiv.org/abs/2511.18342", True),
        ("http://example.org/x?y=1#z", True),
        ("HTTPS://EXAMPLE.ORG/", True),
        ("/paper/2511.18342", True),
        ("?page=2", True),
        ("#content", True),
        ("javascript:alert(1)", False),
        ("JAVASCRIPT:alert(1)", False),
        (" javascript:alert(1)", False),
        ("java\nscript:alert(1)", False),
        ("data:text/html;base64,PHNjcmlwdD4=", False),
        ("vbscript:x", False),
        ("//evil.example/", False),
        ("/\\evil.example", False),
        ("https:///nohost", False),
        ("ftp://example.org/", False),
        ("", False),
        (None, False),
        ("http://[::1", False),
    ],
)
def test_safe_href(url: str | None, safe: bool) -> None:
    assert (safe_href(url) is not None) is safe


def test_link_renders_text_alone_when_unsafe() -> None:
    assert str(link("javascript:alert(1)", "<b>x</b>")) == "<span>&lt;b&gt;x&lt;/b&gt;</span>"
    assert str(link("https://a.org/?q=1&r=2", "A")) == '<a href="https://a.org/?q=1&amp;r=2">A</a>'


def test_odd_numbers_and_characters_are_400_not_500(app_client: TestClient) -> None:
    for path in (
        "/item/99999999999999999999999",
        "/item/-1",
        "/notes/1e5",
        "/search?q=attention&page=100000000000000000000000",
        "/scholar/maralindqvist.bsky.social?tab=papers&page=10000000000000000000000",
        "/api/item/٣",
    ):
        assert app_client.get(path).status_code == 400, path
    feed = app_client.get("/search", params={"q": "attention\x01\x0b\x1f", "format": "atom"})
    assert feed.status_code == 200 and feed.headers["content-type"].startswith("application/atom")
