"""The conversation on a story page, in a real Chromium, through the real server.

The library of ``test_conversation`` (the seed scholar's real thread replayed
through ``listen --from-file`` with a reply, a quote, a repost, a listing bot
and an old post): a reader opens the story and reads who said what, the
thread as one unit, the reply and the quote under it, the bot folded away,
and follows a post's link to Bluesky.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from conftest import SHARED
from lightnews.serve.test_browser import (  # noqa: F401 - fixtures shared with that module
    browser,
    page,
    screenshots,
    shot,
)
from lightnews.serve.test_conversation import PAPER, Library, heard
from lightnews.settings import Settings
from lightnews.store import SQLiteStore

P = Any  # a Playwright page (untyped here, as in test_browser)


@pytest.fixture(scope="module")
def story_url(tmp_path_factory: pytest.TempPathFactory, serving: Any) -> Iterator[str]:
    if not SHARED.is_dir():
        pytest.skip("../shared/fixtures is not present beside this clone (real recordings)")
    from lightnews.serve.app import create_app

    folder = tmp_path_factory.mktemp("conversation")
    path = folder / "lightnews.db"
    with SQLiteStore(path) as store:
        heard(Library(store, str(path)), SHARED, folder)
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    with serving(create_app(str(path), settings)) as url:
        yield f"{url}/paper/{PAPER}"


def test_the_story_page_shows_its_conversation(page: P, story_url: str) -> None:
    p = page
    p.goto(story_url)
    section = p.locator("#conversation")
    assert section.locator("h2").inner_text() == "The conversation on Bluesky"
    count = section.locator("#conversation-count").inner_text()
    assert count.startswith("6 posts by 5 people, 5 this week")
    assert "1 post by 1 bot or mirror folded away" in count
    units = section.locator("article.said")
    assert units.count() == 2
    thread = units.nth(0)  # the followed scholar's thread first, whole, with his name
    assert "thread" in (thread.get_attribute("class") or "")
    assert thread.locator("p.meta", has_text="Thread of 2 posts").is_visible()
    own = thread.locator(":scope > .said-post")
    assert own.count() == 2
    author = own.nth(0).get_by_role("link", name="Michael Kirchhof")
    assert author.get_attribute("href") == "/scholar/1"
    assert "Can LLMs access and describe" in own.nth(0).inner_text()
    assert own.nth(0).locator(".badge-recent").is_visible()
    answers = thread.locator(".answers .said-post")
    assert answers.count() == 2
    assert "replier.bsky.social replied" in answers.nth(0).inner_text()
    assert "quoter.bsky.social quoted it" in answers.nth(1).inner_text()
    link = answers.nth(1).get_by_role("link", name="on Bluesky")
    assert link.get_attribute("href") == (
        "https://bsky.app/profile/quoter.bsky.social/post/3lquote000001"
    )
    assert "Reposted by did:plc:reposterreposterrepost1" in thread.inner_text()
    old = units.nth(1)  # all history: last month's post too, not marked as this week's
    assert "Reading group pick" in old.inner_text()
    assert old.locator(".badge-recent").count() == 0
    assert "Cheap listing" not in section.inner_text()  # the bot's post is folded away
    shot(p, "story-conversation")
