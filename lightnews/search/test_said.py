"""Search of what scholars said: real posts, threads, lab-blog articles and notes, both backends."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import pytest

from conftest import SHARED, new_pg_database
from lightnews.ingest.replay import ingest_bytes
from lightnews.model import Item, QueryTerm, SearchFilters
from lightnews.search import MAX_TERMS, parse_query, search_papers
from lightnews.search.said import near, snippet
from lightnews.settings import Settings
from lightnews.store import SQLiteStore, Store

NOW = "2026-01-01T00:00:00Z"
PAGES = [
    ("feed", "feeds/lab-blogs/feed_mistral_news.xml"),
    ("feed", "feeds/lab-blogs/feed_thinkingmachines.xml"),
    ("bluesky", "seed-pages/bluesky/getAuthorFeed.mkirchhof.json"),
    ("notes", "seed-pages/notes/iclr2025-notes.html"),
    ("arxiv-api", "arxiv/api-2026"),  # records of papers: never items of this search
]


def lexical() -> Settings:
    return Settings(environ={}).with_overrides(semantic="off", resolve_online=False)


@pytest.fixture(scope="module", params=["sqlite", "postgresql"])
def said(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory, worker_id: str
) -> Iterator[Store]:
    """Real lab-blog feeds, the seed profile's posts and notes page, and arXiv listings."""
    if not SHARED.is_dir():
        pytest.skip("../shared/fixtures is not present beside this clone (real recordings)")
    drop = None
    store: Store
    if request.param == "sqlite":
        store = SQLiteStore(tmp_path_factory.mktemp("said") / "l.db")
    else:
        from lightnews.store.postgres import PostgresStore

        url, drop = new_pg_database(request.getfixturevalue("pg_server"), worker_id)
        store = PostgresStore(url, pool_size=2)
    for kind, name in PAGES:
        path = SHARED / name
        if path.is_dir():  # one recorded API answer with entries is enough
            path = next(p for p in sorted(path.iterdir()) if b"<entry>" in p.read_bytes())
            body = json.loads(path.read_text())["body"].encode("latin-1")
        else:
            body = path.read_bytes()
        assert ingest_bytes(store, kind, f"test:{name}", body, lexical()).ok, name
    yield store
    store.close()
    if drop:
        drop()


def test_kv_cache_finds_the_lab_articles_that_discuss_it(said: Store) -> None:
    found = search_papers(said, "KV cache", settings=lexical(), items=True)
    titles = {h.title: h for h in found.items}
    assert "Defeating Nondeterminism in LLM Inference" in titles  # Thinking Machines
    assert any(t.startswith("Heaps do lie") for t in titles)  # Mistral's vLLM memory leak
    hit = titles["Defeating Nondeterminism in LLM Inference"]
    assert hit.kind == "article" and hit.link == f"/item/{hit.item_id}"
    assert hit.url and hit.url.startswith("https://thinkingmachines.ai/")
    assert "KV cache" in hit.snippet and len(hit.snippet) < 300
    assert said.get_item(hit.item_id).title == hit.title  # the link leads to it
    assert hit.to_json()["kind"] == "article" and hit.to_json()["link"] == hit.link


def test_a_thread_is_one_hit_that_says_it_is_a_thread(said: Store) -> None:
    # "memory" is in seven posts of the seed's ten-post self-thread on parametric memories.
    found = search_papers(said, "memory bank", settings=lexical(), items=True).items
    threads = [h for h in found if h.kind == "thread"]
    assert len(threads) == 1 and threads[0].thread_posts >= 9
    assert threads[0].source_kind == "bluesky" and "memory bank" in threads[0].snippet.lower()
    assert threads[0].url and threads[0].url.startswith("https://bsky.app/profile/")
    lone = search_papers(said, '"penal discussions"', settings=lexical(), items=True).items
    assert [h.kind for h in lone] == ["post"] and lone[0].thread_posts == 1


