"""Reading keeps the reader's place, in a real Chromium, on both backends.

Before: every Save or Mark read reloaded the feed at its top (scroll 3,662 -> 0),
and a story marked read stayed in the feed, lower, with the same button and no
undo. Now, with scripts, the buttons act in place (no reload, the page does not
move); without scripts, the server brings the reader back to the same card; a read
story leaves the feed, says so where it was, once, with an undo. And no page type
is wider than the window at 375 px or 1,280 px.

This module changes the library: its own demo library per backend.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from lightnews.serve.test_accounts import SETTINGS, library, pg_demo_template, pg_demo_url
from lightnews.serve.test_browser import (  # noqa: F401 - fixtures shared with that module
    CHROMIUM,
    base_url,
    browser,
    screenshots,
    shot,
)
from lightnews.serve.test_browser_accounts import signed_in
from lightnews.store import open_store

__all__ = ["library", "pg_demo_template", "pg_demo_url"]  # fixtures used here

P = Any  # a Playwright page (untyped here, as in test_browser)


def _tab(browser: Any, width: int, height: int, scripts: bool = True) -> Any:
    context = browser.new_context(
        viewport={"width": width, "height": height}, java_script_enabled=scripts
    )
    return context.new_page()


def _in_view(p: P, selector: str) -> bool:
    box = p.locator(selector).bounding_box()
    height = p.viewport_size["height"]
    return box is not None and -2 <= box["y"] <= height - 20


def test_save_and_mark_read_act_in_place_and_a_read_story_leaves(
    browser: Any,
    base_url: str,
) -> None:
    p = _tab(browser, 1280, 700)
    p.goto(base_url + "/")
    cards = p.locator("main article.entry")
    assert cards.count() > 8
    target = cards.nth(6)
    key_id = target.get_attribute("id")
    title = target.locator("h2").inner_text()
    target.scroll_into_view_if_needed()
    p.evaluate("window.scrollBy(0, 150); window.__stayed = true")
    where = p.evaluate("window.scrollY")
    assert where > 500
    card = p.locator(f"#{key_id}")
    card.get_by_role("button", name="Save", exact=False).first.click()
    card.get_by_role("button", name="Saved ✓", exact=False).wait_for()
    assert p.evaluate("window.__stayed === true"), "the page was reloaded"
    assert abs(p.evaluate("window.scrollY") - where) <= 2
    card.get_by_role("button", name="Mark read").click()
    card.get_by_role("status").wait_for()
    assert "Marked read" in card.inner_text() and title[:30] in card.inner_text()
    assert p.evaluate("window.__stayed === true")
    assert abs(p.evaluate("window.scrollY") - where) <= 2
    shot(p, "reading-marked")
    p.goto(base_url + "/")
    assert p.locator(f"#{key_id}").count() == 0  # read: out of the feed until news
    p.goto(base_url + "/saved")
    assert title[:30] in p.locator("main").inner_text()  # still saved
    # Undo, in place, from where it was marked.
    p.goto(base_url + "/")
    p.goto(base_url + "/?marked=" + key_id.removeprefix("s-").replace("-", ".", 1))
    aside = p.locator(f"#{key_id}")
    if aside.count():  # the key's own dots: ids like 2511.18342 map back directly
        aside.get_by_role("button", name="Undo").click()
        p.locator(f"#{key_id} h2").wait_for()
    p.goto(base_url + "/")
    assert p.locator(f"#{key_id}").count() == 1  # back in the feed
    p.context.close()


def test_a_search_hit_is_saved_in_place(browser: Any, base_url: str) -> None:
    """Search hits carry Save (before: a title, an id and a date); it acts in place too."""
    p = _tab(browser, 1280, 360)
    p.goto(base_url + "/search?q=attention")
    hits = p.locator("main article.hit")
    assert hits.count() >= 2
    target = hits.last
    key_id = target.get_attribute("id")
    title = target.locator("h2").inner_text()
    assert target.locator("p.authors").inner_text() and target.locator("mark").count()
    target.scroll_into_view_if_needed()
    p.evaluate("window.__stayed = true")
    where = p.evaluate("window.scrollY")
    assert where > 50
    hit = p.locator(f"#{key_id}")
    hit.get_by_role("button", name="Save", exact=False).click()
    hit.get_by_role("button", name="Saved ✓", exact=False).wait_for()
    assert p.evaluate("window.__stayed === true"), "the page was reloaded"
    assert abs(p.evaluate("window.scrollY") - where) <= 2
    shot(p, "search-saved")
    p.goto(base_url + "/saved")
    assert title[:30] in p.locator("main").inner_text()
    p.goto(base_url + "/search?q=attention")
    p.locator(f"#{key_id}").get_by_role("button", name="Saved ✓", exact=False).click()
    p.locator(f"#{key_id} button[value=save]").wait_for()  # unsaved again, in place
    p.context.close()


def test_without_scripts_the_reader_lands_back_on_the_same_card(
    browser: Any,
    base_url: str,
) -> None:
    p = _tab(browser, 1280, 700, scripts=False)
    p.goto(base_url + "/")
    target = p.locator("main article.entry").nth(5)
    key_id = target.get_attribute("id")
    target.scroll_into_view_if_needed()
    target.get_by_role("button", name="Save", exact=False).first.click()
    p.wait_for_load_state()
    assert p.url.endswith(f"#{key_id}")
    assert _in_view(p, f"#{key_id}")
    p.locator(f"#{key_id}").get_by_role("button", name="Mark read").click()
    p.wait_for_load_state()
    assert "marked=" in p.url and p.url.endswith(f"#{key_id}")
    assert _in_view(p, f"#{key_id}") and "Marked read" in p.locator(f"#{key_id}").inner_text()
    p.locator(f"#{key_id}").get_by_role("button", name="Undo").click()
    p.wait_for_load_state()
    assert _in_view(p, f"#{key_id}") and p.locator(f"#{key_id} h2").count() == 1
    p.context.close()


PAGES = (
    "/",
    "/?view=papers",
    "/paper/2511.18342",
    "/scholar/1",
    "/scholar/1?tab=papers",
    "/search?q=attention",
    "/daily",
    "/discussed",
    "/notes",
    "/saved",
    "/scholars",
    "/sources",
    "/suggestions",
    "/item/1",
)
#: Signed in, the account's pages too.
ACCOUNT_PAGES = ("/account", "/admin", "/group")
#: What a failing feed leaves on the Sources page: a long address and a long error, which
#: once made the page 1,621 px wide in a 1,280 px window.
FAILING = "https://feeds.example.org/" + "a-very-long-path-segment-" * 8 + "feed.xml"


def _add_failing_source(location: str) -> None:
    """A feed whose last refresh failed, recorded as the pipeline records a failed fetch."""
    with open_store(location) as store:
        row, _ = store.add_source("feed", FAILING, now="2025-11-20T00:00:00Z")
        store.record_failure(
            row.id,
            f"FetchError: GET {FAILING}?token="
            + "x" * 120
            + " answered 503 Service Unavailable after 3 attempts",
            "2025-11-20T00:00:00Z",
            "2025-11-20T01:00:00Z",
        )


#: What sticks out: of the window (the page scrolls sideways), or of the header, the main
#: column or the footer (a centered column hides that at 1,280 px: "Sign out" did).
STICKING_OUT = """() => {
  const out = [];
  const over = document.documentElement.scrollWidth - window.innerWidth;
  if (over > 0) out.push(`the page, by ${over} px`);
  for (const box of document.querySelectorAll("body > header, body > main, body > footer")) {
    const edge = box.getBoundingClientRect().right;
    for (const el of box.querySelectorAll("*")) {
      const r = el.getBoundingClientRect();
      if (r.width && r.right > edge + 1)
        out.push(`${el.tagName} "${el.textContent.trim().slice(0, 30)}" by ` +
                 `${Math.round(r.right - edge)} px`);
    }
  }
  return out.slice(0, 5);
}"""


def _too_wide(p: P, base: str, paths: tuple[str, ...], width: int, who: str) -> list[Any]:
    """The pages at ``paths`` wider than the window or their column (a screenshot of each)."""
    wide = []
    for path in paths:
        p.goto(base + path)
        over = p.evaluate(STICKING_OUT)
        if over:
            wide.append((width, path, over))
            shot(p, f"wide-{who}-{width}-{path.strip('/').replace('/', '_') or 'home'}")
    return wide


@pytest.mark.parametrize("width", [375, 1280])
def test_no_page_is_wider_than_the_window(
    browser: Any,
    base_url: str,
    demo_library: str,
    width: int,
) -> None:
    if width == 375:
        _add_failing_source(demo_library)
    p = _tab(browser, width, 800)
    wide = _too_wide(p, base_url, PAGES, width, "out")
    p.goto(base_url + "/sources")
    assert "a-very-long-path-segment" in p.locator("main").inner_text()  # the failing one
    assert "answered 503" in p.locator("main").inner_text()
    assert not wide, wide
    p.context.close()


@pytest.fixture
def served(library: str, serving: Any) -> Iterator[str]:
    """An instance with accounts (ada, an admin) and a failing source."""
    from lightnews.serve.app import create_app

    _add_failing_source(library)
    with serving(create_app(library, SETTINGS)) as url:
        yield url


def test_no_page_is_wider_than_the_window_signed_in(
    browser: Any,
    served: str,
) -> None:
    p = signed_in(browser, served, "ada")
    wide = []
    for width in (375, 1280):
        p.set_viewport_size({"width": width, "height": 800})
        wide += _too_wide(p, served, PAGES + ACCOUNT_PAGES, width, "in")
    assert "Sign out" in p.locator("header").inner_text()
    p.goto(served + "/sources")
    assert "answered 503" in p.locator("main").inner_text()  # the failing source is there
    assert not wide, wide
    p.context.close()
