"""Every page type in a real Chromium, on the demo data, through the real server.

Playwright drives the system Chromium (``/usr/bin/chromium``; Playwright's own
browser download is not used). Screenshots of every page are saved for review
under pytest's temporary folder (``screenshots*`` in ``pytest --basetemp``'s
folder, or the last run's ``/tmp/pytest-of-$USER/pytest-current``), never in the
repository. Other browser test modules reuse the fixtures here.
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lightnews.settings import Settings

CHROMIUM = shutil.which("chromium") or "/usr/bin/chromium"
_shots: list[Path] = []
playwright_api = pytest.importorskip("playwright.sync_api", reason="playwright is not installed")
if not Path(CHROMIUM).exists():  # pragma: no cover - CI installs it
    pytest.skip(
        "no Chromium at /usr/bin/chromium (apt-get install chromium)", allow_module_level=True
    )


@pytest.fixture(scope="module")
def base_url(demo_library: str, serving: Any) -> Iterator[str]:
    from lightnews.serve.app import create_app

    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with serving(create_app(demo_library, settings)) as url:
        yield url


@pytest.fixture(scope="module")
def browser() -> Iterator[object]:
    with playwright_api.sync_playwright() as p:
        chromium = p.chromium.launch(
            executable_path=CHROMIUM,
            headless=True,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--no-first-run",
                "--disable-sync",
            ],
        )
        yield chromium
        chromium.close()


@pytest.fixture
def page(browser: object) -> Iterator[object]:
    context = browser.new_context(viewport={"width": 390, "height": 844})  # type: ignore[attr-defined]
    tab = context.new_page()
    tab.dialogs = []
    tab.on("dialog", lambda dialog: (tab.dialogs.append(dialog.message), dialog.dismiss()))
    yield tab
    context.close()


@pytest.fixture(scope="module", autouse=True)
def screenshots(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Where this module's screenshots go (a pytest temporary folder)."""
    folder = tmp_path_factory.mktemp("screenshots")
    _shots.append(folder)
    yield folder
    _shots.remove(folder)


def shot(page: object, name: str) -> None:
    """Save a screenshot into the folder of the module at work (none: nothing is saved)."""
    if not _shots:
        return
    folder = _shots[-1]
    page.screenshot(path=str(folder / f"{name}.png"), full_page=True)  # type: ignore[attr-defined]


def test_home_feed(page: object, base_url: str) -> None:
    p = page
    p.goto(base_url + "/")  # type: ignore[attr-defined]
    assert p.locator("main h1").inner_text() == "Your feed"  # type: ignore[attr-defined]
    first = p.locator("main article").first  # type: ignore[attr-defined]
    assert "Sparse Ring Attention" in first.inner_text()
    assert "posted by Mara Lindqvist (followed)" in first.locator(".why").inner_text()
    shot(p, "home")
    first.locator("h2 a").click()
    p.wait_for_url("**/paper/2511.18342")  # type: ignore[attr-defined]
    assert "Everything that mentions it" in p.content()  # type: ignore[attr-defined]
    for label in ("Blog posts", "Posts", "Notes", "Daily Papers"):
        assert p.get_by_role("heading", name=label, exact=True).count() == 1  # type: ignore[attr-defined]
    shot(p, "story")


def test_scholar_tabs(page: object, base_url: str) -> None:
    p = page
    p.goto(base_url + "/scholar/maralindqvist.bsky.social")  # type: ignore[attr-defined]
    text = p.locator("main").inner_text()  # type: ignore[attr-defined]
    assert "Pinned" in text and "Reposted by" in text and "followers" in text
    assert "is missing" in text  # a thread's post the feed did not carry
    shot(p, "scholar-posts")
    p.get_by_role("link", name="Papers", exact=True).click()  # type: ignore[attr-defined]
    text = p.locator("main").inner_text()  # type: ignore[attr-defined]
    assert "Publications and source records attributed to Mara Lindqvist" in text
    assert "At least" in text and "Page 1" in text
    shot(p, "scholar-papers")


