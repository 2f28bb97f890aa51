"""The public read-only mode in a real Chromium, on both backends: no one's private state.

Before: ``serve --public-read-only`` showed Save and Mark read (which answered 403),
and the owner's saved stories and mutes. Now its pages carry no control the
visitor may not use, and none of the owner's saves, reads, mutes or follows list.

This module changes the library: its own demo library per backend.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

import pytest

from lightnews.serve.test_browser import (  # noqa: F401 - fixtures shared with that module
    CHROMIUM,
    base_url,
    browser,
    screenshots,
    shot,
)
from lightnews.settings import Settings

PAGES = (
    "/",
    "/?view=papers",
    "/saved",
    "/scholar/1",
    "/scholar/1?tab=papers",
    "/scholars",
    "/search?q=attention",
    "/daily",
    "/discussed",
    "/notes",
    "/sources",
    "/suggestions",
    "/item/1",
)
#: Buttons that change something: none may be offered to a read-only visitor.
CONTROLS = re.compile(
    r"save|mark read|more like this|not interested|follow|mute|watch|"
    r"sign out|remove|hide|undo",
    re.I,
)
SECRET_WORD = "zebrafish"  # the owner's muted keyword: in no page's text


@pytest.fixture(scope="module")
def public_url(demo_library: str, serving: Any) -> Iterator[str]:
    from lightnews.serve.app import create_app

    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with serving(create_app(demo_library, settings, public_read_only=True)) as url:
        yield url


def test_the_read_only_site_shows_no_private_state_and_no_control(
    browser: Any,
    base_url: str,
    public_url: str,
) -> None:
    owner = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    owner.goto(base_url + "/")
    first = owner.locator("main article.entry").first
    key_id = first.get_attribute("id")
    first.get_by_role("button", name="Save", exact=False).first.click()
    first.get_by_role("button", name="Saved ✓", exact=False).wait_for()
    owner.get_by_label("Mute a keyword").fill(SECRET_WORD)
    owner.get_by_role("button", name="Mute", exact=True).click()
    owner.goto(base_url + "/")
    assert f"keyword “{SECRET_WORD}”" in owner.locator("main").inner_text()
    owner.goto(base_url + "/saved")
    assert owner.locator("main article").count() == 1
    owner.context.close()

    p = browser.new_context(viewport={"width": 1280, "height": 800}).new_page()
    for path in PAGES:
        p.goto(public_url + path)
        text = p.locator("body").inner_text()
        offered = [
            b.inner_text() or b.get_attribute("aria-label") for b in p.locator("button").all()
        ]
        assert [b for b in offered if CONTROLS.search(b)] == [], path
        assert p.locator("form[method=post]").count() == 0, path
        assert SECRET_WORD not in text and "Muted" not in text and "Saved ✓" not in text, path
        assert "Following:" not in text, path
        assert p.locator("a[href='/account'], a[href='/saved']").count() == 0, path
    p.goto(public_url + "/")
    shot(p, "public-feed")
    card = p.locator(f"#{key_id}")
    assert card.count() == 1  # the owner's saved story is in the feed, as anyone's
    assert not re.search(r"\b(saved|read)\b", card.locator(".why").inner_text())
    p.goto(public_url + "/saved")
    assert p.locator("main article").count() == 0
    assert "this read-only instance shows none" in p.locator("main").inner_text()
    p.context.close()