def test_a_thread_is_searched_as_one_text(said: Store) -> None:
    # "SwiGLU" is in post 3 of the seed's thread on memories, "DCLM" in post 6: no post
    # holds both, the thread does.
    assert not [m for m in said.search_items(parse_query("SwiGLU DCLM"), 50)]
    found = search_papers(said, "SwiGLU DCLM", settings=lexical(), items=True).items
    assert [h.kind for h in found] == ["thread"] and found[0].thread_posts >= 9
    assert not search_papers(said, "SwiGLU zzzxqy", settings=lexical(), items=True).items


def test_notes_are_found_and_nonsense_finds_nothing(said: Store) -> None:
    notes = search_papers(said, "zero computation experts", settings=lexical(), items=True).items
    assert notes[0].kind == "note" and notes[0].source_kind == "notes"
    assert notes[0].title == "ICLR2025 Jin: MOE++ zero computation experts"
    # The notes page gives no date: the hit says its date is when the library saw it.
    assert not notes[0].dated and notes[0].published and notes[0].to_json()["dated"] is False
    articles = search_papers(said, "KV cache", settings=lexical(), items=True).items
    assert articles and all(h.dated for h in articles)
    for nonsense in ("zzzxqy", "banana bread recipe"):
        assert search_papers(said, nonsense, settings=lexical(), items=True).items == []


def test_records_of_papers_are_not_items_of_this_search(said: Store) -> None:
    paper = said.recent_papers(1)[0]  # an arXiv listing's record holds its abstract
    words = " ".join(paper.title.split()[:6])
    found = search_papers(said, words, settings=lexical(), items=True)
    assert paper.arxiv_id in [h.arxiv_id for h in found]
    assert all(h.kind != "paper" for h in found.items)
    assert all(h.source_kind in ("feed", "bluesky", "notes") for h in found.items)


def test_the_filters_that_apply_to_items(said: Store) -> None:
    def kinds(**filters: object) -> set[str]:
        hits = search_papers(
            said,
            "model",
            settings=lexical(),
            items=True,
            filters=SearchFilters(**filters),  # type: ignore[arg-type]
        )
        return {h.source_kind for h in hits.items}

    assert kinds() >= {"feed", "bluesky"}
    assert kinds(source_kind="bluesky") == {"bluesky"}
    assert kinds(source_kind="arxiv-api") == set()
    assert kinds(subject="cs.LG") == set()  # a subject is a paper's
    everything = search_papers(said, "model", settings=lexical(), items=True).items
    since = min(h.published or "" for h in everything)[:10]
    later = search_papers(
        said, "model", settings=lexical(), items=True, filters=SearchFilters(since="2026-06-01")
    ).items
    assert all((h.published or "") >= "2026-06-01" for h in later)
    assert len(later) < len(everything) and since < "2026-06-01"
    scholar = said.create_scholar("Michael Kirchhof", NOW)
    assert kinds(scholar_id=scholar) == set()  # no identity yet
    said.add_identity(scholar, "bluesky-did", _seed_did())
    assert kinds(scholar_id=scholar) == {"bluesky"}


def _seed_did() -> str:
    """The account that posted the seed feed (its id is made up in the fixture)."""
    feed = json.loads((SHARED / PAGES[2][1]).read_text())["feed"]
    return str(next(e["post"]["author"]["did"] for e in feed if "reason" not in e))


def test_the_index_follows_an_edited_item(said: Store) -> None:
    source = said.add_source("feed", "test:edited", now=NOW)[0].id
    item = Item(
        key="edit-1",
        kind="article",
        title="Speculative decoding notes",
        text="We measured a quokka-shaped speedup.",
        published=NOW,
    )
    said.save_items(source, [item], NOW)
    assert [h.title for h in search_papers(said, "quokka", settings=lexical(), items=True).items]
    item.text = "We measured a wombat-shaped speedup."
    said.save_items(source, [item], NOW)
    assert search_papers(said, "quokka", settings=lexical(), items=True).items == []
    assert len(search_papers(said, "wombat", settings=lexical(), items=True).items) == 1
    said.remove_source(source)
    assert search_papers(said, "wombat", settings=lexical(), items=True).items == []
    if said.sql.name == "sqlite":  # type: ignore[attr-defined]
        said.db.execute("INSERT INTO items_fts(items_fts) VALUES ('integrity-check')")  # type: ignore[attr-defined]
    # Every word of every record of a paper finds no item: they are not in the index.
    records = said.db.execute("SELECT title FROM items WHERE kind = 'paper'").fetchall()  # type: ignore[attr-defined]
    assert records
    for (title,) in records:
        terms = [QueryTerm(w) for w in title.split()[:4]]
        assert {m.kind for m in said.search_items(terms, 50)} <= {"post", "article", "note"}


