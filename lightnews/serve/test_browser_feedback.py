"""The card controls in a real Chromium: "Not interested" takes a paper out of the feed,
"More like this" is kept for the reader's ranker, and each card shows its score.

This module changes the library: its own demo library per backend.
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
from lightnews.store import LOCAL_READER, open_store

P = Any  # a Playwright page (untyped here, as in test_browser)


def test_not_interested_and_more_like_this_on_the_feed(
    page: P,
    base_url: str,
    demo_library: str,
) -> None:
    p = page
    p.goto(base_url + "/")
    card = p.locator("main article.entry", has_text="Calibrated Abstention for Language Model")
    assert card.count() == 1
    assert card.locator(".score").inner_text().startswith("score ")
    lone = p.locator("main article.entry", has_text="Packing for San Diego")
    assert lone.get_by_role("button", name="Not interested").count() == 0  # papers only
    card.get_by_role("button", name="Not interested in").click()
    card.get_by_role("status").wait_for()  # in place, with an undo
    assert "Not interested: hidden from your feed" in card.inner_text()
    p.goto(base_url + "/")
    assert p.locator("main article.entry", has_text="Calibrated Abstention").count() == 0
    first = p.locator("main article.entry").first
    title = first.locator("h2").inner_text()
    first.get_by_role("button", name="More like").click()
    first.get_by_role("button", name="More like").wait_for()
    shot(p, "feedback")
    with open_store(demo_library) as store:
        said = store.paper_feedback(LOCAL_READER)
        hits = store.papers_by_rowids(list(said))
        assert sorted((hits[row].title, decision) for row, decision in said.items()) == sorted(
            [
                ("Calibrated Abstention for Language Model Judges", "not-interested"),
                (title, "more-like-this"),
            ]
        )
