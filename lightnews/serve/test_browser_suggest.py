"""Follow suggestions in a real Chromium: see why, click Follow, and the account is followed.

The demo library's followed scholar Mara Lindqvist reposted Priyanka Deshmane
and wrote three papers with her (her Bluesky account is known by its name), and
replied to another account. The walk: the scholars page links the suggestions;
a suggestion says who and how many; its Follow button (the site's follow form,
with its form token) follows her, and her page says when her first fetch
comes; she is on the scholars page and no longer suggested. This module changes
the library: its own demo library per backend.
"""

from __future__ import annotations

from typing import Any

from lightnews.serve.test_browser import (  # noqa: F401 - fixtures shared with that module
    base_url,
    browser,
    page,
    screenshots,
    shot,
)

P = Any  # a Playwright page (untyped here, as in test_browser)


def test_follow_a_suggestion(page: P, base_url: str) -> None:
    p = page
    p.goto(base_url + "/scholars")
    p.get_by_role("link", name="suggestions of whom to follow").click()
    p.wait_for_url("**/suggestions")
    assert p.locator("main h1").inner_text() == "Whom to follow"
    entry = p.locator("main ol.suggestions > li", has_text="Priyanka Deshmane")
    why = entry.locator(".why").inner_text()
    assert "co-author of 3 papers with Mara Lindqvist you follow" in why
    assert "reposted once by Mara Lindqvist you follow" in why
    assert entry.get_by_role("link", name="Mara Lindqvist").first.get_attribute("href") == (
        "/scholar/1"
    )
    # Already followed scholars are never suggested; nor the listing bot.
    text = p.locator("main").inner_text()
    assert "Tobias" not in text and "listings" not in text and "@maralindqvist" not in text
    shot(p, "suggestions")
    p.get_by_role("button", name="Follow Priyanka Deshmane").click()
    p.wait_for_url("**/scholar/*")
    assert "pdeshmane.bsky.social" in p.locator("main h1").inner_text()
    # The page says when her posts come: no worker runs here, so the next refresh.
    notice = p.get_by_role("status").filter(has_text="First fetch").inner_text()
    assert "First fetch now, on the next lightnews refresh" in notice
    p.get_by_role("link", name="Scholars", exact=True).click()
    p.wait_for_url("**/scholars")
    row = p.locator("main tr", has_text="pdeshmane.bsky.social")
    assert "followed" in row.inner_text()
    assert row.get_by_role("button", name="Unfollow @pdeshmane.bsky.social").is_visible()
    p.goto(base_url + "/suggestions")
    assert "Priyanka Deshmane" not in p.locator("main").inner_text()
    assert "kasantebello.bsky.social" in p.locator("main").inner_text()  # the others stay
    shot(p, "suggestions-after-follow")
