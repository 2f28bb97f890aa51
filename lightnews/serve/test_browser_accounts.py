"""Two readers in a real Chromium, each in their own browser: their own feed, saves and mutes.

The server is the real one (uvicorn) on a copy of the demo library with two
accounts, on SQLite and on PostgreSQL. Playwright drives the system Chromium
as in ``test_browser``; screenshots go to ``test-artifacts/screenshots``.
"""

from __future__ import annotations

import http.server
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from lightnews.serve.test_accounts import SETTINGS, library, pg_demo_template, pg_demo_url
from lightnews.serve.test_browser import browser, shot
from lightnews.store import open_store

__all__ = ["browser", "library", "pg_demo_template", "pg_demo_url"]  # fixtures used here


@pytest.fixture
def served(library: str, serving: Any) -> Iterator[str]:
    from lightnews.serve.app import create_app

    with serving(create_app(library, SETTINGS)) as url:
        yield url


def signed_in(browser: Any, base: str, name: str) -> Any:
    """A browser of its own (its own cookies), signed in as ``name`` through the form."""
    context = browser.new_context(viewport={"width": 390, "height": 844})
    page = context.new_page()
    page.goto(base + "/")
    page.wait_for_url("**/signin?next=*")
    page.get_by_label("Name").fill(name)
    page.get_by_label("Password").fill(f"{name}'s password")
    page.get_by_role("button", name="Sign in").click()
    page.wait_for_url(base + "/")
    return page


def main_text(page: Any) -> str:
    return str(page.locator("main").inner_text())


def test_two_readers_see_only_their_own_feed_saves_and_mutes(
    browser: Any, served: str, library: str
) -> None:
    ada = signed_in(browser, served, "ada")
    bob = signed_in(browser, served, "bob")
    try:
        for page in (ada, bob):
            assert "Sparse Ring Attention" in main_text(page)
        # bob follows a scholar of his own, saves the first story, mutes a keyword.
        bob.get_by_label("or arXiv author").fill("Wen-Li Hsiao")
        bob.get_by_role("button", name="Follow", exact=True).click()
        bob.wait_for_url("**/scholar/*")
        bob.goto(served + "/")
        bob.locator("main article").first.get_by_role("button", name="Save").click()
        # Saved in place (no reload): wait for the button to say so before going on.
        bob.locator("main article").first.get_by_role("button", name="Saved ✓").wait_for()
        bob.get_by_label("Mute a keyword").fill("diffusion")
        bob.get_by_role("button", name="Mute", exact=True).click()
        # ada mutes another keyword and saves another story.
        ada.get_by_label("Mute a keyword").fill("Attention")
        ada.get_by_role("button", name="Mute", exact=True).click()
        ada.locator("main article").nth(1).get_by_role("button", name="Save").click()
        ada.locator("main article").nth(1).get_by_role("button", name="Saved ✓").wait_for()

        ada.goto(served + "/")
        bob.goto(served + "/")
        shot(ada, "accounts-ada-feed")
        shot(bob, "accounts-bob-feed")
        mine, his = main_text(ada), main_text(bob)
        assert "Sparse Ring Attention" not in mine and "keyword “attention”" in mine
        assert "Sparse Ring Attention" in his and "keyword “diffusion”" in his
        assert "diffusion" not in mine.split("Following:")[0] and "attention”" not in his

        def following(page: Any) -> str:  # cards name authors too: the list of whom one follows
            return str(page.locator("main p.meta", has_text="Following:").inner_text())

        assert "Wen-Li Hsiao" in following(bob) and "Wen-Li Hsiao" not in following(ada)
        first = bob.locator("main article").first
        assert "Sparse Ring Attention" in first.inner_text() and "saved" in first.inner_text()
        # The save button says so ("going by what you saved" may be another card's reason).
        ada_saved = [
            a.inner_text() for a in ada.locator("main article").all() if "Saved ✓" in a.inner_text()
        ]
        bob_saved = [
            a.inner_text() for a in bob.locator("main article").all() if "Saved ✓" in a.inner_text()
        ]
        assert len(ada_saved) == 1 and len(bob_saved) == 1 and ada_saved != bob_saved
        assert "ada" in ada.locator("header").inner_text()
        assert "bob" in bob.locator("header").inner_text()
        with open_store(library) as store:
            a, b = store.get_user("ada").reader, store.get_user("bob").reader
            assert store.mutes(a).keyword == {"attention"}
            assert store.mutes(b).keyword == {"diffusion"}
            assert len([k for k, (_, s) in store.story_states(a).items() if s]) == 1
            assert len([k for k, (_, s) in store.story_states(b).items() if s]) == 1
    finally:
        ada.context.close()
        bob.context.close()


