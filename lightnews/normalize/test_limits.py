"""Size caps: a 10 MB title is cut to its cap, and the cut is recorded with the item."""

from __future__ import annotations

from collections.abc import Callable

from lightnews.ingest.replay import ingest_bytes
from lightnews.model import Account, Author, Batch, Item, LinkCard, Paper, PostDetails, Problem
from lightnews.normalize.limits import Limits, cap_batch
from lightnews.settings import Settings
from lightnews.store import CommonStore

SMALL = Limits(title=10, text=20, html=30, url=25, payload=40)


def test_every_field_is_cut_to_its_cap_and_each_cut_named() -> None:
    item = Item(
        key="k1",
        kind="article",
        title="t" * 50,
        author="a" * 11,
        text="x" * 21,
        html="<p>" + "h" * 40 + "</p>",
        url="https://example.org/" + "u" * 10,
        links=["https://example.org/", "https://example.org/" + "l" * 10],
        tags=["g" * 12],
        payload="p" * 41,
        post=PostDetails("at://x", card=LinkCard("https://example.org/", description="d" * 21)),
        code_links=["https://github.com/a/b", "https://github.com/" + "c" * 10],
    )
    paper = Paper("2501.00001", title="T" * 11, abstract="A" * 21, authors=[Author("N" * 11)])
    account = Account("bluesky", "did:plc:x", name="n" * 11, avatar="https://x.org/" + "a" * 20)
    batch = Batch(items=[item], papers=[paper], accounts=[account], title="f" * 11)
    cap_batch(batch, SMALL)
    assert (len(item.title), len(item.author or ""), len(item.text), len(item.payload)) == (
        10,
        10,
        20,
        40,
    )
    assert len(item.html) <= 30 + len("</p>") and item.html.endswith("</p>")  # closed again
    assert item.url is None and item.links == ["https://example.org/"]  # too long: dropped
    assert item.tags == ["g" * 10] and item.code_links == ["https://github.com/a/b"]
    assert item.post is not None and item.post.card is not None
    assert item.post.card.description == "d" * 20 and item.post.card.uri == "https://example.org/"
    assert (len(paper.title), len(paper.abstract), paper.authors[0].name) == (10, 20, "N" * 10)
    assert len(account.name) == 10 and account.avatar is None and batch.title == "f" * 10
    where = {(p.key, p.field) for p in batch.problems}
    assert {("k1", "title"), ("k1", "url"), ("2501.00001", "abstract")} <= where
    assert ("did:plc:x", "avatar") in where and (None, "feed title") in where
    assert ("k1", "post.card.description") in where and ("k1", "code_links") in where
    assert "k1 title: cut to 10 characters (was 50)" in {str(p) for p in batch.problems}


def test_nothing_within_the_caps_changes() -> None:
    item = Item(key="k", kind="article", title="short", url="https://example.org/")
    batch = Batch(items=[item])
    cap_batch(batch, Limits())
    assert item.title == "short" and item.url == "https://example.org/" and not batch.problems


def test_limits_come_from_the_settings() -> None:
    settings = Settings(environ={"LIGHTNEWS_MAX_TITLE_CHARS": "77"})
    assert Limits.from_settings(settings).title == 77
    assert Limits.from_settings(Settings(environ={})) == Limits()


def test_a_ten_megabyte_title_is_not_stored_whole(store: CommonStore, settings: Settings) -> None:
    huge = "A" * 10_000_000
    feed = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Blog</title>'
        f"<item><guid>post-1</guid><title>{huge}</title><link>https://blog.example/1</link>"
        "<description>Fine text.</description></item></channel></rss>"
    ).encode()
    report = ingest_bytes(store, "feed", "https://blog.example/feed", feed, settings)
    ((title, text, payload),) = store.db.execute("SELECT title, text, payload FROM items")
    assert len(title) == 1000 and text == "Fine text." and len(payload) <= 1_000_000
    assert report.error is not None and "post-1 title: cut to 1,000 characters" in report.error
    source = store.get_source(report.source_id)
    assert source.last_error is not None and "post-1 title" in source.last_error


def _full_paper() -> Paper:
    """Every field of a paper at its cap (SMALL), so a character more would be cut."""
    return Paper(
        "2501.00002",
        title="T" * 10,
        abstract="A" * 20,
        authors=[Author("N" * 10, keyname="K" * 10, forenames="F" * 10, affiliations=["a" * 10])],
        categories=["c" * 10],
        doi="d" * 10,
        journal_ref="j" * 10,
        comments="m" * 20,
        license="https://x.org/" + "l" * 11,
        submitter="s" * 10,
    )


def test_a_paper_at_its_caps_is_left_alone_and_one_character_more_is_cut() -> None:
    """The quick check that lets most papers through must not let a long field by:
    each field one character over its cap, alone, is still cut and named."""
    from lightnews.normalize.limits import cap_paper

    problems: list[Problem] = []
    paper = _full_paper()
    cap_paper(paper, SMALL, problems)
    assert paper == _full_paper() and problems == []
    longer: dict[str, Callable[[Paper], object]] = {
        "title": lambda p: setattr(p, "title", p.title + "T"),
        "abstract": lambda p: setattr(p, "abstract", p.abstract + "A"),
        "authors": lambda p: setattr(p.authors[0], "keyname", "K" * 11),
        "affiliations": lambda p: p.authors[0].affiliations.append("b" * 11),
        "categories": lambda p: p.categories.append("e" * 11),
        "doi": lambda p: setattr(p, "doi", "d" * 11),
        "journal_ref": lambda p: setattr(p, "journal_ref", "j" * 11),
        "comments": lambda p: setattr(p, "comments", "m" * 21),
        "license": lambda p: setattr(p, "license", "https://x.org/" + "l" * 12),
        "submitter": lambda p: setattr(p, "submitter", "s" * 11),
    }
    for name, lengthen in longer.items():
        paper, problems = _full_paper(), []
        lengthen(paper)
        cap_paper(paper, SMALL, problems)
        assert [p.field for p in problems] == [name], name