def test_the_search_bounds_apply_to_items(said: Store) -> None:
    words = " ".join(f"word{n}" for n in range(MAX_TERMS + 1))
    narrowed = search_papers(said, words, settings=lexical(), items=True)
    assert narrowed.note
    assert f"first {MAX_TERMS} of {MAX_TERMS + 1} different terms" in narrowed.note


def test_snippet_shows_where_the_words_are() -> None:
    text = "Intro. " * 100 + "Here the KV caches are shared between requests. " + "Outro. " * 100
    cut = snippet(text, [QueryTerm("KV"), QueryTerm("cache")], width=80)
    assert "KV caches" in cut and cut.startswith("…") and cut.endswith("…") and len(cut) <= 82
    assert snippet("short text", [QueryTerm("x")]) == "short text"
    assert snippet("a " * 300, [QueryTerm("zzz")]).startswith("a a")


def test_words_of_a_query_must_stand_together_in_an_item() -> None:
    terms = [QueryTerm("recommender"), QueryTerm("systems")]
    apart = "Our recommender is new. " + "Filler words here. " * 40 + "Other systems exist."
    assert not near(apart, terms)
    assert near("We build recommender systems for news.", terms)
    assert near("Systems that recommend: a recommender study", terms)  # any order, stems
    assert near(apart, [QueryTerm("recommender")])  # one word: nothing to hold together
    assert near("caching keys and values", [QueryTerm("cache"), QueryTerm("values")])
    assert near("tokenizers are free", [QueryTerm("tokeniz", prefix=True), QueryTerm("free")])
    assert not near("cache " + "x " * 200 + "value", [QueryTerm("cache"), QueryTerm("value")])


def test_a_long_article_that_holds_the_words_apart_is_not_a_hit(said: Store) -> None:
    terms = parse_query("recommender systems")
    matched = {m.item_id for m in said.search_items(terms, 100)}  # every word somewhere
    apart = {
        i for i in matched if not near(said.get_item(i).title + "\n" + said.get_item(i).text, terms)
    }
    assert apart  # real articles that say "recommend" and "systems" far apart
    found = {
        h.item_id
        for h in search_papers(said, "recommender systems", settings=lexical(), items=True).items
    }
    assert found <= matched - apart


def test_migration_0013_keeps_what_was_said_of_a_populated_library(tmp_path: Path) -> None:
    """A library made before 0013 had records of papers in its item index; after, only
    posts, articles and notes, and the index agrees with its rows."""
    db = tmp_path / "old.db"
    conn = sqlite3.connect(db)
    for number, _, script in SQLiteStore._migrations():
        if number < 13:
            conn.executescript(script + f"\nPRAGMA user_version = {number};")
    conn.execute("INSERT INTO sources (kind, address, created_at) VALUES ('feed', 'f', 'x')")
    for n, (kind, text) in enumerate(
        [
            ("paper", "an abstract about wombats"),
            ("post", "a post about wombats"),
            ("article", "an article about quokkas"),
        ]
    ):
        conn.execute(
            "INSERT INTO items (source_id, key, kind, text, content_hash, first_seen, modified) "
            "VALUES (1, ?, ?, ?, 'h', 'x', 'x')",
            (f"k{n}", kind, text),
        )
    conn.commit()
    found = conn.execute("SELECT count(*) FROM items_fts WHERE items_fts MATCH 'wombats'")
    assert found.fetchone()[0] == 2  # the paper's record too, before
    conn.close()
    with SQLiteStore(db) as store:
        assert [m.kind for m in store.search_items([QueryTerm("wombats")], 10)] == ["post"]
        assert [m.kind for m in store.search_items([QueryTerm("quokkas")], 10)] == ["article"]
        store.db.execute("INSERT INTO items_fts(items_fts) VALUES ('integrity-check')")