def test_a_forged_form_from_another_local_port_changes_nothing_while_signed_in(
    browser: Any, served: str, library: str, tmp_path: Path
) -> None:
    target = served + "/mark"
    (tmp_path / "index.html").write_text(
        f'<form id="f" action="{target}" method="post">'
        '<input name="action" value="mute"><input name="kind" value="keyword">'
        '<input name="value" value="attention"><input name="csrf_token" value="guessed"></form>'
        "<script>document.getElementById('f').submit()</script>"
    )

    class Quiet(http.server.SimpleHTTPRequestHandler):
        def __init__(self, *args: Any, **kwargs: Any) -> None:
            super().__init__(*args, directory=str(tmp_path), **kwargs)

        def log_message(self, format: str, *args: Any) -> None:
            pass

    evil = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Quiet)
    threading.Thread(target=evil.serve_forever, daemon=True).start()
    ada = signed_in(browser, served, "ada")
    try:
        with ada.expect_response(target) as posted:
            ada.goto(f"http://127.0.0.1:{evil.server_address[1]}/")
        # Another port is the same site: ada's cookies go along, the Origin gives it away.
        assert posted.value.status == 403
        ada.goto(served + "/")
        assert "Muted:" not in main_text(ada)
        with open_store(library) as store:
            assert not store.mutes(store.get_user("ada").reader)
    finally:
        ada.context.close()
        evil.shutdown()


def test_a_readers_not_theirs_is_their_own_and_an_admins_is_shared_and_audited(
    browser: Any, served: str, library: str
) -> None:
    """Issue 31: "not theirs" by a reader hides the paper from their feed alone; whether a
    paper is a scholar's is an admin's decision, for everyone, in the audit log."""
    with open_store(library) as store:
        mara = store.find_scholar("Mara Lindqvist")
    papers = f"{served}/scholar/{mara}?tab=papers"
    hidden, rejected = "2511.10268", "2510.03172"
    ada = signed_in(browser, served, "ada")
    bob = signed_in(browser, served, "bob")
    try:
        bob.goto(f"{served}/scholar/{mara}")
        bob.get_by_role("button", name="Follow", exact=True).click()
        bob.goto(papers)
        assert (
            bob.get_by_role(
                "button", name=f"Reject {hidden}: not by Mara Lindqvist, for everyone"
            ).count()
            == 0
        )
        assert "decided for every reader, by an admin" in main_text(bob)
        bob.get_by_role("button", name=f"Hide {hidden} from my feed").click()
        bob.wait_for_url(papers + "*")
        assert "hidden from your feed" in bob.locator("article", has_text="Stable Are").inner_text()
        # A crafted "reject" from bob's page (his own form token) is refused.
        with bob.expect_response(f"{served}/scholars/manage") as answer:
            bob.evaluate("""() => { const b = document.querySelector(
                'button[aria-label="Hide 2510.03172 from my feed"]');
                b.value = "reject"; b.click(); }""")
        assert answer.value.status == 403
        bob.wait_for_url(f"{served}/scholars/manage")
        assert "decided for every reader, by an admin" in main_text(bob)
        with open_store(library) as store:
            assert store.decisions(mara) == {}

        def feed(page: Any) -> str:
            page.goto(served + "/")
            return main_text(page)

        assert "How Stable Are LLM Leaderboards" not in feed(bob)
        mine = feed(ada)  # bob's click changed nothing of ada's feed
        assert "How Stable Are LLM Leaderboards" in mine
        story = ada.locator("main article", has_text="How Stable Are LLM Leaderboards")
        assert "authored by Mara Lindqvist" in story.inner_text()

        # ada's "not theirs" is for everyone: bob's page says so and by whom, the log too.
        ada.goto(papers)
        assert "Whether a paper is" not in main_text(ada)
        ada.get_by_role(
            "button", name=f"Reject {rejected}: not by Mara Lindqvist, for everyone"
        ).click()
        ada.wait_for_url(papers + "*")
        bob.goto(papers)
        shot(bob, "accounts-bob-shared-decision")
        assert "rejected for everyone, by ada" in main_text(bob)
        assert bob.get_by_role("button", name=f"Undo rejecting {rejected}").count() == 0
        ada.goto(served + "/admin")
        row = ada.locator("main tr", has_text="attribution.reject").inner_text()
        assert "ada" in row and rejected in row
        with open_store(library) as store:
            assert store.decisions(mara) == {rejected: "reject"}
            assert store.deciders(mara) == {rejected: "ada"}
            assert [(e.actor, e.action, e.target) for e in store.audit_log()] == [
                ("ada", "attribution.reject", f"#{mara} {rejected}")
            ]
    finally:
        ada.context.close()
        bob.context.close()
