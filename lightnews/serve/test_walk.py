"""A reader's morning in a real Chromium: the Done-when walk, keyboard only, a phone, axe-core.

The walk: open the feed → expand a summary → open the story → save it → find
it on the saved list → export BibTeX → confirm an attributed paper on a
scholar's page → unfollow; each step asserts what the reader sees. Then the
feed and story page by keyboard alone and at 375 px, and axe-core (the npm
package's ``axe.min.js``, installed by ``.ci/run``; never downloaded here)
run in every page type, with no critical violation allowed.

This module changes the library (saves, decisions, follows): it has its own
demo library, one per backend, and one browser for all its tests.
"""

from __future__ import annotations

import os
import re
from pathlib import Path
from typing import Any

import pytest

from lightnews.serve.test_browser import (  # noqa: F401 - fixtures shared with that module
    base_url,
    browser,
    page,
    screenshots,
    shot,
)

ROOT = Path(__file__).resolve().parents[2]
#: axe-core's browser build: ``$LIGHTNEWS_AXE``, else ``node_modules`` of the checkout.
AXE = Path(os.environ.get("LIGHTNEWS_AXE") or ROOT / "node_modules/axe-core/axe.min.js")

P = Any  # a Playwright page (untyped here, as in test_browser)


def text_of(p: P, selector: str = "main") -> str:
    return str(p.locator(selector).first.inner_text())


def test_the_done_when_walk(page: P, base_url: str, tmp_path: Path) -> None:
    p = page
    # 1. The feed.
    p.goto(base_url + "/")
    assert text_of(p, "main h1") == "Your feed"
    first = p.locator("main article.entry").first
    assert "Sparse Ring Attention" in first.locator("h2").inner_text()
    assert "Mara Lindqvist" in first.locator(".authors").inner_text()
    assert (
        "authored by Mara Lindqvist and Tobias Achterberg-Reyes (followed)"
        in first.locator(".why").inner_text()
    )
    # 2. Expand its summary: two lines become the whole abstract, without script.
    details = first.locator("details.summary")
    closed = details.bounding_box()["height"]
    details.locator("summary").click()
    assert details.get_attribute("open") is not None
    assert details.bounding_box()["height"] > 2 * closed
    assert "recovers most of this gap" in details.inner_text()
    shot(p, "walk-1-feed-expanded")
    # 3. Open the story.
    first.locator("h2 a").click()
    p.wait_for_url("**/paper/2511.18342")
    assert text_of(p, "main h1").startswith("Sparse Ring Attention")
    assert "linked by title, certain" in text_of(p)
    # 4. Save it: the button says so.
    p.get_by_role("button", name=re.compile("^Save “Sparse Ring")).click()
    p.wait_for_url("**/paper/2511.18342")
    saved = p.get_by_role("button", name=re.compile("^Saved ✓"))
    assert saved.get_attribute("aria-pressed") == "true" and saved.inner_text() == "Saved ✓"
    shot(p, "walk-2-story-saved")
    # 5. Find it on the saved list.
    p.get_by_role("link", name="Saved", exact=True).click()
    p.wait_for_url("**/saved")
    assert "1 saved" in text_of(p)
    assert "Sparse Ring Attention" in text_of(p, "main article.entry h2")
    # 6. Export the list as BibTeX.
    with p.expect_download() as download:
        p.get_by_role("link", name="BibTeX", exact=True).click()
    bib = tmp_path / "saved.bib"
    download.value.save_as(bib)
    text = bib.read_text()
    assert text.startswith("@misc{") and "eprint = {2511.18342}" in text
    # 7. Confirm an attributed paper on the scholar's Papers tab.
    p.locator("main article.entry .authors a", has_text="Mara Lindqvist").click()
    p.get_by_role("link", name="Papers", exact=True).click()
    assert "Publications and source records attributed to Mara Lindqvist" in text_of(p)
    confirm = p.get_by_role("button", name=re.compile(r"^Confirm .* is by Mara Lindqvist")).first
    arxiv_id = confirm.get_attribute("aria-label").split()[1]
    confirm.click()
    p.wait_for_url("**tab=papers**")
    entry = p.locator("main article", has=p.locator(f'input[name="paper"][value="{arxiv_id}"]'))
    assert "confirmed for everyone, by local reader" in entry.inner_text()
    shot(p, "walk-3-scholar-confirmed")
    # 8. Unfollow her.
    p.get_by_role("button", name="Unfollow", exact=True).click()
    follow = p.get_by_role("button", name="Follow", exact=True)
    follow.wait_for(state="visible")  # the page after the form's redirect, not the one before
    assert follow.is_visible()
    p.get_by_role("link", name="Scholars", exact=True).click()
    p.wait_for_url("**/scholars")
    again = p.get_by_role("button", name="Follow Mara Lindqvist")
    again.wait_for(state="visible")
    assert again.is_visible()
    shot(p, "walk-4-unfollowed")


