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

from typing import Any

import pytest

from lightnews.serve.test_browser import (  # noqa: F401 - fixtures shared with that module
    CHROMIUM,
    base_url,
    browser,
    screenshots,
    shot,
)

P = Any  # a Playwright page (untyped here, as in test_browser)


def _tab(browser: Any, width: int, height: int, scripts: bool = True) -> Any:  # noqa: F811
    context = browser.new_context(viewport={"width": width, "height": height},
                                  java_script_enabled=scripts)  # fmt: skip
    return context.new_page()


def _in_view(p: P, selector: str) -> bool:
    box = p.locator(selector).bounding_box()
    height = p.viewport_size["height"]
    return box is not None and -2 <= box["y"] <= height - 20


def test_save_and_mark_read_act_in_place_and_a_read_story_leaves(
    browser: Any, base_url: str  # noqa: F811
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


def test_without_scripts_the_reader_lands_back_on_the_same_card(
    browser: Any, base_url: str  # noqa: F811
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


PAGES = ("/", "/?view=papers", "/paper/2511.18342", "/scholar/1", "/scholar/1?tab=papers",
         "/search?q=attention", "/daily", "/discussed", "/notes", "/saved", "/scholars",
         "/sources", "/suggestions", "/item/1")  # fmt: skip


@pytest.mark.parametrize("width", [375, 1280])
def test_no_page_is_wider_than_the_window(
    browser: Any, base_url: str, width: int  # noqa: F811
) -> None:
    p = _tab(browser, width, 800)
    wide = []
    for path in PAGES:
        p.goto(base_url + path)
        over = p.evaluate("document.documentElement.scrollWidth - window.innerWidth")
        if over > 0:
            wide.append((path, over))
            shot(p, f"wide-{width}-{path.strip('/').replace('/', '_') or 'home'}")
    assert not wide, wide
    p.context.close()
