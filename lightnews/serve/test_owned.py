"""What the reader owns, on the web: saved list and its exports, scholars, decisions, notes."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from starlette.testclient import TestClient

from lightnews.serve.app import create_app
from lightnews.serve.test_web import same_site
from lightnews.settings import Settings


@pytest.fixture(scope="module")
def client(demo_library: str) -> Iterator[TestClient]:
    app = create_app(demo_library, Settings(environ={}).with_overrides(resolve_online=False))
    with TestClient(app, base_url="http://localhost") as test_client:
        same_site(test_client)
        yield test_client


def test_the_saved_list_and_its_exports(client: TestClient) -> None:
    assert "Nothing saved yet" in client.get("/saved").text
    for key in ("2511.17015", "2511.18342"):
        assert client.post("/mark", data={"story": key, "action": "save"}).status_code == 200
    html = client.get("/saved").text
    assert "2 saved" in html
    titles = re.findall(r'<h2 id="t-[^"]+"><a href="/paper/([^"]+)">', html)
    assert titles == ["2511.18342", "2511.17015"]  # the most recently saved first
    assert 'value="unsave" aria-pressed="true"' in html
    bib = client.get("/saved?format=bibtex")
    assert bib.headers["content-type"].startswith("application/x-bibtex")
    assert bib.text.count("@misc{") == 2 and "eprint = {2511.17015}" in bib.text
    data = client.get("/saved?format=json").json()
    assert [c["arxiv_id"] for c in data["saved"]] == ["2511.18342", "2511.17015"]
    assert client.get("/api/saved").json() == data
    assert '<link rel="alternate" type="application/atom+xml"' in html
    client.post("/mark", data={"story": "2511.17015", "action": "unsave"})
    assert [c["arxiv_id"] for c in client.get("/api/saved").json()["saved"]] == ["2511.18342"]


def test_scholars_list_unfollow_and_mute(client: TestClient) -> None:
    html = client.get("/scholars").text
    assert (
        "Tobias Achterberg-Reyes" in html
        and 'aria-label="Unfollow Tobias Achterberg-Reyes"' in html
    )
    tobias = next(s for s in client.get("/api/scholars").json() if s["name"].startswith("Tobias"))
    client.post("/scholars/manage", data={"scholar": tobias["id"], "action": "unfollow"})
    after = next(s for s in client.get("/api/scholars").json() if s["id"] == tobias["id"])
    assert after["followed"] is False
    assert 'aria-label="Follow Tobias Achterberg-Reyes"' in client.get("/scholars").text
    client.post("/scholars/manage", data={"scholar": tobias["id"], "action": "follow"})
    client.post("/mark", data={"kind": "scholar", "value": str(tobias["id"]), "action": "mute"})
    assert 'aria-label="Unmute Tobias Achterberg-Reyes"' in client.get("/scholars").text
    client.post("/mark", data={"kind": "scholar", "value": str(tobias["id"]), "action": "unmute"})
    bad = client.post("/scholars/manage", data={"scholar": "x", "action": "unfollow"})
    assert bad.status_code == 400 and "scholar id" in bad.text
    assert (
        client.post("/scholars/manage", data={"scholar": "999", "action": "follow"}).status_code
        == 404
    )


def test_confirm_and_reject_on_the_papers_tab_survive_reattribution(client: TestClient) -> None:
    from lightnews.link.attribution import attribute_scholar

    store = client.app.state.store  # type: ignore[attr-defined]
    mara = store.find_scholar("Mara Lindqvist")
    papers = client.get(f"/api/scholar/{mara}?tab=papers").json()["papers"]
    first, second = papers[0]["arxiv_id"], papers[1]["arxiv_id"]
    html = client.get(f"/scholar/{mara}?tab=papers").text
    assert f'aria-label="Confirm {first} is by Mara Lindqvist"' in html
    client.post("/scholars/manage", data={"scholar": mara, "paper": first, "action": "confirm"})
    client.post("/scholars/manage", data={"scholar": mara, "paper": second, "action": "reject"})
    attribute_scholar(store, mara)  # as a re-ingest does
    html = client.get(f"/scholar/{mara}?tab=papers").text
    assert "confirmed for everyone, by local reader" in html
    assert f'aria-label="Undo rejecting {second}"' in html
    listed = [p["arxiv_id"] for p in client.get(f"/api/scholar/{mara}?tab=papers").json()["papers"]]
    assert first in listed and second not in listed
    assert store.decisions(mara) == {first: "confirm", second: "reject"}
    client.post("/scholars/manage", data={"scholar": mara, "paper": second, "action": "undecide"})
    client.post("/scholars/manage", data={"scholar": mara, "paper": first, "action": "undecide"})
    assert store.decisions(mara) == {}
    bad = client.post(
        "/scholars/manage", data={"scholar": mara, "paper": "nope", "action": "reject"}
    )
    assert bad.status_code == 400


def test_notes_index_and_feed_links(client: TestClient) -> None:
    html = client.get("/notes").text
    link = re.search(r'<a href="(/notes/\d+)">NeurIPS 2025 Paper Notes</a>', html)
    assert link and "papers reviewed" in client.get(link.group(1)).text
    assert client.get("/api/notes").json()[0]["page"] == link.group(1)
    for path in ("/", "/scholar/maralindqvist.bsky.social", "/search?q=attention", "/saved"):
        page = client.get(path).text
        assert 'rel="alternate" type="application/feed+json"' in page, path
        assert "format=atom" in page, path
    atom = client.get("/scholar/maralindqvist.bsky.social?format=atom")
    assert atom.headers["content-type"].startswith("application/atom+xml")


def test_an_arxiv_only_scholar_opens_on_papers(client: TestClient) -> None:
    html = client.get("/scholar/Tobias").text
    assert 'href="/scholar/2?tab=papers" aria-current="page"' in html or re.search(
        r'\?tab=papers" aria-current="page"', html
    )
    assert "Publications and source records attributed to Tobias" in html


def test_a_long_thread_folds_after_three_posts_and_links_appear_once(client: TestClient) -> None:
    html = client.get("/scholar/maralindqvist.bsky.social").text
    thread = html[html.index('aria-label="Thread of 5 posts"') :]
    thread = thread[: thread.index("</article>")]
    shown, folded = thread.split('<details class="more"><summary>Show all 5 posts</summary>')
    assert shown.count('class="thread-post"') == 3 and folded.count('class="thread-post"') == 2
    assert thread.count("@maralindqvist.bsky.social") == 1  # name and handle once per thread
    # The author numbers her posts ("🧵1/5", "2/5"): no second number of ours beside them.
    assert '<p class="meta">1/5</p>' not in thread and '<p class="meta">2/5</p>' not in thread
    # A link with a card is shown once, with its card.
    repost = html[html.index("originally by") :]
    repost = repost[: repost.index("</article>")]
    assert "Priyanka Deshmane" in repost
    assert repost.count('href="https://arxiv.org/abs/2511.10268"') == 1


def test_daily_page_authors_badges_picker_and_unknown_counts(client: TestClient) -> None:
    import json

    from lightnews.demo import snapshot_path
    from lightnews.ingest.replay import ingest_bytes

    html = client.get("/daily").text
    entry = html[html.index('<article class="daily-entry">') :]
    entry = entry[: entry.index("</article>")]
    assert re.search(r'<a class="followed" href="/scholar/\d+">Mara Lindqvist</a>', entry)
    assert "Wen-Li Hsiao" in entry and "<strong>87</strong> upvotes · 6 comments" in entry
    assert 'type="date" value="2025-11-27"' in html
    picked = client.get("/daily", params={"day": "2025-11-27"}, follow_redirects=False)
    assert picked.status_code == 303 and picked.headers["location"] == "/daily/2025-11-27"
    assert client.get("/daily", params={"day": "2025-13-01"}).status_code == 400
    # A listing whose counts the source did not give says so (it used to say 0).
    entries = json.loads(snapshot_path("hf-daily-2025-11-27.json").read_bytes())[:1]
    for item in entries:
        item.pop("upvotes", None), item.pop("numComments", None)
        item["paper"].pop("upvotes", None)
    store = client.app.state.store  # type: ignore[attr-defined]
    settings = Settings(environ={}).with_overrides(resolve_online=False)
    ingest_bytes(store, "hf-daily", "demo:hf-unknown.json", json.dumps(entries).encode(), settings)
    html = client.get("/daily/2025-11-27").text
    assert "upvotes unknown · comments unknown" in html and "0 upvotes" not in html