def test_search_follow_and_sources(page: object, base_url: str) -> None:
    p = page
    p.goto(base_url + "/")  # type: ignore[attr-defined]
    p.get_by_label("Search papers").fill("attention")  # type: ignore[attr-defined]
    p.get_by_role("button", name="Search", exact=True).click()  # type: ignore[attr-defined]
    p.wait_for_url("**/search?q=attention")  # type: ignore[attr-defined]
    assert p.locator("main article").count() >= 2  # type: ignore[attr-defined]
    # A hit names its authors, marks the query's words and says why it matched.
    hit = p.locator("main article.hit").first  # type: ignore[attr-defined]
    assert hit.locator("p.authors").inner_text()
    assert hit.locator("mark").count() >= 1
    assert hit.locator("p.why").inner_text().startswith("Matched by")
    shot(p, "search")
    # Filters stay filled in, and a query sharing no word with a paper finds it by meaning.
    p.get_by_label("Words").fill("cheaper attention for long sequences")  # type: ignore[attr-defined]
    p.get_by_label("Subject").fill("cs.CL")  # type: ignore[attr-defined]
    p.get_by_role("button", name="Filter").click()  # type: ignore[attr-defined]
    p.wait_for_url("**subject=cs.CL**")  # type: ignore[attr-defined]
    assert p.get_by_label("Subject").input_value() == "cs.CL"  # type: ignore[attr-defined]
    main = p.locator("main").inner_text()  # type: ignore[attr-defined]
    if "by words and meaning" in main:  # the semantic extra is installed
        assert "Sparse Ring Attention" in main and "Matched by meaning" in main
    shot(p, "search-by-meaning")
    p.goto(base_url + "/")  # type: ignore[attr-defined]
    p.get_by_label("or arXiv author").fill("Wen-Li Hsiao")  # type: ignore[attr-defined]
    p.get_by_role("button", name="Follow", exact=True).click()  # type: ignore[attr-defined]
    p.wait_for_url("**/scholar/*")  # type: ignore[attr-defined]
    assert p.locator("main h1").inner_text() == "Wen-Li Hsiao"  # type: ignore[attr-defined]
    p.goto(base_url + "/sources")  # type: ignore[attr-defined]
    assert "Northlake AI Lab Blog" in p.locator("table").inner_text()  # type: ignore[attr-defined]
    shot(p, "sources")


def test_hostile_content_is_inert(page: object, base_url: str) -> None:
    p = page
    for path in ("/", "/paper/2511.07731", "/search?q=%3Cimg%20src=x%20onerror=alert(1)%3E"):
        p.goto(base_url + path)  # type: ignore[attr-defined]
    assert p.dialogs == []  # type: ignore[attr-defined]


def test_article_daily_and_notes_pages(page: object, base_url: str) -> None:
    p = page
    p.goto(base_url + "/paper/2511.18342")  # type: ignore[attr-defined]
    p.get_by_role("heading", name="Blog posts", exact=True).wait_for()  # type: ignore[attr-defined]
    # The first of everything that mentions it (the conversation above links to Bluesky).
    p.locator("section[aria-labelledby=mentions-title] article a").first.click()  # type: ignore[attr-defined]
    p.wait_for_url("**/item/*")  # type: ignore[attr-defined]
    assert "Papers it names" in p.locator("main").inner_text()  # type: ignore[attr-defined]
    shot(p, "article")
    p.get_by_role("link", name="Daily papers").click()  # type: ignore[attr-defined]
    assert "upvotes" in p.locator("main").inner_text()  # type: ignore[attr-defined]
    shot(p, "daily")
    p.goto(base_url + "/sources")  # type: ignore[attr-defined]
    p.get_by_role("link", name="NeurIPS 2025").first.click()  # type: ignore[attr-defined]
    text = p.locator("main").inner_text()  # type: ignore[attr-defined]
    assert "papers reviewed" in text and "Wednesday Posters" in text
    shot(p, "notes")