def _focus_on(p: P, selector: str, presses: int = 80) -> None:
    """Press Tab until the element matching ``selector`` has the focus."""
    for _ in range(presses):
        if p.evaluate(f"document.activeElement && document.activeElement.matches({selector!r})"):
            return
        p.keyboard.press("Tab")
    raise AssertionError(f"Tab never reached {selector}")


def test_feed_and_story_by_keyboard_alone(page: P, base_url: str) -> None:
    p = page
    p.goto(base_url + "/")
    p.keyboard.press("Tab")
    assert p.evaluate("document.activeElement.textContent") == "Skip to content"
    _focus_on(p, "article.entry details.summary > summary")
    outline = p.evaluate("getComputedStyle(document.activeElement).outlineStyle")
    assert outline != "none"  # the focus is visible
    p.keyboard.press("Enter")
    assert p.locator("article.entry details.summary").first.get_attribute("open") is not None
    _focus_on(p, "article.entry h2 a")
    p.keyboard.press("Enter")
    p.wait_for_url("**/paper/**")
    _focus_on(p, 'button[value="read"]')
    with p.expect_navigation():  # the form posts, then comes back to the same story page
        p.keyboard.press("Enter")
    assert "read" in text_of(p, ".story-actions")
    _focus_on(p, 'button[value="save"], button[value="unsave"]')
    before = p.evaluate("document.activeElement.getAttribute('aria-pressed')")
    with p.expect_navigation():
        p.keyboard.press("Enter")
    after = p.locator(".story-actions button[aria-pressed]").get_attribute("aria-pressed")
    assert after != before  # saved, or unsaved again: the button says which


def test_phone_width(browser: Any, base_url: str) -> None:
    context = browser.new_context(viewport={"width": 375, "height": 812}, is_mobile=True)
    p = context.new_page()
    try:
        for path, name in (("/", "phone-feed"), ("/paper/2511.18342", "phone-story")):
            p.goto(base_url + path)
            wide = p.evaluate("document.documentElement.scrollWidth")
            assert wide <= 375, (path, wide)  # nothing to scroll sideways
            button = p.locator("form.actions button").first.bounding_box()
            assert button["x"] >= 0 and button["x"] + button["width"] <= 375
            shot(p, name)
    finally:
        context.close()


PAGE_TYPES = (
    "/",
    "/paper/2511.18342",
    "/scholar/maralindqvist.bsky.social",
    "/scholar/maralindqvist.bsky.social?tab=papers",
    "/daily",
    "/search?q=attention",
    "/sources",
    "/saved",
    "/scholars",
    "/notes",
    "/no/such/page",
    "/paper/2512.99999",
)


@pytest.mark.skipif(
    not AXE.exists(),
    reason=f"axe-core is not installed ({AXE}): npm install --no-save axe-core@4, as .ci/run does",
)
def test_no_critical_accessibility_violation_on_any_page_type(
    browser: Any,
    base_url: str,
) -> None:
    # The site's policy forbids inline script; axe is put in by the test, so the test lifts it.
    context = browser.new_context(bypass_csp=True)
    p = context.new_page()
    found: dict[str, list[str]] = {}
    try:
        p.goto(base_url + "/paper/2511.18342")
        item = p.locator("main section article a").first.get_attribute("href")
        p.goto(base_url + "/notes")
        notes = p.locator("main li a").first.get_attribute("href")
        for path in (*PAGE_TYPES, item, notes):
            p.goto(base_url + path)
            p.add_script_tag(path=str(AXE))
            result = p.evaluate("axe.run(document, {resultTypes: ['violations']})")
            found[path] = [
                f"{v['id']}: {v['help']}" for v in result["violations"] if v["impact"] == "critical"
            ]
        # The confirmation page before a source is removed.
        p.goto(base_url + "/sources")
        p.get_by_role("button", name=re.compile("^Remove ")).first.click()
        assert "Remove this source?" in text_of(p)
        p.add_script_tag(path=str(AXE))
        result = p.evaluate("axe.run(document, {resultTypes: ['violations']})")
        found["confirm"] = [v["id"] for v in result["violations"] if v["impact"] == "critical"]
    finally:
        context.close()
    assert {path: v for path, v in found.items() if v} == {}