def test_mute_and_unmute_a_keyword_a_scholar_and_a_source(page: object, base_url: str) -> None:
    p = page
    p.goto(base_url + "/")  # type: ignore[attr-defined]
    assert "Sparse Ring Attention" in p.locator("main").inner_text()  # type: ignore[attr-defined]
    p.get_by_label("Mute a keyword").fill("Attention")  # type: ignore[attr-defined]
    p.get_by_role("button", name="Mute", exact=True).click()  # type: ignore[attr-defined]
    main = p.locator("main").inner_text()  # type: ignore[attr-defined]
    assert "Sparse Ring Attention" not in main and "keyword “attention”" in main
    shot(p, "feed-muted")
    p.get_by_role("button", name="Unmute keyword attention").click()  # type: ignore[attr-defined]
    assert "Sparse Ring Attention" in p.locator("main").inner_text()  # type: ignore[attr-defined]

    p.get_by_role("link", name="Mara Lindqvist").first.click()  # type: ignore[attr-defined]
    p.get_by_role("button", name="Mute in my feed").click()  # type: ignore[attr-defined]
    assert "Muted in your feed" in p.locator("main").inner_text()  # type: ignore[attr-defined]
    p.get_by_role("button", name="Unmute").click()  # type: ignore[attr-defined]
    assert "Mute in my feed" in p.locator("main").inner_text()  # type: ignore[attr-defined]

    p.goto(base_url + "/sources")  # type: ignore[attr-defined]
    p.get_by_role("button", name="Mute Northlake AI Lab Blog in the feed").click()  # type: ignore[attr-defined]
    p.wait_for_url("**/sources")  # type: ignore[attr-defined]
    p.goto(base_url + "/")  # type: ignore[attr-defined]
    assert "source “Northlake AI Lab Blog”" in p.locator("main").inner_text()  # type: ignore[attr-defined]
    p.get_by_role("button", name="Unmute source Northlake AI Lab Blog").click()  # type: ignore[attr-defined]
    assert "Muted:" not in p.locator("main").inner_text()  # type: ignore[attr-defined]


def test_security_headers_and_no_policy_violations_on_every_page_type(
    page: object, base_url: str
) -> None:
    from lightnews.serve.security import SECURITY_HEADERS

    p = page
    violations: list[str] = []
    p.on(  # type: ignore[attr-defined]
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    p.goto(base_url + "/paper/2511.18342")  # type: ignore[attr-defined]
    item = p.locator("main section article a").first.get_attribute("href")  # type: ignore[attr-defined]
    scholar = "/scholar/maralindqvist.bsky.social"
    paths = [
        "/",
        scholar,
        scholar + "?tab=papers",
        "/paper/2511.18342",
        item,
        "/daily",
        "/search?q=attention",
        "/sources",
        "/paper/2512.99999",
        "/no/such/page",
    ]
    for path in paths:
        response = p.goto(base_url + path)  # type: ignore[attr-defined]
        headers = response.all_headers()
        for name, value in SECURITY_HEADERS.items():
            assert headers.get(name) == value, (path, name)
        # The stylesheet loads under the policy (no inline style was needed).
        margin = p.evaluate("getComputedStyle(document.body).margin")  # type: ignore[attr-defined]
        assert margin == "0px", path
    assert violations == []


def test_a_forged_form_on_another_local_site_changes_nothing(
    page: object, base_url: str, tmp_path: Path
) -> None:
    """A page served from another loopback port posts a mute form to us, as an attacker would."""
    import http.server

    p = page
    target = base_url + "/mark"
    evil = tmp_path / "index.html"
    evil.write_text(
        f'<form id="f" action="{target}" method="post">'
        '<input name="action" value="mute"><input name="keyword" value="attention">'
        '<input name="csrf_token" value="guessed"></form>'
        "<script>document.getElementById('f').submit()</script>"
    )

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        p.goto(base_url + "/")  # type: ignore[attr-defined]  # the reader has the site open
        with p.expect_response(target) as posted:  # type: ignore[attr-defined]
            p.goto(f"http://127.0.0.1:{server.server_address[1]}/")  # type: ignore[attr-defined]
        assert posted.value.status == 403
        p.goto(base_url + "/")  # type: ignore[attr-defined]
        main = p.locator("main").inner_text()  # type: ignore[attr-defined]
        assert "Sparse Ring Attention" in main and "Muted:" not in main
    finally:
        server.shutdown()
